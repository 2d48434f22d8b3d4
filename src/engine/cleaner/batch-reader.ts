/**
 * The cleaner's reader of sealed segments: v2 batches through ONE reusable read buffer (a chunk,
 * grown only to hold a batch larger than that), so reading any amount of data allocates nothing
 * per segment or per batch — the cleaner's memory stays what it accounted for. Each batch is
 * checked as Kafka's recovery would (size, magic, CRC-32C, offsets inside the segment and
 * increasing); anything else stops the cleaner with the file and byte position.
 */
import type { FileIO } from '../io.js';
import { LogtoolError, assert } from '../errors.js';
import { computeBatchCrc, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, readBatchHeader, type BatchHeader } from '../format/record-batch.js';
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

export class BatchReader {
  private buf: Buffer;
  private readonly io: FileIO;
  /** Bytes read from disk so far. */
  bytesRead = 0;
  /** Bytes of the batches whose CRC was computed so far. */
  bytesCrcChecked = 0;

  constructor(io: FileIO, chunkBytes = READ_CHUNK_BYTES) {
    this.io = io;
    this.buf = Buffer.allocUnsafe(chunkBytes);
  }

  /** Size of the read buffer now (it grows to the largest batch met). */
  get bufferBytes(): number {
    return this.buf.length;
  }

  /**
   * Batches of a sealed segment from startPosition (a batch boundary) to its end. Throws a
   * `corrupt` LogtoolError at the first entry that is not a valid v2 batch of this segment. The
   * CRC of a batch lying wholly inside `verified` (positions whose CRCs this run has checked
   * already) is not computed again; every other check is made. The batches of `skips` (sorted
   * ranges of whole batches this run has checked already, dead-runs.ts) are neither read nor
   * yielded, and no read extends into them.
   */
  *batches(seg: LogSegment, startPosition = 0, verified: PositionRange = NOTHING_VERIFIED, skips: readonly SkipRange[] = NO_SKIPS): Generator<Batch> {
    assert(seg.io === this.io, 'a segment read through another I/O layer than the cleaner\'s', { file: seg.logPath });
    const src = seg.file;
    const end = seg.size;
    const file = seg.logPath;
    let bufStart = startPosition; // file position of buf[0]
    let bufLen = 0;
    let pos = startPosition;
    let prevLast = -1;
    const entry: Batch = { position: 0, size: 0, header: undefined as unknown as BatchHeader, buf: this.buf, bufPos: 0 };
    const fail = (at: number, reason: string) => new LogtoolError('corrupt', reason, { file, position: at });
    let skipAt = 0;
    while (skipAt < skips.length && skips[skipAt]!.to <= startPosition) skipAt++;
    /** Reads stop here: the next skipped range, or the end. */
    let readEnd = skipAt < skips.length ? skips[skipAt]!.from : end;
    /** Makes buf hold [pos, pos + n). */
    const ensure = (n: number): void => {
      if (pos + n <= bufStart + bufLen) return;
      const kept = Math.max(0, bufStart + bufLen - pos);
      if (n > this.buf.length) {
        const bigger = Buffer.allocUnsafe(Math.max(n, this.buf.length));
        if (kept > 0) this.buf.copy(bigger, 0, pos - bufStart, bufLen);
        this.buf = bigger;
      } else if (kept > 0) this.buf.copy(this.buf, 0, pos - bufStart, bufLen);
      bufLen = kept;
      bufStart = pos;
      assert(pos + n <= readEnd || readEnd === end, 'a skipped range that does not begin at a batch boundary', { file, position: pos });
      while (bufLen < n) {
        const want = Math.min(this.buf.length - bufLen, readEnd - (bufStart + bufLen));
        const got = want > 0 ? src.read(this.buf, bufLen, want, bufStart + bufLen) : 0;
        if (got <= 0) throw fail(pos, 'segment ended inside a batch');
        bufLen += got;
        this.bytesRead += got;
      }
    };
    while (pos < end) {
      if (skipAt < skips.length && pos === skips[skipAt]!.from) {
        const skip = skips[skipAt++]!;
        assert(skip.to <= end && skip.lastOffset > prevLast, 'a skipped range outside the segment or out of order', { file, position: pos });
        prevLast = skip.lastOffset;
        pos = skip.to;
        readEnd = skipAt < skips.length ? skips[skipAt]!.from : end;
        continue;
      }
      if (end - pos < RECORD_BATCH_OVERHEAD) throw fail(pos, `${end - pos} bytes at the end do not form a batch`);
      ensure(RECORD_BATCH_OVERHEAD);
      let p = pos - bufStart;
      const size = this.buf.readInt32BE(p + 8) + LOG_OVERHEAD;
      const magic = this.buf.readInt8(p + 16);
      if (magic !== 2) throw fail(pos, `entry with magic ${magic}: only v2 batches can be compacted`);
      if (size < RECORD_BATCH_OVERHEAD || pos + size > end) throw fail(pos, `batch of ${size} bytes does not fit the segment`);
      ensure(size);
      p = pos - bufStart;
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
      pos += size;
    }
  }
}
