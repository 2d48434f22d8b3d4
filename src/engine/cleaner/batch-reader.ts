/**
 * The cleaner's reader of sealed segments: v2 batches through two reusable read buffers (half a
 * chunk each, one grown only to hold a batch larger than that), so reading any amount of data
 * allocates nothing per segment or per batch — the cleaner's memory stays what it accounted for.
 * While the batches of one buffer are checked and filtered, the bytes after them are read ahead
 * into the other in libuv's thread pool (the copy out of the page cache on another core); a
 * read-ahead never extends into a skipped range, and one a scan stopped early leaves is awaited
 * before the buffers are used again. Each batch is checked as Kafka's recovery would (size, magic,
 * CRC-32C, offsets inside the segment and increasing); anything else stops the cleaner with the
 * file and byte position.
 */
import type { FileIO } from '../io.js';
import { LogtoolError, assert } from '../errors.js';
import { computeBatchCrc, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, readBatchHeader, type BatchHeader } from '../format/record-batch.js';
import type { CachedFile } from '../segment/fd-cache.js';
import type { LogSegment } from '../segment/segment.js';
import type { SkipRange } from './dead-runs.js';

export const READ_CHUNK_BYTES = 1 << 20;

/** One batch; `buf[bufPos, bufPos + size)` is valid until the next batch is read. */
export interface Batch {
  position: number;
  size: number;
  header: BatchHeader;
  buf: Buffer;
  bufPos: number;
}

/** File positions [from, to) of a segment. */
export interface PositionRange {
  from: number;
  to: number;
}

const NOTHING_VERIFIED: PositionRange = { from: 0, to: 0 };
const NO_SKIPS: readonly SkipRange[] = [];

/** A read-ahead: file [at, at + bytes read) into spare[at - from, …), spare[0, at - from) to come from buf. */
interface ReadAhead {
  /** File position of spare[0]: where the first batch not wholly in buf begins. */
  from: number;
  /** File position the read starts at (the end of buf's bytes). */
  at: number;
  /** Bytes read. */
  done: Promise<number>;
}

/** Where a scan of one segment is: buf holds file [bufStart, bufStart + bufLen); reads stop at readEnd. */
interface Cursor {
  readonly src: CachedFile;
  readonly file: string;
  /** The segment's size. */
  readonly end: number;
  pos: number;
  bufStart: number;
  bufLen: number;
  /** The next skipped range's start, or the end. */
  readEnd: number;
}

export class BatchReader {
  /** The bytes being parsed. */
  private buf: Buffer;
  /** The bytes after them, read ahead (at most one of the two is larger than half a chunk). */
  private spare: Buffer;
  private readonly half: number;
  private ahead: ReadAhead | undefined;
  private readonly io: FileIO;
  /** Bytes read from disk so far. */
  bytesRead = 0;
  /** Bytes of the batches whose CRC was computed so far. */
  bytesCrcChecked = 0;

  constructor(io: FileIO, chunkBytes = READ_CHUNK_BYTES) {
    this.io = io;
    this.half = Math.max(RECORD_BATCH_OVERHEAD, chunkBytes >> 1);
    this.buf = Buffer.allocUnsafe(this.half);
    this.spare = Buffer.allocUnsafe(this.half);
  }

  /** Size of the read buffers now (one grows to the largest batch met). */
  get bufferBytes(): number {
    return this.buf.length + this.spare.length;
  }

  /**
   * Batches of a sealed segment from startPosition (a batch boundary) to its end. Throws a
   * `corrupt` LogtoolError at the first entry that is not a valid v2 batch of this segment. The
   * CRC of a batch lying wholly inside `verified` (positions whose CRCs this run has checked
   * already) is not computed again; every other check is made. The batches of `skips` (sorted
   * ranges of whole batches this run has checked already, dead-runs.ts) are neither read nor
   * yielded, and no read extends into them.
   */
  async *batches(seg: LogSegment, startPosition = 0, verified: PositionRange = NOTHING_VERIFIED, skips: readonly SkipRange[] = NO_SKIPS): AsyncGenerator<Batch> {
    assert(seg.io === this.io, 'a segment read through another I/O layer than the cleaner\'s', { file: seg.logPath });
    await this.settleAhead();
    const end = seg.size;
    const file = seg.logPath;
    let skipAt = 0;
    while (skipAt < skips.length && skips[skipAt]!.to <= startPosition) skipAt++;
    const c: Cursor = { src: seg.file, file, end, pos: startPosition, bufStart: startPosition, bufLen: 0, readEnd: skipAt < skips.length ? skips[skipAt]!.from : end };
    let prevLast = -1;
    const entry: Batch = { position: 0, size: 0, header: undefined as unknown as BatchHeader, buf: this.buf, bufPos: 0 };
    const fail = (at: number, reason: string) => new LogtoolError('corrupt', reason, { file, position: at });
    try {
      while (c.pos < end) {
        const pos = c.pos;
        if (skipAt < skips.length && pos === skips[skipAt]!.from) {
          const skip = skips[skipAt++]!;
          assert(skip.to <= end && skip.lastOffset > prevLast, 'a skipped range outside the segment or out of order', { file, position: pos });
          prevLast = skip.lastOffset;
          c.pos = skip.to;
          c.readEnd = skipAt < skips.length ? skips[skipAt]!.from : end;
          continue;
        }
        if (end - pos < RECORD_BATCH_OVERHEAD) throw fail(pos, `${end - pos} bytes at the end do not form a batch`);
        if (pos + RECORD_BATCH_OVERHEAD > c.bufStart + c.bufLen) await this.fill(c, RECORD_BATCH_OVERHEAD);
        let p = pos - c.bufStart;
        const size = this.buf.readInt32BE(p + 8) + LOG_OVERHEAD;
        const magic = this.buf.readInt8(p + 16);
        if (magic !== 2) throw fail(pos, `entry with magic ${magic}: only v2 batches can be compacted`);
        if (size < RECORD_BATCH_OVERHEAD || pos + size > end) throw fail(pos, `batch of ${size} bytes does not fit the segment`);
        if (pos + size > c.bufStart + c.bufLen) await this.fill(c, size);
        p = pos - c.bufStart;
        const h = readBatchHeader(this.buf, p);
        if (pos < verified.from || pos + size > verified.to) {
          this.bytesCrcChecked += size;
          if (computeBatchCrc(this.buf, p, size) !== h.crc) throw fail(pos, `CRC-32C mismatch in batch at offset ${h.baseOffset}`);
        }
        const last = h.baseOffset + h.lastOffsetDelta;
        if (h.lastOffsetDelta < 0 || h.recordsCount < 0) throw fail(pos, `batch at offset ${h.baseOffset} has a negative lastOffsetDelta or record count`);
        if (h.baseOffset < seg.baseOffset || last - seg.baseOffset > 0x7fffffff) throw fail(pos, `offsets ${h.baseOffset}..${last} lie outside segment ${seg.baseOffset}`);
        if (h.baseOffset <= prevLast) throw fail(pos, `offset ${h.baseOffset} does not follow the previous last offset ${prevLast}`);
        prevLast = last;
        entry.position = pos;
        entry.size = size;
        entry.header = h;
        entry.buf = this.buf;
        entry.bufPos = p;
        yield entry;
        c.pos = pos + size;
      }
    } finally {
      await this.settleAhead();
    }
  }

  /** Makes buf hold file [c.pos, c.pos + n): from the read-ahead when it holds them, else read now. */
  private async fill(c: Cursor, n: number): Promise<void> {
    const a = this.ahead;
    if (a) {
      this.ahead = undefined;
      const got = await a.done;
      this.bytesRead += got;
      if (a.from === c.pos && a.at === c.bufStart + c.bufLen && a.at - c.pos + got >= n) {
        this.buf.copy(this.spare, 0, c.pos - c.bufStart, c.bufLen);
        [this.buf, this.spare] = [this.spare, this.buf];
        c.bufLen = a.at - c.pos + got;
        c.bufStart = c.pos;
        this.readAhead(c);
        return;
      }
    }
    const kept = Math.max(0, c.bufStart + c.bufLen - c.pos);
    if (n > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(n, this.buf.length));
      if (kept > 0) this.buf.copy(bigger, 0, c.pos - c.bufStart, c.bufLen);
      this.buf = bigger;
      if (this.spare.length > this.half) this.spare = Buffer.allocUnsafe(this.half);
    } else if (kept > 0) this.buf.copy(this.buf, 0, c.pos - c.bufStart, c.bufLen);
    c.bufLen = kept;
    c.bufStart = c.pos;
    assert(c.pos + n <= c.readEnd || c.readEnd === c.end, 'a skipped range that does not begin at a batch boundary', { file: c.file, position: c.pos });
    while (c.bufLen < n) {
      const want = Math.min(this.buf.length - c.bufLen, c.readEnd - (c.bufStart + c.bufLen));
      const got = want > 0 ? c.src.read(this.buf, c.bufLen, want, c.bufStart + c.bufLen) : 0;
      if (got <= 0) throw new LogtoolError('corrupt', 'segment ended inside a batch', { file: c.file, position: c.pos });
      c.bufLen += got;
      this.bytesRead += got;
    }
    this.readAhead(c);
  }

  /** Starts reading the bytes after buf's into spare, from the first batch not wholly in buf on. */
  private readAhead(c: Cursor): void {
    const bufEnd = c.bufStart + c.bufLen;
    let from = c.pos;
    while (from + RECORD_BATCH_OVERHEAD <= bufEnd) {
      const size = this.buf.readInt32BE(from - c.bufStart + 8) + LOG_OVERHEAD;
      if (size < RECORD_BATCH_OVERHEAD || from + size > bufEnd) break;
      from += size;
    }
    // Not for a batch larger than spare (read when it is met).
    if (from + RECORD_BATCH_OVERHEAD <= bufEnd && this.buf.readInt32BE(from - c.bufStart + 8) + LOG_OVERHEAD > this.spare.length) return;
    const want = Math.min(this.spare.length - (bufEnd - from), c.readEnd - bufEnd);
    if (want > 0) this.ahead = { from, at: bufEnd, done: c.src.readAsync(this.spare, bufEnd - from, want, bufEnd) };
  }

  /** Waits for a read-ahead in flight (its bytes unused; a failure of it is not this scan's). */
  private async settleAhead(): Promise<void> {
    const a = this.ahead;
    this.ahead = undefined;
    if (a) this.bytesRead += await a.done.catch(() => 0);
  }
}
