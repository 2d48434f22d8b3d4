/**
 * Open-time sanity checks of index files that the loader will not rebuild anyway (segments below
 * the recovery point, or every segment after a clean shutdown). A failed check means "rebuild this
 * segment's indexes"; it never fails the open.
 *
 * Kafka's own checks (kafka-format.md §6): length a multiple of the entry size, last offset ≥ base
 * offset, and for the `.txnindex` every lastOffset ≥ base. logtool adds what a torn or bit-flipped
 * file shows and costs one sequential read of the index: entries strictly increasing, positions
 * inside the `.log`, time-index offsets below the next segment's base, and nothing but zeros after the first
 * all-zero (padding) entry. Older brokers' files pass (see fact 8: time-index offsets only need
 * to be non-decreasing).
 *
 * Files are read in chunks of CHUNK_BYTES: memory stays bounded whatever the index size.
 */
import type { FileIO } from '../io.js';
import { OFFSET_INDEX_ENTRY_BYTES } from '../segment/offset-index.js';
import { TIME_INDEX_ENTRY_BYTES } from '../segment/time-index.js';
import { readInt64 } from '../format/record-batch.js';

export const TXN_INDEX_ENTRY_BYTES = 34;
const CHUNK_BYTES = 64 * 1024;

export interface IndexProblem {
  file: string;
  /** Byte position in the index file where the problem is. */
  position: number;
  reason: string;
}

export interface OffsetIndexLimits {
  baseOffset: number;
  /** Size of the segment's `.log`: every entry's position must be below it. */
  logSizeBytes: number;
  /** Base offset of the next segment: every entry's offset must be below it. */
  nextBaseOffset: number | undefined;
}

/**
 * Streams a file's whole entries to `visit` (entry bytes at buf[at, at + entrySize)). Stops early
 * when visit returns a problem. A trailing partial entry is reported by the caller's length check.
 */
export function forEachEntry(io: FileIO, file: string, entrySize: number, visit: (buf: Buffer, at: number, i: number) => IndexProblem | undefined): IndexProblem | undefined {
  const fd = io.open(file, 'r');
  try {
    const size = io.fstat(fd).size;
    const whole = Math.floor(size / entrySize);
    const buf = Buffer.allocUnsafe(Math.max(entrySize, Math.floor(CHUNK_BYTES / entrySize) * entrySize));
    let i = 0;
    while (i < whole) {
      const count = Math.min(buf.length / entrySize, whole - i);
      let got = 0;
      while (got < count * entrySize) {
        const n = io.read(fd, buf, got, count * entrySize - got, i * entrySize + got);
        if (n <= 0) break;
        got += n;
      }
      const entries = Math.floor(got / entrySize);
      for (let k = 0; k < entries; k++) {
        const p = visit(buf, k * entrySize, i + k);
        if (p) return p;
      }
      if (entries < count) return { file, position: (i + entries) * entrySize, reason: 'file shrank while being checked' };
      i += entries;
    }
    return undefined;
  } finally {
    io.close(fd);
  }
}

function isZero(buf: Buffer, at: number, n: number): boolean {
  for (let k = 0; k < n; k++) if (buf[at + k] !== 0) return false;
  return true;
}

function lengthProblem(io: FileIO, file: string, entrySize: number, what: string): IndexProblem | undefined {
  const size = io.stat(file)?.size ?? 0;
  if (size % entrySize !== 0) return { file, position: size - (size % entrySize), reason: `length ${size} is not a multiple of the ${entrySize}-byte ${what} entry` };
  return undefined;
}

/**
 * `.index`: relative offsets and positions strictly increasing, positions inside the `.log`. (An
 * offset above the next segment's base is not checked: a too-high key only makes lookups scan a
 * little further, and a log whose segments overlap would fail the check after every rebuild.)
 */
export function checkOffsetIndex(io: FileIO, file: string, limits: Omit<OffsetIndexLimits, 'nextBaseOffset'>): IndexProblem | undefined {
  const bad = lengthProblem(io, file, OFFSET_INDEX_ENTRY_BYTES, 'offset-index');
  if (bad) return bad;
  let prevRel = -1;
  let prevPos = -1;
  let padding = false;
  return forEachEntry(io, file, OFFSET_INDEX_ENTRY_BYTES, (buf, at, i) => {
    const position = i * OFFSET_INDEX_ENTRY_BYTES;
    const zero = isZero(buf, at, OFFSET_INDEX_ENTRY_BYTES);
    if (padding) return zero ? undefined : { file, position, reason: `entry ${i} follows zero padding (a hole in the index)` };
    if (zero) {
      padding = true;
      return undefined;
    }
    const rel = buf.readInt32BE(at);
    const pos = buf.readInt32BE(at + 4);
    const offset = limits.baseOffset + rel;
    if (rel < 0) return { file, position, reason: `entry ${i} has offset ${offset} below the segment base ${limits.baseOffset}` };
    if (rel <= prevRel) return { file, position, reason: `entry ${i} offset ${offset} does not increase (previous ${limits.baseOffset + prevRel})` };
    if (pos <= prevPos) return { file, position, reason: `entry ${i} position ${pos} does not increase (previous ${prevPos})` };
    if (pos >= limits.logSizeBytes) return { file, position, reason: `entry ${i} position ${pos} is past the end of the .log (${limits.logSizeBytes} bytes)` };
    prevRel = rel;
    prevPos = pos;
    return undefined;
  });
}

/**
 * `.timeindex`: timestamps and offsets non-decreasing, offsets inside the segment (a time lookup
 * turns the entry's offset into a position, so an offset past the segment would send it astray).
 */
export function checkTimeIndex(io: FileIO, file: string, limits: Omit<OffsetIndexLimits, 'logSizeBytes'>): IndexProblem | undefined {
  const bad = lengthProblem(io, file, TIME_INDEX_ENTRY_BYTES, 'time-index');
  if (bad) return bad;
  let prevTs = -Infinity;
  let prevRel = -1;
  let padding = false;
  return forEachEntry(io, file, TIME_INDEX_ENTRY_BYTES, (buf, at, i) => {
    const position = i * TIME_INDEX_ENTRY_BYTES;
    const zero = isZero(buf, at, TIME_INDEX_ENTRY_BYTES);
    if (padding) return zero ? undefined : { file, position, reason: `entry ${i} follows zero padding (a hole in the index)` };
    if (zero) {
      padding = true;
      return undefined;
    }
    const ts = readInt64(buf, at);
    const rel = buf.readInt32BE(at + 8);
    const offset = limits.baseOffset + rel;
    if (rel < 0) return { file, position, reason: `entry ${i} has offset ${offset} below the segment base ${limits.baseOffset}` };
    if (ts < prevTs) return { file, position, reason: `entry ${i} timestamp ${ts} decreases (previous ${prevTs})` };
    if (rel < prevRel) return { file, position, reason: `entry ${i} offset ${offset} decreases (previous ${limits.baseOffset + prevRel})` };
    if (limits.nextBaseOffset !== undefined && offset >= limits.nextBaseOffset) {
      return { file, position, reason: `entry ${i} offset ${offset} is not below the next segment's base offset ${limits.nextBaseOffset}` };
    }
    prevTs = ts;
    prevRel = rel;
    return undefined;
  });
}

/**
 * `.txnindex` (34-byte entries, not preallocated; a trailing partial entry is ignored as Kafka
 * does): version byte 0, firstOffset ≤ lastOffset, lastOffset ≥ base and increasing.
 */
export function checkTxnIndex(io: FileIO, file: string, baseOffset: number): IndexProblem | undefined {
  let prevLast = -Infinity;
  return forEachEntry(io, file, TXN_INDEX_ENTRY_BYTES, (buf, at, i) => {
    const position = i * TXN_INDEX_ENTRY_BYTES;
    const version = buf.readInt8(at);
    const first = readInt64(buf, at + 10);
    const last = readInt64(buf, at + 18);
    if (version !== 0) return { file, position, reason: `entry ${i} has version ${version}` };
    if (last < baseOffset) return { file, position, reason: `entry ${i} last offset ${last} is below the segment base ${baseOffset}` };
    if (first > last) return { file, position, reason: `entry ${i} first offset ${first} is above its last offset ${last}` };
    if (last <= prevLast) return { file, position, reason: `entry ${i} last offset ${last} does not increase (previous ${prevLast})` };
    prevLast = last;
    return undefined;
  });
}

export interface IndexFileProblem {
  file: string;
  /** Byte position in the index file, when the problem is in its content. */
  position?: number;
  reason: string;
}

/**
 * Kafka's open-time rules for a segment's index files (LogLoader.loadSegmentFiles,
 * LogSegment.sanityCheck), as a read-only check reports them: a missing `.index` makes Kafka
 * recover the segment and rebuild it; a missing `.timeindex` is recreated empty (recover rebuilds
 * it); a missing `.txnindex` means the segment has no aborted transactions (no problem); a
 * `.txnindex` that fails its sanity check makes Kafka recover the segment.
 */
export function indexFileProblems(io: FileIO, files: { index: string; timeIndex: string; txnIndex: string }, baseOffset: number): IndexFileProblem[] {
  const out: IndexFileProblem[] = [];
  if (!io.stat(files.index)) out.push({ file: files.index, reason: 'missing: Kafka recovers the segment and rebuilds it (so does recover)' });
  if (!io.stat(files.timeIndex)) out.push({ file: files.timeIndex, reason: 'missing: Kafka recreates it empty (recover rebuilds it)' });
  if (io.stat(files.txnIndex)) {
    const p = checkTxnIndex(io, files.txnIndex, baseOffset);
    if (p) out.push(p);
  }
  return out;
}

/**
 * Drops `.txnindex` entries whose aborted transaction ends at or after `nextOffset` (Kafka's
 * TransactionIndex.truncateTo, run when a segment is truncated). Returns the bytes removed.
 */
export function truncateTxnIndex(io: FileIO, file: string, nextOffset: number, dryRun: boolean): number {
  const size = io.stat(file)?.size;
  if (size === undefined) return 0;
  let keepBytes = size; // a trailing partial entry is left alone, as Kafka ignores it
  forEachEntry(io, file, TXN_INDEX_ENTRY_BYTES, (buf, at, i) => {
    if (readInt64(buf, at + 18) >= nextOffset) {
      keepBytes = i * TXN_INDEX_ENTRY_BYTES;
      return { file, position: keepBytes, reason: 'stop' };
    }
    return undefined;
  });
  if (keepBytes >= size || dryRun) return size - keepBytes;
  const fd = io.open(file, 'r+');
  try {
    io.truncate(fd, keepBytes);
    io.datasync(fd);
  } finally {
    io.close(fd);
  }
  return size - keepBytes;
}
