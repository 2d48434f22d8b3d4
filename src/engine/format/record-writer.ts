/**
 * The hot path of record encoding (Kafka's DefaultRecord.sizeInBytes and writeTo, kafka-format.md
 * §2): records without headers, uncompressed, with zig-zag varints inlined for int32-range values
 * (every length, delta and count in practice); varlong only for timestamp deltas beyond int32.
 * batch-encode.ts builds the batch around them; records with headers and compressed batches take
 * its general writer.
 */
import { sizeOfVarint, sizeOfVarlong, writeVarlong } from './varint.js';
import type { RecordHeader, RecordInput } from './batch-header.js';
import { RECORD_BATCH_OVERHEAD } from './batch-header.js';

/** Bytes of a record's headers section; pushes each header key's UTF-8 length to keyLens. */
export function headerBytes(headers: RecordHeader[] | undefined, keyLens: number[]): number {
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

/** Bytes of the unsigned varint of z (a zig-zag value below 2^32). */
export function uvarintBytes(z: number): number {
  return z < 0x80 ? 1 : z < 0x4000 ? 2 : z < 0x200000 ? 3 : z < 0x10000000 ? 4 : 5;
}

/** Writes the unsigned varint of z (a zig-zag value below 2^32) at pos; returns the position after it. */
export function putUvarint(into: Buffer, pos: number, z: number): number {
  // One and two bytes (deltas, lengths below 8 KiB) without the loop.
  if (z < 0x80) {
    into[pos] = z;
    return pos + 1;
  }
  if (z < 0x4000) {
    into[pos] = z | 0x80;
    into[pos + 1] = z >>> 7;
    return pos + 2;
  }
  while (z >= 0x80) {
    into[pos++] = (z & 0x7f) | 0x80;
    z >>>= 7;
  }
  into[pos] = z;
  return pos + 1;
}

/** A key or value field: varint −1 for null, else the varint length and the bytes. */
function putBytesField(into: Buffer, pos: number, bytes: Buffer | null | undefined): number {
  if (bytes == null) {
    into[pos] = 1;
    return pos + 1;
  }
  pos = putUvarint(into, pos, bytes.length * 2);
  into.set(bytes, pos);
  return pos + bytes.length;
}

/** measureFast's result; `headerKeyLens` is set only when some record has headers. */
export interface FastSizes {
  bodySizes: Int32Array;
  headerKeyLens: number[] | undefined;
  recordsBytes: number;
  maxTimestamp: number;
}

/** Sizes of each record and of the records section; undefined when a timestamp needs the exact (int64) path. */
export function measureFast(records: readonly RecordInput[], baseTimestamp: number, nowMs: number, offsetDeltas: number[] | undefined): FastSizes | undefined {
  const count = records.length;
  let maxTimestamp = -1;
  const bodySizes = new Int32Array(count);
  let headerKeyLens: number[] | undefined;
  let anyHeaders = false;
  let recordsBytes = 0;
  for (let i = 0; i < count; i++) {
    const r = records[i]!;
    const ts = r.timestamp ?? nowMs;
    // Beyond ±2^53 (or not an integer): the exact path, which also validates.
    if (typeof ts !== 'number' || !Number.isSafeInteger(ts)) return undefined;
    if (ts > maxTimestamp) maxTimestamp = ts;
    const tsDelta = ts - baseTimestamp;
    let body: number;
    if (tsDelta >= -0x80000000 && tsDelta <= 0x7fffffff) {
      const z = ((tsDelta << 1) ^ (tsDelta >> 31)) >>> 0;
      body = 1 + uvarintBytes(z);
    } else body = 1 + sizeOfVarlong(tsDelta);
    const od = offsetDeltas ? offsetDeltas[i]! : i;
    const zo = ((od << 1) ^ (od >> 31)) >>> 0;
    body += uvarintBytes(zo);
    const key = r.key;
    body += key == null ? 1 : uvarintBytes(key.length * 2) + key.length;
    const value = r.value;
    body += value === null ? 1 : uvarintBytes(value.length * 2) + value.length;
    const headers = r.headers;
    if (headers === undefined || headers.length === 0) body += 1;
    else {
      anyHeaders = true;
      body += headerBytes(headers, (headerKeyLens ??= []));
    }
    bodySizes[i] = body;
    recordsBytes += uvarintBytes(body * 2) + body;
  }
  return { bodySizes, headerKeyLens: anyHeaders ? headerKeyLens : undefined, recordsBytes, maxTimestamp };
}

/** The max timestamp of the records writeRecordsOnePass last wrote (a module variable: no result object per batch). */
export let onePassMaxTimestamp = -1;

/** Upper bound of one record's bytes beyond its key and value: length, attributes, timestamp and offset deltas, key and value lengths, header count. */
const RECORD_FIELDS_MAX_BYTES = 5 + 1 + 10 + 5 + 5 + 5 + 1;

/**
 * Records without headers, uncompressed, written in one pass after the header of a batch that
 * starts at `start`: each record's size is computed just before its bytes (the sizes of
 * measureFast). `limit` bounds the bytes written: the end of scratch space given by the caller, or
 * Infinity for a buffer sized by measureFast. Returns the end of the records (onePassMaxTimestamp
 * set), or −1 — with `into` partly overwritten — for a record with headers or a timestamp that is
 * not a safe integer, or when the next record might not fit under `limit`: the caller then
 * measures first.
 */
export function writeRecordsOnePass(records: readonly RecordInput[], into: Buffer, start: number, limit: number, baseTimestamp: number, nowMs: number, offsetDeltas: number[] | undefined): number {
  if (start + RECORD_BATCH_OVERHEAD > limit) return -1;
  return writeRecordsFrom(records, into, start + RECORD_BATCH_OVERHEAD, limit, baseTimestamp, nowMs, offsetDeltas, 0);
}

/**
 * writeRecordsOnePass's loop from `pos`, the first record's offset delta `firstOffsetDelta` (when
 * offsetDeltas gives none): also what extends an open batch (log/open-batch.ts) behind its last record.
 */
export function writeRecordsFrom(records: readonly RecordInput[], into: Buffer, pos: number, limit: number, baseTimestamp: number, nowMs: number, offsetDeltas: number[] | undefined, firstOffsetDelta: number): number {
  const count = records.length;
  let maxTimestamp = -1;
  for (let i = 0; i < count; i++) {
    const r = records[i]!;
    const headers = r.headers;
    if (headers !== undefined && headers.length > 0) return -1;
    const ts = r.timestamp ?? nowMs;
    if (typeof ts !== 'number' || !Number.isSafeInteger(ts)) return -1;
    const key = r.key;
    const value = r.value;
    const keyBytes = key == null ? 0 : key.length;
    const valueBytes = value === null ? 0 : value.length;
    if (pos + RECORD_FIELDS_MAX_BYTES + keyBytes + valueBytes > limit) return -1;
    if (ts > maxTimestamp) maxTimestamp = ts;
    const tsDelta = ts - baseTimestamp;
    const tsSmall = tsDelta >= -0x80000000 && tsDelta <= 0x7fffffff;
    const zt = tsSmall ? ((tsDelta << 1) ^ (tsDelta >> 31)) >>> 0 : 0;
    const od = offsetDeltas ? offsetDeltas[i]! : firstOffsetDelta + i;
    const zo = ((od << 1) ^ (od >> 31)) >>> 0;
    const body =
      1 +
      (tsSmall ? uvarintBytes(zt) : sizeOfVarlong(tsDelta)) +
      uvarintBytes(zo) +
      (key == null ? 1 : uvarintBytes(keyBytes * 2) + keyBytes) +
      (value === null ? 1 : uvarintBytes(valueBytes * 2) + valueBytes) +
      1;
    pos = putUvarint(into, pos, body * 2);
    into[pos++] = 0; // attributes
    pos = tsSmall ? putUvarint(into, pos, zt) : writeVarlong(into, pos, tsDelta);
    pos = putUvarint(into, pos, zo);
    pos = putBytesField(into, pos, key);
    pos = putBytesField(into, pos, value);
    into[pos++] = 0; // header count
  }
  onePassMaxTimestamp = maxTimestamp;
  return pos;
}
