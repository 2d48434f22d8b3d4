/**
 * Streams the log entries (v2 batches, or legacy v0/v1 messages) of a `.log` file through a
 * bounded buffer, by Kafka's FileLogInputStream rules (kafka-format.md §4): fewer than 17 bytes
 * left is the end; a size field below 14 is corruption; an entry running past the end of the file
 * is a partial write. Validation beyond that (CRC, offsets) is opt-in so that a plain read and a
 * recovery share one loop.
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

/**
 * One entry of a `.log` file. Its bytes are `buf[bufPos, bufPos + size)` (only its header when not
 * `complete`: see entryBytes). The scanner never writes to a buffer again once it yielded an entry
 * from it, so the entry's bytes, and the keys and values decoded from them as views, stay valid
 * for as long as they are held (holding one keeps its whole buffer, up to chunkBytes, alive).
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
  source: { io: FileIO; fd: number; path: string };
}

export type ScanEnd =
  | { kind: 'end' }
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
   * Entries whose last offset is below this are passed over by their header alone, as Kafka's
   * FileRecords.searchForOffsetWithSize does: not yielded, their CRC and offsets not checked (the
   * structural checks still apply), their bodies not read. A lookup's way to the entry holding an
   * offset from an index entry's position; `reachedOffset` tells whether it got there.
   */
  skipBelowOffset?: number;
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
    const n = src.io.read(src.fd, scratch, 0, Math.min(scratch.length, end - at), at);
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
    const n = e.source.io.read(e.source.fd, buf, at, e.size - at, e.position + at);
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

  constructor(opts: ScanOptions) {
    const start = opts.startPosition ?? 0;
    assert(Number.isSafeInteger(start) && start >= 0, `scan from position ${start}`, { file: opts.path });
    assert(opts.endPosition === undefined || Number.isSafeInteger(opts.endPosition), `scan to position ${opts.endPosition}`, { file: opts.path });
    this.opts = opts;
    this.validBytes = start;
  }

  *entries(): Generator<LogEntry> {
    const { io, path } = this.opts;
    const ownFd = this.opts.fd === undefined;
    const fd = this.opts.fd ?? io.open(path, 'r');
    try {
      const fileEnd = this.opts.endPosition ?? io.fstat(fd).size;
      const chunkBytes = this.opts.chunkBytes ?? DEFAULT_CHUNK_BYTES;
      const maxBufferedEntryBytes = this.opts.maxBufferedEntryBytes ?? DEFAULT_MAX_BUFFERED_ENTRY_BYTES;
      const source = { io, fd, path };
      let crcScratch: Buffer | undefined;
      const base = this.opts.segmentBaseOffset;
      // Start small (a random lookup reads a few KiB), double on each refill up to chunkBytes (a
      // sequential scan soon reads in full chunks).
      const skipBelow = this.opts.skipBelowOffset;
      const firstRead = skipBelow === undefined ? INITIAL_CHUNK_BYTES : SKIP_READ_BYTES;
      let buf = Buffer.allocUnsafe(Math.min(chunkBytes, firstRead, Math.max(fileEnd - (this.opts.startPosition ?? 0), HEADER_PROBE_BYTES)));
      let bufFilePos = this.opts.startPosition ?? 0; // file position of buf[0]
      let bufLen = 0;
      let yielded = false;
      let position = bufFilePos;
      let prevLastOffset = -Infinity;

      const ensure = (needed: number, readAhead = Infinity): boolean => {
        // Make buf hold [position, position + needed), reading up to readAhead bytes from position
        // (default: as much as the buffer holds; it grows to chunkBytes). False at end of file.
        const have = bufFilePos + bufLen - position;
        if (have >= needed) return true;
        if (position + needed > fileEnd) return false;
        // After an entry that was not buffered, position lies past the buffered bytes: keep none.
        const startInBuf = Math.min(position - bufFilePos, bufLen);
        const grown = buf.length < chunkBytes && readAhead === Infinity ? Math.min(chunkBytes, buf.length * 2) : buf.length;
        if (needed > buf.length || grown > buf.length || yielded) {
          // A buffer that entries were yielded from is never written again: the records decoded
          // from it are views of its bytes (see LogEntry).
          const fresh = Buffer.allocUnsafe(Math.max(needed, grown));
          buf.copy(fresh, 0, startInBuf, bufLen);
          buf = fresh;
          yielded = false;
        } else if (startInBuf > 0) {
          buf.copy(buf, 0, startInBuf, bufLen);
        }
        bufLen -= startInBuf;
        bufFilePos = position;
        while (bufLen < needed) {
          const want = Math.min(buf.length - bufLen, fileEnd - (bufFilePos + bufLen), Math.max(needed, readAhead) - bufLen);
          const n = io.read(fd, buf, bufLen, want, bufFilePos + bufLen);
          if (n <= 0) return false;
          bufLen += n;
        }
        return true;
      };

      // Whether the entry at `position` lies wholly below `offset`, read from its header alone (the
      // same negative-delta check as every v2 batch gets), or why the scan ends there.
      const below = (offset: number, size: number, magic: number): boolean | string => {
        if (magic < 2) return readInt64(buf, position - bufFilePos) < offset; // a legacy entry's offset is its last
        if (!ensure(Math.min(size, RECORD_BATCH_OVERHEAD), SKIP_READ_BYTES)) return 'shrank';
        const p = position - bufFilePos;
        const baseOffset = readInt64(buf, p);
        const lastOffsetDelta = buf.readInt32BE(p + 23);
        if (lastOffsetDelta < 0 || buf.readInt32BE(p + 57) < 0) return `batch at offset ${baseOffset} has a negative lastOffsetDelta or record count`;
        return baseOffset + lastOffsetDelta < offset;
      };

      for (;;) {
        this.validBytes = position;
        const remaining = fileEnd - position;
        if (remaining < HEADER_PROBE_BYTES + 1) {
          if (remaining > 0) this.end = { kind: 'partial', position, bytes: remaining, reason: `${remaining} trailing bytes do not form an entry header` };
          return;
        }
        ensure(HEADER_PROBE_BYTES + 1, skipBelow !== undefined && !this.reachedOffset ? SKIP_READ_BYTES : Infinity);
        let p = position - bufFilePos;
        const entrySizeField = buf.readInt32BE(p + 8);
        const magic = buf.readInt8(p + 16);
        if (entrySizeField < MIN_ENTRY_SIZE) {
          this.end = { kind: 'corrupt', position, reason: `entry size ${entrySizeField} is below the minimum ${MIN_ENTRY_SIZE}` + (entrySizeField === 0 ? ' (zero bytes: preallocated or torn space)' : '') };
          return;
        }
        const size = entrySizeField + LOG_OVERHEAD;
        if (position + size > fileEnd) {
          this.end = { kind: 'partial', position, bytes: remaining, reason: `entry of ${size} bytes runs past the end of the file (${remaining} bytes left)` };
          return;
        }
        if (magic >= 2 && size < RECORD_BATCH_OVERHEAD) {
          this.end = { kind: 'corrupt', position, reason: `batch of ${size} bytes is smaller than the ${RECORD_BATCH_OVERHEAD}-byte header` };
          return;
        }
        if (magic < 0) {
          this.end = { kind: 'corrupt', position, reason: `invalid magic ${magic}` };
          return;
        }
        if (magic > 2) {
          this.end = { kind: 'corrupt', position, reason: `unknown magic ${magic}` };
          return;
        }
        if (skipBelow !== undefined && !this.reachedOffset) {
          const skip = below(skipBelow, size, magic);
          if (typeof skip === 'string') {
            this.end = skip === 'shrank' ? { kind: 'partial', position, bytes: remaining, reason: 'file shrank while reading' } : { kind: 'corrupt', position, reason: skip };
            return;
          }
          if (skip) {
            position += size;
            continue;
          }
          this.reachedOffset = true;
        }
        const complete = size <= maxBufferedEntryBytes;
        if (!ensure(complete ? size : Math.min(size, magic >= 2 ? RECORD_BATCH_OVERHEAD : LEGACY_HEADER_BYTES))) {
          this.end = { kind: 'partial', position, bytes: remaining, reason: 'file shrank while reading' };
          return;
        }
        p = position - bufFilePos;
        // The entry's bytes (or, when not buffered, its header) lie inside what buf holds.
        assert(p >= 0 && p + (complete ? size : HEADER_PROBE_BYTES) <= bufLen, `entry at ${position} outside the scan buffer`, { file: path, position });
        const crcValid = (): boolean => {
          const crc = complete ? bufferedCrc(buf, p, size, magic) : chunkedCrc(source, position, size, magic, (crcScratch ??= Buffer.allocUnsafe(chunkBytes)));
          return crc === storedCrc(buf, p, magic);
        };
        let entry: LogEntry;
        if (magic >= 2) {
          const header = readBatchHeader(buf, p);
          if (this.opts.verifyCrc && !crcValid()) {
            this.end = { kind: 'corrupt', position, reason: `CRC-32C mismatch in batch at offset ${header.baseOffset} (stored ${header.crc})` };
            return;
          }
          if (header.lastOffsetDelta < 0 || header.recordsCount < 0) {
            this.end = { kind: 'corrupt', position, reason: `batch at offset ${header.baseOffset} has a negative lastOffsetDelta or record count` };
            return;
          }
          entry = {
            position,
            size,
            magic,
            header,
            baseOffset: header.baseOffset,
            lastOffset: header.baseOffset + header.lastOffsetDelta,
            maxTimestamp: header.maxTimestamp,
            compression: header.attributes & 0x07,
            buf,
            bufPos: p,
            complete,
            source,
          };
        } else {
          const legacy = legacyEntry(buf, p, size, magic);
          if (this.opts.verifyCrc && !crcValid()) {
            this.end = { kind: 'corrupt', position, reason: `CRC-32 mismatch in v${magic} message at offset ${readInt64(buf, p)}` };
            return;
          }
          const offset = readInt64(buf, p);
          entry = { position, size, magic, header: undefined, baseOffset: offset, lastOffset: offset, maxTimestamp: legacy.maxTimestamp, compression: legacy.compression, buf, bufPos: p, complete, source };
        }
        if (base !== undefined) {
          if (entry.lastOffset < base || entry.lastOffset - base > 0x7fffffff || (entry.header && entry.baseOffset < base)) {
            this.end = { kind: 'corrupt', position, reason: `offsets ${entry.baseOffset}..${entry.lastOffset} lie outside segment ${base}` };
            return;
          }
          if (entry.lastOffset <= prevLastOffset || (entry.header && entry.baseOffset <= prevLastOffset)) {
            this.end = { kind: 'corrupt', position, reason: `offset ${entry.baseOffset} does not follow the previous last offset ${prevLastOffset}` };
            return;
          }
        }
        prevLastOffset = entry.lastOffset;
        yielded = true;
        yield entry;
        position += size;
      }
    } finally {
      if (ownFd) io.close(fd);
    }
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
