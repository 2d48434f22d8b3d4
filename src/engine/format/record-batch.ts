/**
 * RecordBatch v2 (magic 2): encode, decode, verify. Layout in ../shared/docs/kafka-format.md §2.
 * All fixed-width fields big-endian; the CRC-32C covers bytes [21, end) of the batch.
 */
import { CorruptDataError, LogtoolError } from '../errors.js';
import { crc32c } from './crc32c.js';
import { codecFor, compressionName, CompressionType } from './compression.js';
import { readVarint, readVarlong, readVarlongBig, sizeOfVarint, sizeOfVarlong, sizeOfVarlongBig, writeVarint, writeVarlong, writeVarlongBig, type VarintCursor } from './varint.js';

export const LOG_OVERHEAD = 12;
export const RECORD_BATCH_OVERHEAD = 61;
/** Smallest legal entry size field (Kafka's LegacyRecord.RECORD_OVERHEAD_V0). */
export const MIN_ENTRY_SIZE = 14;
/** Bytes needed to tell the format of an entry: offset, size, 4 bytes, magic. */
export const HEADER_PROBE_BYTES = 17;

export const Attr = {
  compressionMask: 0x07,
  logAppendTime: 0x08,
  transactional: 0x10,
  control: 0x20,
  deleteHorizon: 0x40,
} as const;

export type TimestampType = 'CreateTime' | 'LogAppendTime' | 'NoTimestampType';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

/**
 * A Kafka timestamp: any int64 of epoch milliseconds. A `number` within ±2^53
 * (Number.MAX_SAFE_INTEGER, the hot path), a `bigint` beyond, so that every int64 is exact.
 * Records read back carry a bigint only when the value is beyond ±2^53; append accepts either.
 */
export type Timestamp = number | bigint;

/** A record as a caller hands it to append. */
export interface RecordInput {
  key?: Buffer | null;
  value: Buffer | null;
  headers?: RecordHeader[];
  /** Epoch milliseconds (a safe-integer number, or a bigint within int64); defaults to the time of the append. */
  timestamp?: Timestamp;
}

/** A record as read back. */
export interface LogRecord {
  offset: number;
  /** A number, or a bigint when beyond ±2^53 (see Timestamp). */
  timestamp: Timestamp;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

export interface BatchHeader {
  baseOffset: number;
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  /** Stored CRC, unsigned. */
  crc: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  recordsCount: number;
}

export const lastOffsetOf = (h: BatchHeader): number => h.baseOffset + h.lastOffsetDelta;
export const sizeOf = (h: { batchLength: number }): number => h.batchLength + LOG_OVERHEAD;
export const compressionOf = (h: BatchHeader): number => h.attributes & Attr.compressionMask;
export const isTransactional = (h: BatchHeader): boolean => (h.attributes & Attr.transactional) !== 0;
export const isControl = (h: BatchHeader): boolean => (h.attributes & Attr.control) !== 0;
export const hasDeleteHorizon = (h: BatchHeader): boolean => (h.attributes & Attr.deleteHorizon) !== 0;
export const timestampTypeOf = (h: BatchHeader): TimestampType =>
  h.attributes & Attr.logAppendTime ? 'LogAppendTime' : 'CreateTime';

export function readInt64(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * 4294967296 + buf.readUInt32BE(pos + 4);
}

export function writeInt64(buf: Buffer, pos: number, n: number): void {
  // A double read from an int64 near 2^63 may round up to 2^63: saturate rather than throw.
  if (n >= 9223372036854775807) return void buf.writeBigInt64BE(0x7fffffffffffffffn, pos);
  const hi = Math.floor(n / 4294967296);
  buf.writeInt32BE(hi, pos);
  buf.writeUInt32BE(n - hi * 4294967296, pos + 4);
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/** The canonical Timestamp of an exact int64: a number when it is a safe integer, else the bigint. */
export function toTimestamp(n: bigint): Timestamp {
  return n >= -9007199254740991n && n <= 9007199254740991n ? Number(n) : n;
}

/** Reads an int64 timestamp exactly (a number unless it is beyond ±2^53). */
export function readTimestamp(buf: Buffer, pos: number): Timestamp {
  const n = readInt64(buf, pos);
  return Number.isSafeInteger(n) ? n : toTimestamp(buf.readBigInt64BE(pos));
}

/** A v2 batch's max timestamp exactly (the entry's `maxTimestamp` is a double); other entries as they are. */
export function exactMaxTimestamp(e: { magic: number; buf: Buffer; bufPos: number; maxTimestamp: number }): Timestamp {
  return e.magic === 2 && !Number.isSafeInteger(e.maxTimestamp) ? readTimestamp(e.buf, e.bufPos + 35) : e.maxTimestamp;
}

/** Writes an int64 timestamp given as a number (safe integer) or a bigint. */
export function writeTimestamp(buf: Buffer, pos: number, ts: Timestamp): void {
  if (typeof ts === 'bigint') buf.writeBigInt64BE(ts, pos);
  else writeInt64(buf, pos, ts);
}

/** A caller's timestamp as an exact int64, or a usage error (a non-integer number, a number beyond ±2^53, a bigint beyond int64). */
export function exactTimestamp(ts: Timestamp): bigint {
  if (typeof ts === 'bigint') {
    if (ts < INT64_MIN || ts > INT64_MAX) throw new LogtoolError('usage', `timestamp ${ts} is outside the int64 range of Kafka timestamps`);
    return ts;
  }
  if (!Number.isSafeInteger(ts)) throw new LogtoolError('usage', `timestamp ${ts} is not an integer within ±2^53; give a bigint for larger int64 values`);
  return BigInt(ts);
}

/** Reads the 61-byte v2 header at pos (caller guarantees the bytes are there). */
export function readBatchHeader(buf: Buffer, pos: number): BatchHeader {
  return {
    baseOffset: readInt64(buf, pos),
    batchLength: buf.readInt32BE(pos + 8),
    partitionLeaderEpoch: buf.readInt32BE(pos + 12),
    magic: buf.readInt8(pos + 16),
    crc: buf.readUInt32BE(pos + 17),
    attributes: buf.readInt16BE(pos + 21),
    lastOffsetDelta: buf.readInt32BE(pos + 23),
    baseTimestamp: readInt64(buf, pos + 27),
    maxTimestamp: readInt64(buf, pos + 35),
    producerId: readInt64(buf, pos + 43),
    producerEpoch: buf.readInt16BE(pos + 51),
    baseSequence: buf.readInt32BE(pos + 53),
    recordsCount: buf.readInt32BE(pos + 57),
  };
}

/** Computes the CRC-32C of the batch at pos whose total size is size. */
export function computeBatchCrc(buf: Buffer, pos: number, size: number): number {
  return crc32c(buf, pos + 21, pos + size);
}

export function isCrcValid(buf: Buffer, pos: number, h: BatchHeader): boolean {
  return computeBatchCrc(buf, pos, sizeOf(h)) === h.crc;
}

// ---------------------------------------------------------------------------------------------
// Encoding

export interface EncodeBatchOptions {
  baseOffset: number;
  /** Default −1 (no leader epoch). */
  partitionLeaderEpoch?: number;
  compression?: number;
  logAppendTime?: boolean;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  transactional?: boolean;
  control?: boolean;
  /** Timestamp given to records without one; default Date.now(). */
  nowMs?: number;
  /** Overrides (used by the cleaner to keep a batch's original offsets and horizon). */
  lastOffsetDelta?: number;
  baseTimestamp?: number;
  deleteHorizon?: boolean;
  /** Per-record offset deltas (default 0, 1, 2 …). */
  offsetDeltas?: number[];
  /**
   * Scratch space: an uncompressed batch that fits is encoded into it and the result is a view of
   * it, valid until the caller reuses the scratch (a log that writes the batch at once saves an
   * allocation and keeps the bytes cache-hot). Otherwise a new buffer is allocated.
   */
  into?: Buffer;
}

function headerBytes(headers: RecordHeader[] | undefined, keyLens: number[]): number {
  if (!headers || headers.length === 0) return 1;
  let n = sizeOfVarint(headers.length);
  for (const h of headers) {
    const kl = Buffer.byteLength(h.key, 'utf8');
    keyLens.push(kl);
    n += sizeOfVarint(kl) + kl;
    n += h.value === null ? 1 : sizeOfVarint(h.value.length) + h.value.length;
  }
  return n;
}

/**
 * The general writer's sizes (any record, headers included): each record's body size, the header
 * key lengths in order, and the total bytes of the records section. Exported for the tests that
 * check the fast path of encodeBatch against it.
 */
export function measureRecords(
  records: readonly RecordInput[],
  baseTimestamp: number,
  nowMs: number,
  offsetDeltas: number[] | undefined,
): { bodySizes: Int32Array; headerKeyLens: number[]; recordsBytes: number } {
  const bodySizes = new Int32Array(records.length);
  const headerKeyLens: number[] = [];
  let recordsBytes = 0;
  records.forEach((r, i) => {
    const key = r.key ?? null;
    const body =
      1 +
      (typeof r.timestamp === 'bigint' ? sizeOfVarlongBig(r.timestamp - BigInt(baseTimestamp)) : sizeOfVarlong((r.timestamp ?? nowMs) - baseTimestamp)) +
      sizeOfVarint(offsetDeltas ? offsetDeltas[i]! : i) +
      (key === null ? 1 : sizeOfVarint(key.length) + key.length) +
      (r.value === null ? 1 : sizeOfVarint(r.value.length) + r.value.length) +
      headerBytes(r.headers, headerKeyLens);
    bodySizes[i] = body;
    recordsBytes += sizeOfVarint(body) + body;
  });
  return { bodySizes, headerKeyLens, recordsBytes };
}

/** Encodes records (uncompressed) into buf at pos; returns the position after them. */
export function writeRecords(
  records: readonly RecordInput[],
  buf: Buffer,
  pos: number,
  baseTimestamp: number,
  nowMs: number,
  bodySizes: Int32Array,
  headerKeyLens: number[],
  offsetDeltas: number[] | undefined,
): number {
  let hk = 0;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    pos = writeVarint(buf, pos, bodySizes[i]!);
    buf[pos++] = 0;
    if (typeof r.timestamp === 'bigint') pos = writeVarlongBig(buf, pos, r.timestamp - BigInt(baseTimestamp));
    else pos = writeVarlong(buf, pos, (r.timestamp ?? nowMs) - baseTimestamp);
    pos = writeVarint(buf, pos, offsetDeltas ? offsetDeltas[i]! : i);
    const key = r.key ?? null;
    if (key === null) buf[pos++] = 1;
    else {
      pos = writeVarint(buf, pos, key.length);
      pos += key.copy(buf, pos);
    }
    const value = r.value;
    if (value === null) buf[pos++] = 1;
    else {
      pos = writeVarint(buf, pos, value.length);
      pos += value.copy(buf, pos);
    }
    const headers = r.headers;
    if (!headers || headers.length === 0) buf[pos++] = 0;
    else {
      pos = writeVarint(buf, pos, headers.length);
      for (const h of headers) {
        const kl = headerKeyLens[hk++]!;
        pos = writeVarint(buf, pos, kl);
        pos += buf.write(h.key, pos, kl, 'utf8');
        if (h.value === null) buf[pos++] = 1;
        else {
          pos = writeVarint(buf, pos, h.value.length);
          pos += h.value.copy(buf, pos);
        }
      }
    }
  }
  return pos;
}

/**
 * Encodes records as one v2 batch, CRC computed once. Returns a buffer holding exactly the batch.
 */
export function encodeBatch(records: readonly RecordInput[], opts: EncodeBatchOptions): Buffer {
  // Hot path of every append. Two passes over the records: sizes first (so the batch is one
  // exact allocation), then bytes. Zig-zag varints are inlined for int32-range values (every
  // length, delta and count in practice); varlong is only called for timestamp deltas beyond
  // int32. Records with headers and compressed batches take the general writer (writeRecords).
  const count = records.length;
  const nowMs = opts.nowMs ?? Date.now();
  const offsetDeltas = opts.offsetDeltas;
  let baseTimestamp = opts.baseTimestamp ?? (count > 0 ? (records[0]!.timestamp ?? nowMs) : -1);
  if (typeof baseTimestamp !== 'number' || !Number.isSafeInteger(baseTimestamp)) return encodeBatchExact(records, opts, nowMs);
  if (count === 0) baseTimestamp = opts.baseTimestamp ?? -1;
  let maxTimestamp = -1;
  const bodySizes = new Int32Array(count);
  let headerKeyLens: number[] | undefined;
  let anyHeaders = false;
  let recordsBytes = 0;
  for (let i = 0; i < count; i++) {
    const r = records[i]!;
    const ts = r.timestamp ?? nowMs;
    // Beyond ±2^53 (or not an integer): the exact path, which also validates.
    if (typeof ts !== 'number' || !Number.isSafeInteger(ts)) return encodeBatchExact(records, opts, nowMs);
    if (ts > maxTimestamp) maxTimestamp = ts;
    const tsDelta = ts - baseTimestamp;
    let body: number;
    if (tsDelta >= -0x80000000 && tsDelta <= 0x7fffffff) {
      const z = ((tsDelta << 1) ^ (tsDelta >> 31)) >>> 0;
      body = 1 + (z < 0x80 ? 1 : z < 0x4000 ? 2 : z < 0x200000 ? 3 : z < 0x10000000 ? 4 : 5);
    } else body = 1 + sizeOfVarlong(tsDelta);
    const od = offsetDeltas ? offsetDeltas[i]! : i;
    const zo = ((od << 1) ^ (od >> 31)) >>> 0;
    body += zo < 0x80 ? 1 : zo < 0x4000 ? 2 : zo < 0x200000 ? 3 : zo < 0x10000000 ? 4 : 5;
    const key = r.key;
    if (key == null) body += 1;
    else {
      const zk = key.length * 2;
      body += (zk < 0x80 ? 1 : zk < 0x4000 ? 2 : zk < 0x200000 ? 3 : zk < 0x10000000 ? 4 : 5) + key.length;
    }
    const value = r.value;
    if (value === null) body += 1;
    else {
      const zv = value.length * 2;
      body += (zv < 0x80 ? 1 : zv < 0x4000 ? 2 : zv < 0x200000 ? 3 : zv < 0x10000000 ? 4 : 5) + value.length;
    }
    const headers = r.headers;
    if (headers === undefined || headers.length === 0) body += 1;
    else {
      anyHeaders = true;
      body += headerBytes(headers, (headerKeyLens ??= []));
    }
    bodySizes[i] = body;
    const zb = body * 2;
    recordsBytes += (zb < 0x80 ? 1 : zb < 0x4000 ? 2 : zb < 0x200000 ? 3 : zb < 0x10000000 ? 4 : 5) + body;
  }
  const compression = opts.compression ?? CompressionType.none;
  let buf: Buffer;
  let end: number;
  const into = opts.into;
  if (compression === CompressionType.none && !anyHeaders) {
    const size = RECORD_BATCH_OVERHEAD + recordsBytes;
    buf = into !== undefined && into.length >= size ? into.subarray(0, size) : Buffer.allocUnsafe(size);
    let pos = RECORD_BATCH_OVERHEAD;
    for (let i = 0; i < count; i++) {
      const r = records[i]!;
      let v = bodySizes[i]! * 2;
      while (v >= 0x80) {
        buf[pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[pos++] = v;
      buf[pos++] = 0; // attributes
      const tsDelta = ((r.timestamp as number | undefined) ?? nowMs) - baseTimestamp; // numbers: checked in the first pass
      if (tsDelta >= -0x80000000 && tsDelta <= 0x7fffffff) {
        v = ((tsDelta << 1) ^ (tsDelta >> 31)) >>> 0;
        while (v >= 0x80) {
          buf[pos++] = (v & 0x7f) | 0x80;
          v >>>= 7;
        }
        buf[pos++] = v;
      } else pos = writeVarlong(buf, pos, tsDelta);
      const od = offsetDeltas ? offsetDeltas[i]! : i;
      v = ((od << 1) ^ (od >> 31)) >>> 0;
      while (v >= 0x80) {
        buf[pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[pos++] = v;
      const key = r.key;
      if (key == null) buf[pos++] = 1;
      else {
        v = key.length * 2;
        while (v >= 0x80) {
          buf[pos++] = (v & 0x7f) | 0x80;
          v >>>= 7;
        }
        buf[pos++] = v;
        buf.set(key, pos);
        pos += key.length;
      }
      const value = r.value;
      if (value === null) buf[pos++] = 1;
      else {
        v = value.length * 2;
        while (v >= 0x80) {
          buf[pos++] = (v & 0x7f) | 0x80;
          v >>>= 7;
        }
        buf[pos++] = v;
        buf.set(value, pos);
        pos += value.length;
      }
      buf[pos++] = 0; // header count
    }
    end = pos;
  } else if (compression === CompressionType.none) {
    const size = RECORD_BATCH_OVERHEAD + recordsBytes;
    buf = into !== undefined && into.length >= size ? into.subarray(0, size) : Buffer.allocUnsafe(size);
    end = writeRecords(records, buf, RECORD_BATCH_OVERHEAD, baseTimestamp, nowMs, bodySizes, headerKeyLens ?? [], offsetDeltas);
  } else {
    const raw = Buffer.allocUnsafe(recordsBytes);
    writeRecords(records, raw, 0, baseTimestamp, nowMs, bodySizes, headerKeyLens ?? [], offsetDeltas);
    buf = packRecords(compression, raw);
    end = buf.length;
  }
  writeBatchHeader(buf, end, opts, { compression, count, baseTimestamp, maxTimestamp, nowMs });
  return buf;
}

/**
 * encodeBatch for timestamps beyond ±2^53: exact int64 arithmetic. Deltas are taken modulo 2^64
 * as Kafka's `timestamp - baseTimestamp` on longs, and handed to the general writer relative to a
 * base of 0 (a number when small, else a bigint); the header then gets the exact base and max.
 */
function encodeBatchExact(records: readonly RecordInput[], opts: EncodeBatchOptions, nowMs: number): Buffer {
  const count = records.length;
  const exact = records.map((r) => exactTimestamp(r.timestamp ?? nowMs));
  const base = opts.baseTimestamp !== undefined ? exactTimestamp(opts.baseTimestamp) : count > 0 ? exact[0]! : -1n;
  let max = -1n;
  for (const t of exact) if (t > max) max = t;
  const relative = records.map((r, i) => ({ ...r, timestamp: toTimestamp(BigInt.asIntN(64, exact[i]! - base)) }));
  let buf: Buffer;
  if (relative.every((r) => typeof r.timestamp === 'number')) {
    buf = encodeBatch(relative, { ...opts, baseTimestamp: 0, nowMs, into: undefined });
  } else {
    // A delta beyond ±2^53 (timestamps far apart in one batch): the general writer's bigint varlongs.
    const compression = opts.compression ?? CompressionType.none;
    const { bodySizes, headerKeyLens, recordsBytes } = measureRecords(relative, 0, nowMs, opts.offsetDeltas);
    const raw = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + recordsBytes);
    const end = writeRecords(relative, raw, RECORD_BATCH_OVERHEAD, 0, nowMs, bodySizes, headerKeyLens, opts.offsetDeltas);
    buf = compression === CompressionType.none ? raw.subarray(0, end) : packRecords(compression, raw.subarray(RECORD_BATCH_OVERHEAD, end));
    writeBatchHeader(buf, buf.length, opts, { compression, count, baseTimestamp: 0, maxTimestamp: 0, nowMs });
  }
  writeTimestamp(buf, 27, toTimestamp(base));
  if (!opts.logAppendTime) writeTimestamp(buf, 35, toTimestamp(max));
  buf.writeUInt32BE(computeBatchCrc(buf, 0, buf.length), 17);
  return buf;
}

/** A batch buffer (header space left blank) holding the records section `raw` compressed with `compression`. */
function packRecords(compression: number, raw: Buffer): Buffer {
  const codec = codecFor(compression);
  if (!codec) throw new LogtoolError('unsupported', `compression ${compressionName(compression)} is not supported`);
  const packed = codec.compress(raw);
  const buf = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + packed.length);
  packed.copy(buf, RECORD_BATCH_OVERHEAD);
  return buf;
}

/** Writes the 61-byte v2 header of the batch in buf[0, end) and its CRC (records already in place). */
export function writeBatchHeader(
  buf: Buffer,
  end: number,
  opts: EncodeBatchOptions,
  fields: { compression: number; count: number; baseTimestamp: number; maxTimestamp: number; nowMs: number },
): void {
  const { compression, count, baseTimestamp, maxTimestamp, nowMs } = fields;
  const offsetDeltas = opts.offsetDeltas;
  let attributes = compression;
  if (opts.logAppendTime) attributes |= Attr.logAppendTime;
  if (opts.transactional) attributes |= Attr.transactional;
  if (opts.control) attributes |= Attr.control;
  if (opts.deleteHorizon) attributes |= Attr.deleteHorizon;
  writeInt64(buf, 0, opts.baseOffset);
  buf.writeInt32BE(end - LOG_OVERHEAD, 8);
  buf.writeInt32BE(opts.partitionLeaderEpoch ?? -1, 12);
  buf[16] = 2;
  buf.writeInt16BE(attributes, 21);
  buf.writeInt32BE(opts.lastOffsetDelta ?? (count > 0 ? (offsetDeltas ? offsetDeltas[count - 1]! : count - 1) : 0), 23);
  writeInt64(buf, 27, baseTimestamp);
  writeInt64(buf, 35, opts.logAppendTime ? nowMs : maxTimestamp);
  writeInt64(buf, 43, opts.producerId ?? -1);
  buf.writeInt16BE(opts.producerEpoch ?? -1, 51);
  buf.writeInt32BE(opts.baseSequence ?? -1, 53);
  buf.writeInt32BE(count, 57);
  buf.writeUInt32BE(computeBatchCrc(buf, 0, end), 17);
}

/** Rewrites the base offset of an encoded batch in place. The CRC does not cover it. */
export function setBaseOffset(batch: Buffer, pos: number, baseOffset: number): void {
  writeInt64(batch, pos, baseOffset);
}

// ---------------------------------------------------------------------------------------------
// Decoding

export interface DecodeOptions {
  /** Upper bound on the decompressed size of one batch (bytes). */
  maxDecompressedBytes?: number;
  /** For error messages. */
  file?: string;
  /** File position of the batch, for error messages. */
  filePosition?: number;
}

export const DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024;

/**
 * The records section of the batch at buf[pos…], decompressed if needed. Returns the buffer and
 * the range holding the concatenated records.
 */
export function recordsSection(buf: Buffer, pos: number, h: BatchHeader, opts: DecodeOptions = {}): { data: Buffer; start: number; end: number } {
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
  let out: Buffer;
  try {
    out = codec.decompress(buf.subarray(start, end), opts.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES);
  } catch (e) {
    if (e instanceof LogtoolError && e.kind !== 'corrupt') throw e;
    throw new CorruptDataError(`${where}: ${compressionName(codecId)} payload cannot be decompressed: ${(e as Error).message}`, opts.filePosition, opts.file);
  }
  return { data: out, start: 0, end: out.length };
}

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
  private readonly data: Buffer;
  private readonly end: number;
  private readonly logAppendTime: boolean;
  /** Each decoder has its own cursor: decoders of different batches may be interleaved. */
  private readonly c: VarintCursor;
  private index = 0;
  private done = false;

  constructor(buf: Buffer, pos: number, h: BatchHeader, opts: DecodeOptions = {}) {
    if (h.recordsCount < 0) throw corrupt(h, `negative record count ${h.recordsCount}`, opts);
    const { data, start, end } = recordsSection(buf, pos, h, opts);
    this.buf = buf;
    this.pos = pos;
    this.h = h;
    this.opts = opts;
    this.data = data;
    this.end = end;
    this.logAppendTime = (h.attributes & Attr.logAppendTime) !== 0;
    this.c = { pos: start };
  }

  /** The next record, or undefined after the last one (once nothing is left over). */
  next(): LogRecord | undefined {
    const { h, opts, data, end, c } = this;
    const i = this.index;
    if (i >= h.recordsCount) {
      if (!this.done && c.pos !== end) throw corrupt(h, `${end - c.pos} bytes remain after ${h.recordsCount} records`, opts);
      this.done = true;
      return undefined;
    }
    if (c.pos >= end) throw corrupt(h, `premature end of records: ${i} of ${h.recordsCount} read`, opts);
    const length = readVarint(data, c, end);
    const bodyStart = c.pos;
    if (length < 0 || bodyStart + length > end) throw corrupt(h, `record ${i} length ${length} exceeds the batch`, opts);
    const bodyEnd = bodyStart + length;
    c.pos++; // attributes
    const tsPos = c.pos;
    const tsDelta = readVarlong(data, c, bodyEnd);
    const offsetDelta = readVarint(data, c, bodyEnd);
    const keyLen = readVarint(data, c, bodyEnd);
    let key: Buffer | null = null;
    if (keyLen >= 0) {
      if (c.pos + keyLen > bodyEnd) throw corrupt(h, `record ${i} key runs past the record`, opts);
      key = data.subarray(c.pos, c.pos + keyLen);
      c.pos += keyLen;
    }
    const valueLen = readVarint(data, c, bodyEnd);
    let value: Buffer | null = null;
    if (valueLen >= 0) {
      if (c.pos + valueLen > bodyEnd) throw corrupt(h, `record ${i} value runs past the record`, opts);
      value = data.subarray(c.pos, c.pos + valueLen);
      c.pos += valueLen;
    }
    const headerCount = readVarint(data, c, bodyEnd);
    if (headerCount < 0 || headerCount > bodyEnd - c.pos) throw corrupt(h, `record ${i} has an invalid header count ${headerCount}`, opts);
    const headers: RecordHeader[] = [];
    for (let k = 0; k < headerCount; k++) {
      const hkLen = readVarint(data, c, bodyEnd);
      if (hkLen < 0 || c.pos + hkLen > bodyEnd) throw corrupt(h, `record ${i} header ${k} key is invalid`, opts);
      const hkey = data.toString('utf8', c.pos, c.pos + hkLen);
      c.pos += hkLen;
      const hvLen = readVarint(data, c, bodyEnd);
      let hval: Buffer | null = null;
      if (hvLen >= 0) {
        if (c.pos + hvLen > bodyEnd) throw corrupt(h, `record ${i} header ${k} value runs past the record`, opts);
        hval = data.subarray(c.pos, c.pos + hvLen);
        c.pos += hvLen;
      }
      headers.push({ key: hkey, value: hval });
    }
    if (c.pos !== bodyEnd) throw corrupt(h, `record ${i} declares ${length} bytes but holds ${c.pos - bodyStart}`, opts);
    this.index = i + 1;
    let timestamp: Timestamp = this.logAppendTime ? h.maxTimestamp : h.baseTimestamp + tsDelta;
    if (!Number.isSafeInteger(timestamp) || !Number.isSafeInteger(h.baseTimestamp) || !Number.isSafeInteger(tsDelta)) {
      const { buf, pos } = this;
      timestamp = this.logAppendTime ? readTimestamp(buf, pos + 35) : toTimestamp(BigInt.asIntN(64, buf.readBigInt64BE(pos + 27) + readVarlongBig(data, tsPos, bodyEnd)));
    }
    return {
      offset: h.baseOffset + offsetDelta,
      timestamp,
      key,
      value,
      headers,
    };
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
