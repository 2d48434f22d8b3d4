/**
 * What the cleaner needs of a v2 batch's records without building an object per record: a walk
 * that fills reusable typed arrays (offset delta, timestamp, key/value lengths, where the record's
 * unchanged tail starts), and the two writers Kafka's cleaner uses — a rebuilt batch keeping the
 * original base offset, last offset, producer fields, epoch and flags (MemoryRecords.filterTo →
 * buildRetainedRecordsInto), and the 61-byte empty batch (DefaultRecordBatch.writeEmptyHeader,
 * kafka-format.md §2.5).
 */
import { CorruptDataError, LogtoolError } from '../errors.js';
import { codecFor, compressionName, CompressionType } from '../format/compression.js';
import {
  Attr,
  computeBatchCrc,
  LOG_OVERHEAD,
  RECORD_BATCH_OVERHEAD,
  recordsSection,
  toTimestamp,
  writeInt64,
  writeTimestamp,
  type BatchHeader,
  type Timestamp,
} from '../format/record-batch.js';
import {
  readVarint,
  readVarlong,
  readVarlongBig,
  sizeOfVarint,
  sizeOfVarlong,
  sizeOfVarlongBig,
  writeVarint,
  writeVarlong,
  writeVarlongBig,
  type VarintCursor,
} from '../format/varint.js';
import { CONTROL_ABORT, CONTROL_COMMIT, type ControlMarker } from '../partition-state/producer-state.js';

/** Records of one batch, as parallel arrays (valid until the next walk). */
export class RecordRefs {
  count = 0;
  /** The buffer the positions below refer to (the batch's bytes or its decompressed records). */
  data: Buffer = Buffer.alloc(0);
  offsetDelta = new Int32Array(64);
  /** Record timestamp (LogAppendTime batches: the batch max timestamp); a double, exact within ±2^53. */
  timestamp = new Float64Array(64);
  /** The exact timestamps of the records whose timestamp lies beyond ±2^53 (rare), by record index. */
  exactTimestamps = new Map<number, bigint>();
  /** The batch's max timestamp exactly, when it lies beyond ±2^53. */
  exactMaxTimestamp: bigint | undefined;
  keyStart = new Int32Array(64);
  /** −1 for a null key. */
  keyLen = new Int32Array(64);
  /** −1 for a null value (tombstone). */
  valueLen = new Int32Array(64);
  /** Position of the key-length field: from here to recordEnd the bytes are copied unchanged. */
  tailStart = new Int32Array(64);
  recordEnd = new Int32Array(64);

  ensure(n: number): void {
    if (n <= this.offsetDelta.length) return;
    let cap = this.offsetDelta.length;
    while (cap < n) cap *= 2;
    const grow = <T extends Int32Array | Float64Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(cap);
      b.set(a);
      return b;
    };
    this.offsetDelta = grow(this.offsetDelta);
    this.timestamp = grow(this.timestamp);
    this.keyStart = grow(this.keyStart);
    this.keyLen = grow(this.keyLen);
    this.valueLen = grow(this.valueLen);
    this.tailStart = grow(this.tailStart);
    this.recordEnd = grow(this.recordEnd);
  }
}

const cur: VarintCursor = { pos: 0 };

/**
 * Walks the records of the v2 batch at buf[pos…] (decompressing if needed) into refs. Validates
 * what the cleaner relies on: record lengths, key and value lengths inside the record, and that
 * the records fill the section exactly (Kafka's "records still remaining" check).
 */
export function walkRecords(buf: Buffer, pos: number, h: BatchHeader, refs: RecordRefs, opts: { file?: string; filePosition?: number; maxDecompressedBytes?: number } = {}): void {
  const bad = (m: string) => new CorruptDataError(`batch at offset ${h.baseOffset}: ${m}`, opts.filePosition, opts.file);
  if (h.recordsCount < 0) throw bad(`negative record count ${h.recordsCount}`);
  const { data, start, end } = recordsSection(buf, pos, h, opts);
  const n = h.recordsCount;
  refs.ensure(n);
  refs.data = data;
  refs.count = n;
  refs.exactTimestamps.clear();
  refs.exactMaxTimestamp = Number.isSafeInteger(h.maxTimestamp) ? undefined : buf.readBigInt64BE(pos + 35);
  const logAppendTime = (h.attributes & Attr.logAppendTime) !== 0;
  cur.pos = start;
  for (let i = 0; i < n; i++) {
    if (cur.pos >= end) throw bad(`premature end of records: ${i} of ${n} read`);
    const length = readVarint(data, cur, end);
    const bodyStart = cur.pos;
    const bodyEnd = bodyStart + length;
    if (length < 0 || bodyEnd > end) throw bad(`record ${i} length ${length} exceeds the batch`);
    cur.pos++; // attributes
    const tsPos = cur.pos;
    const tsDelta = readVarlong(data, cur, bodyEnd);
    refs.offsetDelta[i] = readVarint(data, cur, bodyEnd);
    refs.tailStart[i] = cur.pos;
    const keyLen = readVarint(data, cur, bodyEnd);
    refs.keyLen[i] = keyLen;
    refs.keyStart[i] = cur.pos;
    if (keyLen > 0) {
      if (cur.pos + keyLen > bodyEnd) throw bad(`record ${i} key runs past the record`);
      cur.pos += keyLen;
    }
    const valueLen = readVarint(data, cur, bodyEnd);
    if (valueLen > 0 && cur.pos + valueLen > bodyEnd) throw bad(`record ${i} value runs past the record`);
    refs.valueLen[i] = valueLen;
    refs.recordEnd[i] = bodyEnd;
    const ts = logAppendTime ? h.maxTimestamp : h.baseTimestamp + tsDelta;
    refs.timestamp[i] = ts;
    if (!Number.isSafeInteger(ts) || !Number.isSafeInteger(h.baseTimestamp) || !Number.isSafeInteger(tsDelta)) {
      refs.exactTimestamps.set(i, logAppendTime ? refs.exactMaxTimestamp! : BigInt.asIntN(64, buf.readBigInt64BE(pos + 27) + readVarlongBig(data, tsPos, bodyEnd)));
    }
    cur.pos = bodyEnd;
  }
  if (cur.pos !== end) throw bad(`${end - cur.pos} bytes remain after ${n} records`);
}

export interface RebuildOptions {
  /** Delete horizon to stamp (bit 6 + baseTimestamp), or undefined for none. */
  deleteHorizonMs: number | undefined;
}

/** Where a writer puts a batch of `size` bytes: a buffer and the position in it. */
export type Allocate = (size: number) => { buf: Buffer; pos: number };

const allocFresh: Allocate = (size) => ({ buf: Buffer.allocUnsafe(size), pos: 0 });
let rawScratch = Buffer.allocUnsafe(64 * 1024);

/**
 * Rebuilds a batch holding only the records `keep` (indexes into refs, ascending) with the same
 * codec, base offset, last offset, producer fields, leader epoch and flags. The base timestamp is
 * the horizon when one is set, else the first retained record's timestamp; deltas are recomputed
 * against it; max timestamp is the max of the retained records (the original for LogAppendTime).
 * Writes into what `alloc` returns (default: a new buffer); returns the batch's bytes.
 */
export function rebuildBatch(h: BatchHeader, refs: RecordRefs, keep: Int32Array, keepCount: number, opts: RebuildOptions, alloc: Allocate = allocFresh): Buffer {
  const data = refs.data;
  const logAppendTime = (h.attributes & Attr.logAppendTime) !== 0;
  const horizon = opts.deleteHorizonMs;
  if (refs.exactTimestamps.size > 0 || (logAppendTime && refs.exactMaxTimestamp !== undefined)) return rebuildBatchExact(h, refs, keep, keepCount, opts, alloc);
  const baseTimestamp = horizon !== undefined ? horizon : refs.timestamp[keep[0]!]!;
  let maxTimestamp = -1;
  let recordsBytes = 0;
  for (let k = 0; k < keepCount; k++) {
    const i = keep[k]!;
    const ts = refs.timestamp[i]!;
    if (ts > maxTimestamp) maxTimestamp = ts;
    const body = 1 + sizeOfVarlong(ts - baseTimestamp) + sizeOfVarint(refs.offsetDelta[i]!) + (refs.recordEnd[i]! - refs.tailStart[i]!);
    recordsBytes += sizeOfVarint(body) + body;
  }
  if (logAppendTime) maxTimestamp = h.maxTimestamp;
  const writeRecords = (out: Buffer, at: number): number => {
    let p = at;
    for (let k = 0; k < keepCount; k++) {
      const i = keep[k]!;
      const tsDelta = refs.timestamp[i]! - baseTimestamp;
      const tailLen = refs.recordEnd[i]! - refs.tailStart[i]!;
      const body = 1 + sizeOfVarlong(tsDelta) + sizeOfVarint(refs.offsetDelta[i]!) + tailLen;
      p = writeVarint(out, p, body);
      out[p++] = 0;
      p = writeVarlong(out, p, tsDelta);
      p = writeVarint(out, p, refs.offsetDelta[i]!);
      p += data.copy(out, p, refs.tailStart[i]!, refs.recordEnd[i]!);
    }
    return p;
  };
  return assembleBatch(h, recordsBytes, writeRecords, { horizon, baseTimestamp, maxTimestamp, recordsCount: keepCount }, alloc);
}

/** The rebuilt batch around records that `writeRecords` writes (compressed with the batch's codec), with its header. */
function assembleBatch(
  h: BatchHeader,
  recordsBytes: number,
  writeRecords: (out: Buffer, at: number) => number,
  f: { horizon: number | undefined; baseTimestamp: Timestamp; maxTimestamp: Timestamp; recordsCount: number },
  alloc: Allocate,
): Buffer {
  const codecId = h.attributes & Attr.compressionMask;
  let region: { buf: Buffer; pos: number };
  let size: number;
  if (codecId === CompressionType.none) {
    size = RECORD_BATCH_OVERHEAD + recordsBytes;
    region = alloc(size);
    writeRecords(region.buf, region.pos + RECORD_BATCH_OVERHEAD);
  } else {
    const codec = codecFor(codecId);
    if (!codec) throw new LogtoolError('unsupported', `batch at offset ${h.baseOffset} uses codec ${compressionName(codecId)}, which cannot be written yet`);
    if (rawScratch.length < recordsBytes) rawScratch = Buffer.allocUnsafe(recordsBytes);
    writeRecords(rawScratch, 0);
    const packed = codec.compress(rawScratch.subarray(0, recordsBytes));
    size = RECORD_BATCH_OVERHEAD + packed.length;
    region = alloc(size);
    packed.copy(region.buf, region.pos + RECORD_BATCH_OVERHEAD);
  }
  let attributes = h.attributes & (Attr.compressionMask | Attr.logAppendTime | Attr.transactional | Attr.control);
  if (f.horizon !== undefined) attributes |= Attr.deleteHorizon;
  const batch = region.buf.subarray(region.pos, region.pos + size);
  writeHeader(batch, h, { attributes, baseTimestamp: f.baseTimestamp, maxTimestamp: f.maxTimestamp, recordsCount: f.recordsCount });
  return batch;
}

/**
 * rebuildBatch when a timestamp lies beyond ±2^53: the same batch, with exact int64 arithmetic
 * (deltas modulo 2^64, as Kafka's longs), so that compaction never rounds a timestamp.
 */
function rebuildBatchExact(h: BatchHeader, refs: RecordRefs, keep: Int32Array, keepCount: number, opts: RebuildOptions, alloc: Allocate): Buffer {
  const data = refs.data;
  const tsOf = (i: number): bigint => refs.exactTimestamps.get(i) ?? BigInt(refs.timestamp[i]!);
  const horizon = opts.deleteHorizonMs;
  const base = horizon !== undefined ? BigInt(horizon) : tsOf(keep[0]!);
  let max = -1n;
  const deltas: bigint[] = [];
  let recordsBytes = 0;
  for (let k = 0; k < keepCount; k++) {
    const i = keep[k]!;
    const ts = tsOf(i);
    if (ts > max) max = ts;
    deltas.push(BigInt.asIntN(64, ts - base));
    const body = 1 + sizeOfVarlongBig(deltas[k]!) + sizeOfVarint(refs.offsetDelta[i]!) + (refs.recordEnd[i]! - refs.tailStart[i]!);
    recordsBytes += sizeOfVarint(body) + body;
  }
  if ((h.attributes & Attr.logAppendTime) !== 0) max = refs.exactMaxTimestamp ?? BigInt(h.maxTimestamp);
  const writeRecords = (out: Buffer, at: number): number => {
    let p = at;
    for (let k = 0; k < keepCount; k++) {
      const i = keep[k]!;
      const body = 1 + sizeOfVarlongBig(deltas[k]!) + sizeOfVarint(refs.offsetDelta[i]!) + (refs.recordEnd[i]! - refs.tailStart[i]!);
      p = writeVarint(out, p, body);
      out[p++] = 0;
      p = writeVarlongBig(out, p, deltas[k]!);
      p = writeVarint(out, p, refs.offsetDelta[i]!);
      p += data.copy(out, p, refs.tailStart[i]!, refs.recordEnd[i]!);
    }
    return p;
  };
  return assembleBatch(h, recordsBytes, writeRecords, { horizon, baseTimestamp: toTimestamp(base), maxTimestamp: toTimestamp(max), recordsCount: keepCount }, alloc);
}

/**
 * Kafka's writeEmptyHeader: 61 bytes, no records, compression none, base timestamp −1, the
 * original max timestamp, base and last offset, producer fields, epoch, timestamp type,
 * transactional and control flags; delete-horizon bit clear.
 */
export function emptyBatch(h: BatchHeader, alloc: Allocate = allocFresh, exactMaxTimestamp?: bigint): Buffer {
  const region = alloc(RECORD_BATCH_OVERHEAD);
  const batch = region.buf.subarray(region.pos, region.pos + RECORD_BATCH_OVERHEAD);
  const attributes = h.attributes & (Attr.logAppendTime | Attr.transactional | Attr.control);
  writeHeader(batch, h, { attributes, baseTimestamp: -1, maxTimestamp: exactMaxTimestamp !== undefined ? toTimestamp(exactMaxTimestamp) : h.maxTimestamp, recordsCount: 0 });
  return batch;
}

function writeHeader(batch: Buffer, h: BatchHeader, f: { attributes: number; baseTimestamp: Timestamp; maxTimestamp: Timestamp; recordsCount: number }): void {
  writeInt64(batch, 0, h.baseOffset);
  batch.writeInt32BE(batch.length - LOG_OVERHEAD, 8);
  batch.writeInt32BE(h.partitionLeaderEpoch, 12);
  batch[16] = 2;
  batch.writeInt16BE(f.attributes, 21);
  batch.writeInt32BE(h.lastOffsetDelta, 23);
  writeTimestamp(batch, 27, f.baseTimestamp);
  writeTimestamp(batch, 35, f.maxTimestamp);
  writeInt64(batch, 43, h.producerId);
  batch.writeInt16BE(h.producerEpoch, 51);
  batch.writeInt32BE(h.baseSequence, 53);
  batch.writeInt32BE(f.recordsCount, 57);
  batch.writeUInt32BE(computeBatchCrc(batch, 0, batch.length), 17);
}

/** The control record type of a control batch (0 ABORT, 1 COMMIT, …), or undefined if it has no record. */
export function controlType(refs: RecordRefs): number | undefined {
  if (refs.count < 1) return undefined;
  const len = refs.keyLen[0]!;
  if (len < 4) return -1;
  const version = refs.data.readInt16BE(refs.keyStart[0]!);
  if (version < 0) return -1;
  return refs.data.readInt16BE(refs.keyStart[0]! + 2);
}

/** The control record's type and, for an end-transaction marker, its coordinator epoch (−1 if none). */
export function controlMarker(refs: RecordRefs): ControlMarker | undefined {
  const type = controlType(refs);
  if (type === undefined) return undefined;
  let coordinatorEpoch = -1;
  const valueLen = refs.valueLen[0]!;
  if ((type === CONTROL_ABORT || type === CONTROL_COMMIT) && valueLen >= 6) {
    const at = refs.keyStart[0]! + Math.max(refs.keyLen[0]!, 0) + sizeOfVarint(valueLen);
    coordinatorEpoch = refs.data.readInt32BE(at + 2);
  }
  return { type, coordinatorEpoch };
}

export { CONTROL_ABORT, CONTROL_COMMIT };
