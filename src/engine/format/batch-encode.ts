/**
 * RecordBatch v2 encoding (Kafka's MemoryRecordsBuilder / DefaultRecord.writeTo): records to one
 * batch, CRC computed once, the header written last. Layout in ../shared/docs/kafka-format.md §2.
 */
import { LogtoolError } from '../errors.js';
import { codecFor, compressionName, CompressionType } from './compression.js';
import { sizeOfVarint, sizeOfVarlong, sizeOfVarlongBig, writeVarint, writeVarlong, writeVarlongBig } from './varint.js';
import { headerBytes, measureFast, onePassMaxTimestamp, writeRecordsOnePass } from './record-writer.js';
import {
  Attr,
  LOG_OVERHEAD,
  RECORD_BATCH_OVERHEAD,
  computeBatchCrc,
  exactTimestamp,
  putInt32,
  toTimestamp,
  writeInt64,
  writeTimestamp,
  type RecordInput,
} from './batch-header.js';

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

/** A batch just encoded, with what the log needs of it, so that it never reads its own bytes back. */
export interface EncodedBatch {
  /** Exactly the batch; its base offset is opts.baseOffset. */
  buf: Buffer;
  /** The header's lastOffsetDelta. */
  lastOffsetDelta: number;
  /** The header's record count. */
  count: number;
  /** The header's maxTimestamp (the append time under LogAppendTime) as a double, as the indexes take it. */
  maxTimestamp: number;
}

/**
 * Encodes records as one v2 batch, CRC computed once. Returns a buffer holding exactly the batch.
 */
export function encodeBatch(records: readonly RecordInput[], opts: EncodeBatchOptions): Buffer {
  return encodeRecordBatch(records, opts).buf;
}

/** encodeBatch, returning with the bytes the header fields the log needs (see EncodedBatch). */
export function encodeRecordBatch(records: readonly RecordInput[], opts: EncodeBatchOptions): EncodedBatch {
  // Hot path of every append (record-writer.ts). Into the caller's scratch space, one pass over
  // the records; otherwise two: sizes first (so the batch is one exact allocation), then bytes.
  // Records with headers and compressed batches take the general writer (writeRecords).
  const count = records.length;
  const nowMs = opts.nowMs ?? Date.now();
  const offsetDeltas = opts.offsetDeltas;
  const into = opts.into;
  if (into !== undefined) {
    // The append path's case: one pass straight into the caller's scratch space.
    const end = encodeBatchAt(records, opts, into, 0, nowMs);
    if (end >= 0) return { buf: into.subarray(0, end), count, lastOffsetDelta: headerLastOffsetDelta, maxTimestamp: headerMaxTimestamp };
  }
  let baseTimestamp = opts.baseTimestamp ?? (count > 0 ? (records[0]!.timestamp ?? nowMs) : -1);
  if (typeof baseTimestamp !== 'number' || !Number.isSafeInteger(baseTimestamp)) return encodeBatchExact(records, opts, nowMs);
  if (count === 0) baseTimestamp = opts.baseTimestamp ?? -1;
  const compression = opts.compression ?? CompressionType.none;
  const sizes = measureFast(records, baseTimestamp, nowMs, offsetDeltas);
  if (sizes === undefined) return encodeBatchExact(records, opts, nowMs);
  const { bodySizes, headerKeyLens, recordsBytes, maxTimestamp } = sizes;
  let buf: Buffer;
  let end: number;
  if (compression === CompressionType.none) {
    const size = RECORD_BATCH_OVERHEAD + recordsBytes;
    buf = into !== undefined && into.length >= size ? into.subarray(0, size) : Buffer.allocUnsafe(size);
    end =
      headerKeyLens === undefined
        ? writeRecordsOnePass(records, buf, 0, Infinity, baseTimestamp, nowMs, offsetDeltas)
        : writeRecords(records, buf, RECORD_BATCH_OVERHEAD, baseTimestamp, nowMs, bodySizes, headerKeyLens, offsetDeltas);
  } else {
    const raw = Buffer.allocUnsafe(recordsBytes);
    writeRecords(records, raw, 0, baseTimestamp, nowMs, bodySizes, headerKeyLens ?? [], offsetDeltas);
    buf = packRecords(compression, raw);
    end = buf.length;
  }
  putBatchHeader(buf, 0, end, opts, compression, count, baseTimestamp, maxTimestamp, nowMs);
  return { buf, count, lastOffsetDelta: headerLastOffsetDelta, maxTimestamp: headerMaxTimestamp };
}

/**
 * The append path's encoder: an uncompressed batch written at `start` of `into` (append's scratch
 * space or the buffered write buffer) in one pass over the records, header and CRC last, with no
 * view or result object per batch. Returns the batch's end in `into` — its lastOffsetDelta and
 * maxTimestamp in headerLastOffsetDelta / headerMaxTimestamp — or −1, with `into` from `start` on
 * partly overwritten, when the batch is compressed, has records with headers or timestamps that
 * are not safe integers, or might not fit before `into.length`: encodeRecordBatch then measures.
 */
export function encodeBatchAt(records: readonly RecordInput[], opts: EncodeBatchOptions, into: Buffer, start: number, nowMs = opts.nowMs ?? Date.now()): number {
  const count = records.length;
  const baseTimestamp = opts.baseTimestamp ?? (count > 0 ? (records[0]!.timestamp ?? nowMs) : -1);
  if ((opts.compression ?? CompressionType.none) !== CompressionType.none) return -1;
  if (typeof baseTimestamp !== 'number' || !Number.isSafeInteger(baseTimestamp)) return -1;
  const end = writeRecordsOnePass(records, into, start, into.length, baseTimestamp, nowMs, opts.offsetDeltas);
  if (end < 0) return -1;
  putBatchHeader(into, start, end, opts, CompressionType.none, count, baseTimestamp, onePassMaxTimestamp, nowMs);
  return end;
}

/**
 * encodeBatch for timestamps beyond ±2^53: exact int64 arithmetic. Deltas are taken modulo 2^64
 * as Kafka's `timestamp - baseTimestamp` on longs, and handed to the general writer relative to a
 * base of 0 (a number when small, else a bigint); the header then gets the exact base and max.
 */
function encodeBatchExact(records: readonly RecordInput[], opts: EncodeBatchOptions, nowMs: number): EncodedBatch {
  const count = records.length;
  const exact = records.map((r) => exactTimestamp(r.timestamp ?? nowMs));
  const base = opts.baseTimestamp !== undefined ? exactTimestamp(opts.baseTimestamp) : count > 0 ? exact[0]! : -1n;
  let max = -1n;
  for (const t of exact) if (t > max) max = t;
  const relative = records.map((r, i) => ({ ...r, timestamp: toTimestamp(BigInt.asIntN(64, exact[i]! - base)) }));
  let buf: Buffer;
  let lastOffsetDelta: number;
  if (relative.every((r) => typeof r.timestamp === 'number')) {
    ({ buf, lastOffsetDelta } = encodeRecordBatch(relative, { ...opts, baseTimestamp: 0, nowMs, into: undefined }));
  } else {
    // A delta beyond ±2^53 (timestamps far apart in one batch): the general writer's bigint varlongs.
    const compression = opts.compression ?? CompressionType.none;
    const { bodySizes, headerKeyLens, recordsBytes } = measureRecords(relative, 0, nowMs, opts.offsetDeltas);
    const raw = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + recordsBytes);
    const end = writeRecords(relative, raw, RECORD_BATCH_OVERHEAD, 0, nowMs, bodySizes, headerKeyLens, opts.offsetDeltas);
    buf = compression === CompressionType.none ? raw.subarray(0, end) : packRecords(compression, raw.subarray(RECORD_BATCH_OVERHEAD, end));
    ({ lastOffsetDelta } = writeBatchHeader(buf, buf.length, opts, { compression, count, baseTimestamp: 0, maxTimestamp: 0, nowMs }));
  }
  writeTimestamp(buf, 27, toTimestamp(base));
  if (!opts.logAppendTime) writeTimestamp(buf, 35, toTimestamp(max));
  buf.writeUInt32BE(computeBatchCrc(buf, 0, buf.length), 17);
  // Number(bigint) rounds to nearest as reading the int64 back as a double does.
  return { buf, lastOffsetDelta, count, maxTimestamp: opts.logAppendTime ? nowMs : Number(max) };
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

/** The lastOffsetDelta and maxTimestamp putBatchHeader last wrote (module variables: no result object per batch). */
export let headerLastOffsetDelta = 0;
export let headerMaxTimestamp = -1;

/** An int64 at pos: byte stores for a safe integer (every offset and timestamp in practice), else writeInt64. */
function putInt64(buf: Buffer, pos: number, n: number): void {
  if (!Number.isSafeInteger(n)) return writeInt64(buf, pos, n);
  const hi = Math.floor(n / 4294967296);
  putInt32(buf, pos, hi);
  putInt32(buf, pos + 4, n - hi * 4294967296);
}

/**
 * Writes the 61-byte v2 header of the batch in buf[start, end) and its CRC (records already in
 * place); headerLastOffsetDelta and headerMaxTimestamp get what it wrote (writeBatchHeader's
 * result, without an object per batch). Fields the caller may
 * set (leader epoch, producer id, epoch, sequence, an explicit lastOffsetDelta) keep Buffer's
 * range checks; the defaults and the encoder's own numbers are stored byte by byte.
 */
export function putBatchHeader(buf: Buffer, start: number, end: number, opts: EncodeBatchOptions, compression: number, count: number, baseTimestamp: number, maxTimestamp: number, nowMs: number): void {
  const offsetDeltas = opts.offsetDeltas;
  let attributes = compression;
  if (opts.logAppendTime) attributes |= Attr.logAppendTime;
  if (opts.transactional) attributes |= Attr.transactional;
  if (opts.control) attributes |= Attr.control;
  if (opts.deleteHorizon) attributes |= Attr.deleteHorizon;
  putInt64(buf, start, opts.baseOffset);
  putInt32(buf, start + 8, end - start - LOG_OVERHEAD);
  if (opts.partitionLeaderEpoch === undefined) putInt32(buf, start + 12, -1);
  else buf.writeInt32BE(opts.partitionLeaderEpoch, start + 12);
  buf[start + 16] = 2;
  buf[start + 21] = attributes >>> 8;
  buf[start + 22] = attributes;
  const lastOffsetDelta = opts.lastOffsetDelta ?? (count > 0 ? (offsetDeltas ? offsetDeltas[count - 1]! : count - 1) : 0);
  const headerMax = opts.logAppendTime ? nowMs : maxTimestamp;
  if (opts.lastOffsetDelta === undefined) putInt32(buf, start + 23, lastOffsetDelta);
  else buf.writeInt32BE(lastOffsetDelta, start + 23);
  putInt64(buf, start + 27, baseTimestamp);
  putInt64(buf, start + 35, headerMax);
  if (opts.producerId === undefined) putInt64(buf, start + 43, -1);
  else writeInt64(buf, start + 43, opts.producerId);
  if (opts.producerEpoch === undefined) buf[start + 51] = buf[start + 52] = 0xff;
  else buf.writeInt16BE(opts.producerEpoch, start + 51);
  if (opts.baseSequence === undefined) putInt32(buf, start + 53, -1);
  else buf.writeInt32BE(opts.baseSequence, start + 53);
  putInt32(buf, start + 57, count);
  putInt32(buf, start + 17, computeBatchCrc(buf, start, end - start));
  headerLastOffsetDelta = lastOffsetDelta;
  headerMaxTimestamp = headerMax;
}

/**
 * Writes the 61-byte v2 header of the batch in buf[0, end) and its CRC (records already in place).
 * Returns the lastOffsetDelta and maxTimestamp it wrote.
 */
export function writeBatchHeader(
  buf: Buffer,
  end: number,
  opts: EncodeBatchOptions,
  fields: { compression: number; count: number; baseTimestamp: number; maxTimestamp: number; nowMs: number },
): { lastOffsetDelta: number; maxTimestamp: number } {
  putBatchHeader(buf, 0, end, opts, fields.compression, fields.count, fields.baseTimestamp, fields.maxTimestamp, fields.nowMs);
  return { lastOffsetDelta: headerLastOffsetDelta, maxTimestamp: headerMaxTimestamp };
}

/** Rewrites the base offset of an encoded batch in place. The CRC does not cover it. */
export function setBaseOffset(batch: Buffer, pos: number, baseOffset: number): void {
  writeInt64(batch, pos, baseOffset);
}
