/**
 * RecordBatch v2 (magic 2) header: constants, the record and header types, int64/timestamp
 * helpers, the header reader and the CRC. Layout in ../shared/docs/kafka-format.md §2 (Kafka's
 * DefaultRecordBatch). All fixed-width fields big-endian; the CRC-32C covers bytes [21, end).
 */
import { InvalidArgumentError } from '../errors.js';
import { crc32c } from './crc32c.js';

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
  /** A record read without headers has Kafka's shared empty array (frozen), not one of its own. */
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

/** An int32 (or uint32) at pos, big-endian, by byte stores (no range check: the caller's value is known to fit). */
export function putInt32(buf: Buffer, pos: number, v: number): void {
  buf[pos] = v >>> 24;
  buf[pos + 1] = v >>> 16;
  buf[pos + 2] = v >>> 8;
  buf[pos + 3] = v;
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

/** A caller's timestamp as an exact int64, or an invalid-argument error (a non-integer number, a number beyond ±2^53, a bigint beyond int64). */
export function exactTimestamp(ts: Timestamp): bigint {
  if (typeof ts === 'bigint') {
    if (ts < INT64_MIN || ts > INT64_MAX) throw new InvalidArgumentError(['timestamp'], `timestamp ${ts} is outside the int64 range of Kafka timestamps`);
    return ts;
  }
  if (!Number.isSafeInteger(ts)) throw new InvalidArgumentError(['timestamp'], `timestamp ${ts} is not an integer within ±2^53; give a bigint for larger int64 values`);
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
