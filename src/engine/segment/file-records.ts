/**
 * Streams the log entries (v2 batches, or legacy v0/v1 messages) of a `.log` file through a
 * bounded buffer, by Kafka's FileLogInputStream rules (kafka-format.md §4): fewer than 17 bytes
 * left is the end; a size field below 14 is corruption; an entry running past the end of the file
 * is a partial write. Validation beyond that (CRC, offsets) is opt-in so that a plain read and a
 * recovery share one loop.
 *
 * With `zeroTailIsEnd`, preallocated space (zeros written ahead of a writer's position, segment.ts)
 * ends a file quietly: an entry size of 0 from which the rest of the file is all zeros (checked in
 * bounded reads) is the end, reported as `zeroTail`; a zero size followed by any non-zero byte remains corruption.
 *
 * Like Kafka's recovery, no size cap: an entry that fits in its file is valid if its CRC checks.
 * An entry larger than `maxBufferedEntryBytes` is not loaded: its CRC is computed over bounded
 * chunks and the entry is yielded with only its header in the buffer (`complete: false`);
 * `entryBytes` reads the whole of it for the consumer that needs its records.
 */
import type { FileIO } from '../io.js';
import { LogtoolError, assert } from '../errors.js';
import { crc32 } from '../format/crc32c.js';
import { crc32c } from '../format/crc32c.js';
import {
  HEADER_PROBE_BYTES,
  LOG_OVERHEAD,
  MIN_ENTRY_SIZE,
  readBatchHeader,
  readInt64,
  RECORD_BATCH_OVERHEAD,
  type BatchHeader,
} from '../format/record-batch.js';
import { ScanWindow, type FileSource } from './scan-window.js';
import { zeroBytes } from './zero-bytes.js';

/**
 * One entry of a `.log` file. Its bytes are `buf[bufPos, bufPos + size)` (only its header when not
 * `complete`: see entryBytes). The scanner never writes to a buffer again once it yielded an entry
 * from it, so the entry's bytes, and the keys and values decoded from them as views, stay valid
 * for as long as they are held (holding one keeps its whole buffer, up to chunkBytes, alive) —
 * except in a scan with `reuseBuffer`, where they are valid until the next entry is requested (with
 * `reuseBuffer: 'compressed'`, those of a compressed v2 batch: see ScanOptions.reuseBuffer).
 */
export interface LogEntry {
  /** Byte position of the entry in the file. */
  position: number;
  /** Total size in bytes, including the 12-byte offset and length prefix. */
  size: number;
  magic: number;
  /** v2 batch header; undefined for legacy entries. */
  header: BatchHeader | undefined;
  /** First offset (legacy: the entry offset, which for a compressed wrapper is its last inner offset). */
  baseOffset: number;
  lastOffset: number;
  /** Max timestamp (v2), the message timestamp (v1), or −1 (v0). */
  maxTimestamp: number;
  /** Compression codec id. */
  compression: number;
  buf: Buffer;
  bufPos: number;
  /** Whether buf holds the whole entry; false for one above maxBufferedEntryBytes (its header is there). */
  complete: boolean;
  /** Where the entry was read from (to load an incomplete one). */
  source: FileSource;
}

export type { FileSource } from './scan-window.js';

export type ScanEnd =
  /** zeroTail: the file ends in preallocated zeros from this position (not data, not damage). */
  | { kind: 'end'; zeroTail?: { position: number; bytes: number } }
  /** Bytes after the last whole entry that do not form an entry (torn write). */
  | { kind: 'partial'; position: number; bytes: number; reason: string }
  | { kind: 'corrupt'; position: number; reason: string };

export interface ScanOptions {
  io: FileIO;
  path: string;
  /** Byte position to start at (must be an entry boundary). */
  startPosition?: number;
  /** Stop before this position (default: file size at open). */
  endPosition?: number;
  /** Check each entry's CRC (CRC-32C for v2, CRC-32 for legacy). */
  verifyCrc?: boolean;
  /** Segment base offset: entries must lie in [base, base + 2^31 − 1] and offsets increase. */
  segmentBaseOffset?: number;
  /** Largest entry loaded into the scan buffer; a larger one is checked in chunks and yielded incomplete. */
  maxBufferedEntryBytes?: number;
  /** Read chunk size (bytes); the buffer grows only to hold one entry larger than this. */
  chunkBytes?: number;
  /** An already-open fd (not closed by the scanner). */
  fd?: number;
  /**
   * An all-zero tail is the end (`zeroTail`), not damage: a segment's preallocated space. Off for
   * Kafka's own view of a file (dump-log, fixtures), where zeros are an invalid entry.
   */
  zeroTailIsEnd?: boolean;
  /**
   * Entries whose last offset is below this are passed over by their header alone, as Kafka's
   * FileRecords.searchForOffsetWithSize does: not yielded, their CRC and offsets not checked (the
   * structural checks still apply), their bodies not read. A lookup's way to the entry holding an
   * offset from an index entry's position; `reachedOffset` tells whether it got there.
   */
  skipBelowOffset?: number;
  /**
   * With skipBelowOffset: where the batches wanted end (from the offset index: lookupSpan). Once
   * past the first entry, reads extend up to it, so the batch holding the offset comes in one read.
   */
  skipReadEnd?: number;
  /**
   * Only the entries' headers are read (Kafka's FileChannelRecordBatch before it loads a batch):
   * every entry is yielded incomplete, its body never read unless a consumer asks (entryBytes), so
   * a walk over batch headers (index checks, producer-state replay) reads a few KiB per entry.
   */
  headersOnly?: boolean;
  /** Or the file to read through (a segment's descriptor-cache handle; its size is endPosition, which is then required). */
  file?: FileSource;
  /**
   * One read buffer for the whole scan: an entry, and anything decoded from its bytes, is valid only
   * until the next one is requested (the buffer is refilled in place). For the engine's own walks
   * that keep nothing of an entry (verify, recovery, index rebuilds): no fresh chunk per read, no
   * chunks awaiting garbage collection. Off by default: entries handed to callers stay valid.
   * `'compressed'`: only after a compressed v2 batch, for a reader that keeps nothing of an entry
   * but its records (Log.read): those are views of the decompressed section, never of the entry's
   * bytes (recordsSection); any other entry's records are views of the buffer, never written again.
   */
  reuseBuffer?: boolean | 'compressed';
}

export const DEFAULT_CHUNK_BYTES = 1 << 20;
/** First read of a scan; random lookups rarely need more. */
const INITIAL_CHUNK_BYTES = 16 << 10;
/** Reads while passing over entries by their headers (skipBelowOffset): about one index interval. */
const SKIP_READ_BYTES = 4 << 10;
/** Default size above which an entry is not loaded whole by a scan: far above Kafka's max.message.bytes default (1 MiB). */
export const DEFAULT_MAX_BUFFERED_ENTRY_BYTES = 64 << 20;
/** Bytes of a legacy entry's header a scan needs: offset, size, CRC, magic, attributes, v1 timestamp. */
const LEGACY_HEADER_BYTES = LOG_OVERHEAD + 14;

/** Shallow header of a legacy (v0/v1) entry at buf[pos]. */
function legacyEntry(buf: Buffer, pos: number, size: number, magic: number): { maxTimestamp: number; compression: number } {
  const attributes = size >= LOG_OVERHEAD + 6 ? buf[pos + 17]! : 0;
  const maxTimestamp = magic === 1 && size >= LOG_OVERHEAD + 14 ? readInt64(buf, pos + 18) : -1;
  return { maxTimestamp, compression: attributes & 0x07 };
}

/** Bytes read per step when checking that a tail is all zeros. */
const ZERO_CHECK_BYTES = 64 << 10;

/**
 * Whether file bytes [from, to) are all zeros: preallocated space, never written. Bounded reads.
 * With `sizeFieldWasZero` (an entry size of 0 was read at `from + 8`): a live writer may be writing
 * over the zeros meanwhile, so non-zero bytes found once that size field is no longer zero are its
 * new data, and the view still ends at `from`.
 */
export function isZeroTail(source: FileSource, from: number, to: number, sizeFieldWasZero = false): boolean {
  const zeros = zeroBytes(ZERO_CHECK_BYTES);
  const scratch = Buffer.allocUnsafe(Math.min(ZERO_CHECK_BYTES, Math.max(to - from, 4)));
  for (let at = from; at < to; ) {
    const n = source.read(scratch, 0, Math.min(scratch.length, to - at), at);
    if (n <= 0) return true; // the file shrank: a writer trimmed its preallocation (close, roll)
    if (!scratch.subarray(0, n).equals(zeros.subarray(0, n))) {
      if (!sizeFieldWasZero) return false;
      const sizeField = source.read(scratch, 0, 4, from + 8) === 4 ? scratch.readInt32BE(0) : 0;
      return sizeField !== 0;
    }
    at += n;
  }
  return true;
}

/** Where an entry's checksum starts (v2: after the CRC field; legacy: after the CRC) and whether it is CRC-32C. */
const crcStart = (magic: number): number => (magic >= 2 ? 21 : 16);
const storedCrc = (buf: Buffer, pos: number, magic: number): number => buf.readUInt32BE(pos + (magic >= 2 ? 17 : 12));

/** The checksum of a buffered entry (CRC-32C for v2, CRC-32 for legacy). */
function bufferedCrc(buf: Buffer, pos: number, size: number, magic: number): number {
  return magic >= 2 ? crc32c(buf, pos + crcStart(magic), pos + size) : crc32(buf, pos + crcStart(magic), pos + size);
}

/**
 * The checksum of the entry at file position `position`, read through `scratch` in chunks (memory
 * bounded by the scratch, whatever the entry's size).
 */
function chunkedCrc(src: LogEntry['source'], position: number, size: number, magic: number, scratch: Buffer): number {
  let crc = 0;
  const end = position + size;
  for (let at = position + crcStart(magic); at < end; ) {
    const n = src.read(scratch, 0, Math.min(scratch.length, end - at), at);
    if (n <= 0) throw new LogtoolError('corrupt', `file shrank while checking the entry at byte ${position}`, { file: src.path, position });
    crc = magic >= 2 ? crc32c(scratch, 0, n, crc) : crc32(scratch, 0, n, crc);
    at += n;
  }
  return crc;
}

/** Whether the entry's stored CRC matches its bytes (checked in bounded chunks for an incomplete entry). */
export function entryCrcValid(e: LogEntry, chunkBytes = DEFAULT_CHUNK_BYTES): boolean {
  const crc = e.complete ? bufferedCrc(e.buf, e.bufPos, e.size, e.magic) : chunkedCrc(e.source, e.position, e.size, e.magic, Buffer.allocUnsafe(chunkBytes));
  return crc === storedCrc(e.buf, e.bufPos, e.magic);
}

/**
 * The whole entry: a view of the scan buffer, or — for an entry above maxBufferedEntryBytes — its
 * bytes read now into a buffer of exactly its size (bounded by the file: the entry fits in it).
 */
export function entryBytes(e: LogEntry): { buf: Buffer; pos: number } {
  if (e.complete) return { buf: e.buf, pos: e.bufPos };
  const buf = Buffer.allocUnsafe(e.size);
  for (let at = 0; at < e.size; ) {
    const n = e.source.read(buf, at, e.size - at, e.position + at);
    if (n <= 0) throw new LogtoolError('corrupt', `file shrank while reading the entry at byte ${e.position}`, { file: e.source.path, position: e.position });
    at += n;
  }
  return { buf, pos: 0 };
}

export class EntryScanner {
  /** How iteration ended; set once the generator finishes. */
  end: ScanEnd = { kind: 'end' };
  /** Position just after the last valid entry. */
  validBytes: number;
  /** With skipBelowOffset: whether an entry reaching that offset was met (even one that then failed a check). */
  reachedOffset = false;
  private readonly opts: ScanOptions;
  private crcScratch: Buffer | undefined;

  constructor(opts: ScanOptions) {
    const start = opts.startPosition ?? 0;
    // Messages are built only on failure (a scanner per lookup: template strings cost ~300 ns each).
    if (!(Number.isSafeInteger(start) && start >= 0)) assert(false, `scan from position ${start}`, { file: opts.path });
    if (!(opts.endPosition === undefined || Number.isSafeInteger(opts.endPosition))) assert(false, `scan to position ${opts.endPosition}`, { file: opts.path });
    this.opts = opts;
    this.validBytes = start;
  }

  *entries(): Generator<LogEntry> {
    const { io, path } = this.opts;
    const ownFd = this.opts.fd === undefined && this.opts.file === undefined;
    const fd = this.opts.file ? -1 : (this.opts.fd ?? io.open(path, 'r'));
    try {
      const source: FileSource = this.opts.file ?? { path, read: (b, o, l, p) => io.read(fd, b, o, l, p) };
      assert(this.opts.file === undefined || this.opts.endPosition !== undefined, 'a scan of a cached file needs its end position', { file: path });
      const fileEnd = this.opts.endPosition ?? io.fstat(fd).size;
      let position = this.opts.startPosition ?? 0;
      const firstRead = this.opts.skipBelowOffset === undefined && !this.opts.headersOnly ? INITIAL_CHUNK_BYTES : SKIP_READ_BYTES;
      const w = new ScanWindow(source, fileEnd, this.opts.chunkBytes ?? DEFAULT_CHUNK_BYTES, position, firstRead);
      let prevLastOffset = -Infinity;
      for (;;) {
        this.validBytes = position;
        const size = this.entrySize(w, position);
        if (size === undefined) return;
        if (this.opts.skipBelowOffset !== undefined && !this.reachedOffset) {
          const below = this.isBelow(w, position, size, this.opts.skipBelowOffset);
          if (below === undefined) return;
          if (below) {
            position += size;
            continue;
          }
          this.reachedOffset = true;
        }
        const entry = this.entryAt(w, position, size);
        if (entry === undefined || !this.followsInSegment(entry, prevLastOffset)) return;
        prevLastOffset = entry.lastOffset;
        if (!this.reusesAfter(entry)) w.yielded = true;
        yield entry;
        position += size;
      }
    } finally {
      if (ownFd) io.close(fd);
    }
  }

  /**
   * Bytes to read from `position` while passing over headers: a few KiB at the start (the floor
   * entry's batch is below the offset but for its last), then up to skipReadEnd.
   */
  private skipReadAhead(position: number): number {
    const end = this.opts.skipReadEnd;
    return end === undefined || position === (this.opts.startPosition ?? 0) ? SKIP_READ_BYTES : Math.max(SKIP_READ_BYTES, end - position);
  }

  /** How far a read at `position` reaches: a chunk when reading on, a few KiB while passing over or reading headers only. */
  private readAheadAt(position: number): number {
    if (this.opts.skipBelowOffset !== undefined && !this.reachedOffset) return this.skipReadAhead(position);
    return this.opts.headersOnly ? SKIP_READ_BYTES : Infinity;
  }

  /** Whether the buffer may be refilled in place once `entry` was yielded from it (ScanOptions.reuseBuffer). */
  private reusesAfter(entry: LogEntry): boolean {
    const reuse = this.opts.reuseBuffer;
    return reuse === true || (reuse === 'compressed' && entry.header !== undefined && entry.compression !== 0);
  }

  /** Ends the scan there: `end` says how. */
  private stop(end: ScanEnd): undefined {
    this.end = end;
    return undefined;
  }

  /**
   * The size of the entry at `position` from its size field and magic (FileLogInputStream's
   * checks), with its header probe in the window; undefined when the scan ends there.
   */
  private entrySize(w: ScanWindow, position: number): number | undefined {
    const remaining = w.fileEnd - position;
    if (remaining < HEADER_PROBE_BYTES + 1) {
      if (remaining > 0 && this.opts.zeroTailIsEnd && isZeroTail(w.source, position, w.fileEnd)) return this.stop({ kind: 'end', zeroTail: { position, bytes: remaining } });
      if (remaining > 0) return this.stop({ kind: 'partial', position, bytes: remaining, reason: `${remaining} trailing bytes do not form an entry header` });
      return undefined;
    }
    w.ensure(position, HEADER_PROBE_BYTES + 1, this.readAheadAt(position));
    const p = position - w.filePos;
    const entrySizeField = w.buf.readInt32BE(p + 8);
    const magic = w.buf.readInt8(p + 16);
    if (entrySizeField === 0 && this.opts.zeroTailIsEnd && isZeroTail(w.source, position, w.fileEnd, true)) return this.stop({ kind: 'end', zeroTail: { position, bytes: remaining } });
    if (entrySizeField < MIN_ENTRY_SIZE) {
      return this.stop({ kind: 'corrupt', position, reason: `entry size ${entrySizeField} is below the minimum ${MIN_ENTRY_SIZE}` + (entrySizeField === 0 ? ' (zero bytes: preallocated or torn space)' : '') });
    }
    const size = entrySizeField + LOG_OVERHEAD;
    if (position + size > w.fileEnd) return this.stop({ kind: 'partial', position, bytes: remaining, reason: `entry of ${size} bytes runs past the end of the file (${remaining} bytes left)` });
    if (magic >= 2 && size < RECORD_BATCH_OVERHEAD) return this.stop({ kind: 'corrupt', position, reason: `batch of ${size} bytes is smaller than the ${RECORD_BATCH_OVERHEAD}-byte header` });
    if (magic < 0) return this.stop({ kind: 'corrupt', position, reason: `invalid magic ${magic}` });
    if (magic > 2) return this.stop({ kind: 'corrupt', position, reason: `unknown magic ${magic}` });
    return size;
  }

  /**
   * Whether the entry at `position` lies wholly below `offset`, read from its header alone (the
   * same negative-delta check as every v2 batch gets); undefined when the scan ends there.
   */
  private isBelow(w: ScanWindow, position: number, size: number, offset: number): boolean | undefined {
    const magic = w.buf.readInt8(position - w.filePos + 16);
    if (magic < 2) return readInt64(w.buf, position - w.filePos) < offset; // a legacy entry's offset is its last
    if (!w.ensure(position, Math.min(size, RECORD_BATCH_OVERHEAD), this.skipReadAhead(position))) return this.stop({ kind: 'partial', position, bytes: w.fileEnd - position, reason: 'file shrank while reading' });
    const p = position - w.filePos;
    const baseOffset = readInt64(w.buf, p);
    const lastOffsetDelta = w.buf.readInt32BE(p + 23);
    if (lastOffsetDelta < 0 || w.buf.readInt32BE(p + 57) < 0) return this.stop({ kind: 'corrupt', position, reason: `batch at offset ${baseOffset} has a negative lastOffsetDelta or record count` });
    return baseOffset + lastOffsetDelta < offset;
  }

  /**
   * The entry at `position` — loaded whole unless above maxBufferedEntryBytes, its CRC checked
   * when asked — or undefined when the scan ends there.
   */
  private entryAt(w: ScanWindow, position: number, size: number): LogEntry | undefined {
    const magic = w.buf.readInt8(position - w.filePos + 16);
    const complete = !this.opts.headersOnly && size <= (this.opts.maxBufferedEntryBytes ?? DEFAULT_MAX_BUFFERED_ENTRY_BYTES);
    if (!w.ensure(position, complete ? size : Math.min(size, magic >= 2 ? RECORD_BATCH_OVERHEAD : LEGACY_HEADER_BYTES), complete ? Infinity : this.readAheadAt(position))) {
      return this.stop({ kind: 'partial', position, bytes: w.fileEnd - position, reason: 'file shrank while reading' });
    }
    const { buf, source } = w;
    const p = position - w.filePos;
    // The entry's bytes (or, when not buffered, its header) lie inside what buf holds (message built on failure only).
    if (!(p >= 0 && p + (complete ? size : HEADER_PROBE_BYTES) <= w.len)) assert(false, `entry at ${position} outside the scan buffer`, { file: this.opts.path, position });
    const crcValid = (): boolean => {
      const crc = complete ? bufferedCrc(buf, p, size, magic) : chunkedCrc(source, position, size, magic, (this.crcScratch ??= Buffer.allocUnsafe(w.chunkBytes)));
      return crc === storedCrc(buf, p, magic);
    };
    if (magic < 2) {
      const legacy = legacyEntry(buf, p, size, magic);
      const offset = readInt64(buf, p);
      if (this.opts.verifyCrc && !crcValid()) return this.stop({ kind: 'corrupt', position, reason: `CRC-32 mismatch in v${magic} message at offset ${offset}` });
      return { position, size, magic, header: undefined, baseOffset: offset, lastOffset: offset, maxTimestamp: legacy.maxTimestamp, compression: legacy.compression, buf, bufPos: p, complete, source };
    }
    const header = readBatchHeader(buf, p);
    if (this.opts.verifyCrc && !crcValid()) return this.stop({ kind: 'corrupt', position, reason: `CRC-32C mismatch in batch at offset ${header.baseOffset} (stored ${header.crc})` });
    if (header.lastOffsetDelta < 0 || header.recordsCount < 0) {
      return this.stop({ kind: 'corrupt', position, reason: `batch at offset ${header.baseOffset} has a negative lastOffsetDelta or record count` });
    }
    const lastOffset = header.baseOffset + header.lastOffsetDelta;
    return { position, size, magic, header, baseOffset: header.baseOffset, lastOffset, maxTimestamp: header.maxTimestamp, compression: header.attributes & 0x07, buf, bufPos: p, complete, source };
  }

  /** With segmentBaseOffset: whether the entry lies in the segment's offset range after the previous one (else the scan ends). */
  private followsInSegment(entry: LogEntry, prevLastOffset: number): boolean {
    const base = this.opts.segmentBaseOffset;
    if (base === undefined) return true;
    const { position } = entry;
    if (entry.lastOffset < base || entry.lastOffset - base > 0x7fffffff || (entry.header && entry.baseOffset < base)) {
      this.end = { kind: 'corrupt', position, reason: `offsets ${entry.baseOffset}..${entry.lastOffset} lie outside segment ${base}` };
      return false;
    }
    if (entry.lastOffset <= prevLastOffset || (entry.header && entry.baseOffset <= prevLastOffset)) {
      this.end = { kind: 'corrupt', position, reason: `offset ${entry.baseOffset} does not follow the previous last offset ${prevLastOffset}` };
      return false;
    }
    return true;
  }
}

/** A human description of how a scan ended, or undefined if it reached the end cleanly. */
export function describeScanEnd(path: string, end: ScanEnd): string | undefined {
  if (end.kind === 'end') return undefined;
  return `${path} at byte ${end.position}: ${end.reason}`;
}

export function scanEndError(path: string, end: ScanEnd): LogtoolError | undefined {
  if (end.kind === 'end') return undefined;
  return new LogtoolError('corrupt', end.reason, { file: path, position: end.position });
}
