/**
 * The cleaner's memory sizing (Kafka's log.cleaner.dedupe.buffer.size and io.buffer.size, here one
 * bound, `--max-memory`): the bound is split between I/O buffers sized for the largest batch in
 * the range and the offset map (offset-map.ts), which gets what remains — no more than the dirty
 * range could fill, unless sized explicitly. When the bound has room left after that, the map
 * also marks the dirty range's latest offsets (two bits per offset, offset-map.ts), sparing the
 * recopy a second hash of every dirty key, and — in what is left after that — records runs of
 * batches the recopy can skip unread (dead-runs.ts, 48 bytes per run, at most MAX_DEAD_RUNS).
 */
import { InvalidArgumentError } from '../errors.js';
import { RECORD_BATCH_OVERHEAD } from '../format/record-batch.js';
import { READ_CHUNK_BYTES } from './batch-reader.js';
import { DEAD_RUN_BYTES, DeadRuns } from './dead-runs.js';
import { OffsetMap, OFFSET_MAP_ENTRY_BYTES, DEFAULT_LOAD_FACTOR, markBytesFor, MAX_MARKED_OFFSETS } from './offset-map.js';

export const DEFAULT_CLEANER_MEMORY_BYTES = 128 * 1024 * 1024;
/**
 * Fixed allowance for JavaScript objects and garbage not yet collected: V8's young generation
 * (semi-spaces of up to 16 MiB by default) fills with short-lived per-batch objects before a
 * scavenge, so measured heap can run this far above what the cleaner holds.
 */
const FIXED_OVERHEAD_BYTES = 16 * 1024 * 1024;
const MIN_OFFSET_MAP_BYTES = 2 * OFFSET_MAP_ENTRY_BYTES;
const MAX_OFFSET_MAP_BYTES = 0x7fffffff * OFFSET_MAP_ENTRY_BYTES;
/** Runs of skippable batches recorded at most (3 MiB; each run up to 64 KiB of batches). */
const MAX_DEAD_RUNS = 65536;

/** What sizing needs to know of each segment in the range (from the header scan). */
export interface SegmentSizing {
  /** Records in non-control batches at or after the first dirty offset. */
  dirtyRecords: number;
  maxEntryBytes: number;
  compressed: boolean;
}

export interface CleanerMemory {
  map: OffsetMap;
  /** Runs of batches the recopy may skip (only with the map's marks). */
  deadRuns: DeadRuns | undefined;
  /** Bound on one batch's decompressed records (0 when nothing is compressed). */
  maxDecompressedBytes: number;
  /** Offset map plus reserved buffers. */
  accountedBytes: number;
}

/** Splits the memory bound between I/O buffers and the offset map. */
export function sizeCleanerMemory(
  segments: Iterable<SegmentSizing>,
  sizes: { maxMemoryBytes?: number; offsetMapBytes?: number; headerWindowBytes: number; dirtyOffsets?: number },
): CleanerMemory {
  const bound = sizes.maxMemoryBytes ?? DEFAULT_CLEANER_MEMORY_BYTES;
  const { offsetMapBytes } = sizes;
  if (offsetMapBytes !== undefined && !(offsetMapBytes >= MIN_OFFSET_MAP_BYTES && offsetMapBytes <= MAX_OFFSET_MAP_BYTES)) {
    throw new InvalidArgumentError(['offsetMapBytes'], `offsetMapBytes must be from ${MIN_OFFSET_MAP_BYTES} to ${MAX_OFFSET_MAP_BYTES} (${OFFSET_MAP_ENTRY_BYTES} bytes per key slot, at least 2 slots), not ${offsetMapBytes}`);
  }
  let maxEntry = RECORD_BATCH_OVERHEAD;
  let compressed = false;
  let dirtyRecords = 0;
  for (const f of segments) {
    maxEntry = Math.max(maxEntry, f.maxEntryBytes);
    compressed ||= f.compressed;
    dirtyRecords += f.dirtyRecords;
  }
  // Read buffer (a chunk plus one entry), write buffer (the same), a rebuilt batch, and — with
  // compression — the decompressed records of one batch and their recompressed form.
  const maxDecompressedBytes = compressed ? Math.max(8 * maxEntry, Math.min(64 << 20, Math.floor(bound / 8))) : 0;
  const reserve = 2 * (READ_CHUNK_BYTES + maxEntry) + sizes.headerWindowBytes + 2 * maxEntry + 2 * maxDecompressedBytes + FIXED_OVERHEAD_BYTES;
  let mapBytes: number;
  if (offsetMapBytes !== undefined) mapBytes = offsetMapBytes;
  else {
    mapBytes = bound - reserve;
    // A map larger than the dirty range could ever fill is wasted memory.
    const useful = (Math.ceil((dirtyRecords + 1) / DEFAULT_LOAD_FACTOR) + 2) * OFFSET_MAP_ENTRY_BYTES;
    mapBytes = Math.min(mapBytes, Math.max(useful, 64 * OFFSET_MAP_ENTRY_BYTES));
  }
  if (mapBytes < MIN_OFFSET_MAP_BYTES || (offsetMapBytes === undefined && reserve + mapBytes > bound)) {
    throw new InvalidArgumentError(
      ['maxMemoryBytes'],
      `maxMemoryBytes ${bound} is too small: I/O buffers for batches of up to ${maxEntry} bytes need ${reserve} bytes, leaving no room for the offset map`,
    );
  }
  // Marks for the dirty range's offsets (firstUncleanable − firstDirty), in what the bound has left.
  const dirtyOffsets = sizes.dirtyOffsets ?? 0;
  const marks = dirtyOffsets > 0 && dirtyOffsets <= MAX_MARKED_OFFSETS && reserve + mapBytes + markBytesFor(dirtyOffsets) <= bound ? dirtyOffsets : 0;
  const map = new OffsetMap(mapBytes, DEFAULT_LOAD_FACTOR, marks);
  const left = bound - reserve - map.memoryBytes - map.markBytes;
  const maxRuns = marks > 0 ? Math.min(MAX_DEAD_RUNS, dirtyRecords, Math.floor(left / DEAD_RUN_BYTES)) : 0;
  const deadRuns = maxRuns > 0 ? new DeadRuns(maxRuns) : undefined;
  return { map, deadRuns, maxDecompressedBytes, accountedBytes: map.memoryBytes + map.markBytes + maxRuns * DEAD_RUN_BYTES + reserve };
}
