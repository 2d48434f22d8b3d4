/**
 * RecordBatch v2 decoding (Kafka's DefaultRecordBatch iterators and DefaultRecord.readFrom): the
 * records section (decompressed when needed) and the records one at a time, with Kafka's
 * record-level validation (kafka-format.md §2.3); control record keys.
 */
import { CorruptDataError, LogtoolError } from '../errors.js';
import { codecFor, compressionName, CompressionType } from './compression.js';
import { readVarint, readVarlong, readVarlongBig, type VarintCursor } from './varint.js';
import { BytesOf } from './byte-view.js';
import { passRecordsBelow, readShortRecord } from './record-skip.js';
import { RecordView, walkHeaders } from './record-view.js';
import { RecordPieces } from './record-pieces.js';
import { Attr, RECORD_BATCH_OVERHEAD, compressionOf, readTimestamp, sizeOf, toTimestamp, type BatchHeader, type LogRecord, type Timestamp } from './batch-header.js';

export interface DecodeOptions {
  /** Upper bound on the decompressed size of one batch (bytes). */
  maxDecompressedBytes?: number;
  /** For error messages. */
  file?: string;
  /** File position of the batch, for error messages. */
  filePosition?: number;
  /**
   * Records below this offset are checked as every record is (Kafka's record-level validation) but
   * not built: no key, value or header objects — a lookup decodes only the records it returns.
   */
  fromOffset?: number;
}

export const DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024;

/**
 * The records section of the batch at buf[pos…], decompressed if needed. Returns the buffer and
 * the range holding the concatenated records.
 */
export function recordsSection(buf: Buffer, pos: number, h: BatchHeader, opts: DecodeOptions = {}, asPieces = false): { data: Buffer; start: number; end: number; pieces?: Buffer[] } {
  const start = pos + RECORD_BATCH_OVERHEAD;
  const end = pos + sizeOf(h);
  // The header's length must describe bytes that are actually there: reading past the buffer
  // would decode garbage (Buffer indexing yields undefined, subarray clamps) instead of failing.
  if (end < start || end > buf.length) {
    throw new CorruptDataError(
      `batch at offset ${h.baseOffset}: declares ${sizeOf(h)} bytes but ${Math.max(0, buf.length - pos)} are available (a batch needs at least ${RECORD_BATCH_OVERHEAD})`,
      opts.filePosition,
      opts.file,
    );
  }
  const codecId = compressionOf(h);
  if (codecId === CompressionType.none) return { data: buf, start, end };
  const where = `batch at offset ${h.baseOffset}${opts.file ? ` in ${opts.file}` : ''}`;
  const codec = codecFor(codecId);
  if (!codec) {
    throw new LogtoolError('unsupported', `${where} uses codec ${compressionName(codecId)}, not supported yet`, {
      file: opts.file,
      position: opts.filePosition,
    });
  }
  let out: Buffer | Buffer[];
  try {
    const input = buf.subarray(start, end);
    const max = opts.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
    // asPieces: the codec's pieces (lz4's blocks, snappy's chunks) unjoined, for RecordDecoder (record-pieces.ts).
    out = asPieces && codec.decompressPieces ? codec.decompressPieces(input, max) : codec.decompress(input, max);
  } catch (e) {
    if (e instanceof LogtoolError && e.kind !== 'corrupt') throw e;
    throw new CorruptDataError(`${where}: ${compressionName(codecId)} payload cannot be decompressed: ${(e as Error).message}`, opts.filePosition, opts.file);
  }
  if (Array.isArray(out)) {
    if (out.length !== 1) {
      // The codec's own fresh array: checked in place, no second array per batch.
      for (let i = 0; i < out.length; i++) out[i] = ownBytes(out[i]!, buf);
      return { data: EMPTY, start: 0, end: 0, pieces: out };
    }
    out = out[0]!;
  }
  out = ownBytes(out, buf);
  return { data: out, start: 0, end: out.length };
}

/**
 * A decompressed section never shares the batch's memory, so that no record of a compressed batch
 * is a view of the batch's bytes (Log.read refills its file buffer after one: file-records.ts):
 * the built-in codecs' output never does; a registered codec's that does is copied.
 */
function ownBytes(out: Buffer, batch: Buffer): Buffer {
  return out.buffer === batch.buffer ? Buffer.from(out) : out;
}

const EMPTY = Buffer.alloc(0);

function corrupt(h: BatchHeader, message: string, opts: DecodeOptions): CorruptDataError {
  return new CorruptDataError(`batch at offset ${h.baseOffset}: ${message}`, opts.filePosition, opts.file);
}

/**
 * Decodes the records of the v2 batch at buf[pos…] one at a time, so that what a batch makes a
 * reader hold is one record (plus the records section, bounded by maxDecompressedBytes) whatever
 * its record count: a batch of 20 M empty records never becomes 20 M objects. Throws
 * CorruptDataError on any of Kafka's record-level validation failures (§2.3) at the record where
 * it is found; the trailing-bytes check comes with the end. Keys, values and header values are
 * views into the batch's bytes (or the decompressed buffer), not copies.
 */
export class RecordDecoder {
  private readonly buf: Buffer;
  private readonly pos: number;
  private readonly h: BatchHeader;
  private readonly opts: DecodeOptions;
  /** The records section, or (pieces) the buffer holding the current record whole. */
  private data: Buffer;
  /** Where the keys, values and header values (views of data) are cut from. */
  private bytes: BytesOf;
  private end: number;
  /** A section left in the codec's pieces (lz4's blocks, snappy's chunks): records are taken from them one by one. */
  private pieces: RecordPieces | undefined;
  /** With pieces: where the next record starts in the section. */
  private nextAt = 0;
  private readonly logAppendTime: boolean;
  /** Records below this offset are checked but not built (opts.fromOffset, or −∞; +∞ once counting). */
  private fromOffset: number;
  /** What each record's timestamp delta is added to (LogAppendTime: maxTimestamp, which replaces it). */
  private readonly timestampBase: number;
  /** Whether the batch's timestamps are safe integers: then a record's is exact when its sum is. */
  private readonly exactTimestamps: boolean;
  /** Each decoder has its own cursor: decoders of different batches may be interleaved. */
  private readonly c: VarintCursor;
  private index = 0;
  private done = false;
  /** What next() and checkRest() parse into (nextView's caller brings its own). */
  private scratch: RecordView | undefined;

  constructor(buf: Buffer, pos: number, h: BatchHeader, opts: DecodeOptions = {}) {
    if (h.recordsCount < 0) throw corrupt(h, `negative record count ${h.recordsCount}`, opts);
    const { data, start, end, pieces } = recordsSection(buf, pos, h, opts, true);
    if (pieces) this.pieces = new RecordPieces(pieces);
    this.buf = buf;
    this.pos = pos;
    this.h = h;
    this.opts = opts;
    this.data = data;
    this.bytes = new BytesOf(data);
    this.end = end;
    this.logAppendTime = (h.attributes & Attr.logAppendTime) !== 0;
    this.fromOffset = opts.fromOffset ?? -Infinity;
    this.timestampBase = this.logAppendTime ? h.maxTimestamp : h.baseTimestamp;
    this.exactTimestamps = Number.isSafeInteger(h.baseTimestamp) && Number.isSafeInteger(h.maxTimestamp);
    this.c = { pos: start };
  }

  /** The next record at or above opts.fromOffset, or undefined after the last one (once nothing is left over). */
  next(): LogRecord | undefined {
    const v = (this.scratch ??= new RecordView());
    return this.nextView(v) ? v.toRecord() : undefined;
  }

  /**
   * Shows the next record at or above opts.fromOffset in `v` (every check next() makes, no object
   * built); false after the last one (once nothing is left over).
   */
  nextView(v: RecordView): boolean {
    // A lookup: the records below fromOffset that check out are passed over in one tight loop.
    if (this.index === 0 && this.fromOffset > this.h.baseOffset) {
      if (this.pieces) this.join();
      this.index = passRecordsBelow(this.data, this.c, this.end, 0, this.h.recordsCount, this.fromOffset - this.h.baseOffset);
    }
    for (;;) {
      const r = this.parse(v);
      if (r !== null) return r;
    }
  }

  /**
   * Checks every remaining record as next() would — Kafka's record-level validation, the same
   * errors at the same record — building none (no record, key, value or header objects): the
   * number of records checked. For walks that only count (verify --deep).
   */
  checkRest(): number {
    this.fromOffset = Infinity;
    const v = (this.scratch ??= new RecordView());
    let n = 0;
    while (this.parse(v) !== false) n++;
    return n;
  }

  /**
   * Parses record `index` with every check and shows it in `v` (true) unless its offset is below
   * fromOffset (then null: the checks are the same, `v` holds its parts); false after the last.
   */
  private parse(v: RecordView): boolean | null {
    const { h, opts, c } = this;
    const i = this.index;
    if (i >= h.recordsCount) {
      if (this.pieces && this.nextAt !== this.pieces.total) this.join();
      if (!this.done && !this.pieces && c.pos !== this.end) throw corrupt(h, `${this.end - c.pos} bytes remain after ${h.recordsCount} records`, opts);
      this.done = true;
      return false;
    }
    let start = c.pos;
    if (this.pieces) start = this.parsePlaced(i, v);
    else {
      // The common record in one pass (record-skip.ts), any other field by field: the same view or error.
      const shortEnd = readShortRecord(this.data, start, this.end, v);
      if (shortEnd >= 0) c.pos = shortEnd;
      else this.parseFields(i, v);
    }
    this.index = i + 1;
    const offset = h.baseOffset + v.offsetDelta;
    if (offset < this.fromOffset) return null;
    const tsDelta = v.timestampDelta;
    let timestamp: Timestamp = this.logAppendTime ? this.timestampBase : this.timestampBase + tsDelta;
    // The sum of two safe integers is exact when it is itself safe.
    if (!this.exactTimestamps || !Number.isSafeInteger(timestamp) || !Number.isSafeInteger(tsDelta)) timestamp = this.exactTimestamp(start);
    // Stored only when they change (once per batch): storing the batch's young objects into a
    // long-lived view takes V8's write barrier's slow path, ~10 ns per record for these four.
    const views = this.bytes;
    if (v.views !== views || v.bytes !== this.data || v.batch !== h || v.legacy !== undefined) {
      v.legacy = undefined;
      v.batch = h;
      v.bytes = this.data;
      v.views = views;
    }
    v.offset = offset;
    v.timestamp = timestamp;
    return true;
  }

  /**
   * Parses record i from the piece holding it whole (RecordPieces.place); where it cannot be placed
   * or does not parse, from the joined section instead, which gives the error the joined section
   * always gave. Returns where the record starts in `data`.
   */
  private parsePlaced(i: number, v: RecordView): number {
    const p = this.pieces!;
    const at = this.nextAt;
    if (p.place(at)) {
      this.data = p.data!;
      this.bytes = p.views!;
      this.end = p.end;
      this.c.pos = p.start;
      try {
        this.parseFields(i, v);
        this.nextAt = at + p.end - p.start;
        return p.start;
      } catch {
        // Reparsed from the joined section below: the same error, as it always read.
      }
    }
    this.join();
    this.parseFields(i, v);
    return at;
  }

  /** Leaves the pieces for the joined section, the cursor where the next record starts. */
  private join(): void {
    const data = this.pieces!.joined();
    this.pieces = undefined;
    this.data = data;
    this.bytes = new BytesOf(data);
    this.end = data.length;
    this.c.pos = this.nextAt;
  }

  /** The exact timestamp of the record at `start` (checked), from the batch header's int64s. */
  private exactTimestamp(start: number): Timestamp {
    const { buf, pos, data } = this;
    if (this.logAppendTime) return readTimestamp(buf, pos + 35);
    let tsPos = start;
    while (data[tsPos]! >= 0x80) tsPos++; // the record's length varint
    tsPos += 2; // its last byte, the attributes
    return toTimestamp(BigInt.asIntN(64, buf.readBigInt64BE(pos + 27) + readVarlongBig(data, tsPos, this.end)));
  }

  /** Reads record i from the cursor field by field into `v`, with every check and error of Kafka's DefaultRecord.readFrom. */
  private parseFields(i: number, v: RecordView): void {
    const { h, opts, data, end, c } = this;
    if (c.pos >= end) throw corrupt(h, `premature end of records: ${i} of ${h.recordsCount} read`, opts);
    const length = readVarint(data, c, end);
    const bodyStart = c.pos;
    if (length < 0 || bodyStart + length > end) throw corrupt(h, `record ${i} length ${length} exceeds the batch`, opts);
    const bodyEnd = bodyStart + length;
    c.pos++; // attributes
    v.timestampDelta = readVarlong(data, c, bodyEnd);
    v.offsetDelta = readVarint(data, c, bodyEnd);
    const keyLen = readVarint(data, c, bodyEnd);
    v.keyStart = c.pos;
    v.keyLength = keyLen < 0 ? -1 : keyLen;
    if (keyLen >= 0) {
      if (c.pos + keyLen > bodyEnd) throw corrupt(h, `record ${i} key runs past the record`, opts);
      c.pos += keyLen;
    }
    const valueLen = readVarint(data, c, bodyEnd);
    v.valueStart = c.pos;
    v.valueLength = valueLen < 0 ? -1 : valueLen;
    if (valueLen >= 0) {
      if (c.pos + valueLen > bodyEnd) throw corrupt(h, `record ${i} value runs past the record`, opts);
      c.pos += valueLen;
    }
    const headerCount = readVarint(data, c, bodyEnd);
    v.headerCount = headerCount;
    v.headersStart = c.pos;
    v.headersEnd = bodyEnd;
    if (headerCount !== 0) this.checkHeaders(i, headerCount, bodyEnd);
    if (c.pos !== bodyEnd) throw corrupt(h, `record ${i} declares ${length} bytes but holds ${c.pos - bodyStart}`, opts);
  }

  /** Checks the `headerCount` headers of record i from the cursor (walkHeaders), building none. */
  private checkHeaders(i: number, headerCount: number, bodyEnd: number): void {
    const { h, opts, data, c } = this;
    if (headerCount < 0 || headerCount > bodyEnd - c.pos) throw corrupt(h, `record ${i} has an invalid header count ${headerCount}`, opts);
    const problem = walkHeaders(data, c, bodyEnd, headerCount, this.bytes, undefined);
    if (problem !== undefined) throw corrupt(h, `record ${i} ${problem}`, opts);
  }
}

/** The records of the v2 batch at buf[pos…], one at a time (see RecordDecoder). */
export function* iterateRecords(buf: Buffer, pos: number, h: BatchHeader, opts: DecodeOptions = {}): Generator<LogRecord> {
  const d = new RecordDecoder(buf, pos, h, opts);
  for (let r = d.next(); r !== undefined; r = d.next()) yield r;
}

/**
 * Every record of the v2 batch at buf[pos…] in one array — for callers that know the batch is
 * small (one they encoded, a control batch); readers of untrusted batches use iterateRecords.
 */
export function decodeRecords(buf: Buffer, pos: number, h: BatchHeader, opts: DecodeOptions = {}): LogRecord[] {
  const d = new RecordDecoder(buf, pos, h, opts);
  const out: LogRecord[] = [];
  for (let r = d.next(); r !== undefined; r = d.next()) out.push(r);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Control records

export const ControlType = ['ABORT', 'COMMIT', 'LEADER_CHANGE', 'SNAPSHOT_HEADER', 'SNAPSHOT_FOOTER', 'KRAFT_VERSION', 'KRAFT_VOTERS'] as const;

export function controlTypeOf(key: Buffer | null): { version: number; type: number; name: string } | undefined {
  if (!key || key.length < 4) return undefined;
  const version = key.readInt16BE(0);
  const type = key.readInt16BE(2);
  return { version, type, name: ControlType[type] ?? 'UNKNOWN' };
}
