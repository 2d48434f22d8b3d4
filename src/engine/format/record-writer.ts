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
  return { bodySizes, headerKeyLens: anyHeaders ? headerKeyLens : undefined, recordsBytes, maxTimestamp };
}

/** The max timestamp of the records writeRecordsOnePass last wrote (a module variable: no result object per batch). */
export let onePassMaxTimestamp = -1;

/** Upper bound of one record's bytes beyond its key and value: length, attributes, timestamp and offset deltas, key and value lengths, header count. */
const RECORD_FIELDS_MAX_BYTES = 5 + 1 + 10 + 5 + 5 + 5 + 1;

/**
 * Records without headers, uncompressed, written at RECORD_BATCH_OVERHEAD on in one pass: each
 * record's size is computed just before its bytes (the sizes of measureFast). `limit` bounds the
 * bytes written: the end of scratch space given by the caller, or Infinity for a buffer sized by
 * measureFast. Returns the end of the records (onePassMaxTimestamp set), or −1 — with `into`
 * partly overwritten — for a record with headers or a timestamp that is not a safe integer, or
 * when the next record might not fit under `limit`: the caller then measures first.
 */
export function writeRecordsOnePass(records: readonly RecordInput[], into: Buffer, limit: number, baseTimestamp: number, nowMs: number, offsetDeltas: number[] | undefined): number {
  const count = records.length;
  let maxTimestamp = -1;
  let pos = RECORD_BATCH_OVERHEAD;
  if (pos > limit) return -1;
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
    const od = offsetDeltas ? offsetDeltas[i]! : i;
    const zo = ((od << 1) ^ (od >> 31)) >>> 0;
    const zk = keyBytes * 2;
    const zv = valueBytes * 2;
    const body =
      1 +
      (tsSmall ? (zt < 0x80 ? 1 : zt < 0x4000 ? 2 : zt < 0x200000 ? 3 : zt < 0x10000000 ? 4 : 5) : sizeOfVarlong(tsDelta)) +
      (zo < 0x80 ? 1 : zo < 0x4000 ? 2 : zo < 0x200000 ? 3 : zo < 0x10000000 ? 4 : 5) +
      (key == null ? 1 : (zk < 0x80 ? 1 : zk < 0x4000 ? 2 : zk < 0x200000 ? 3 : zk < 0x10000000 ? 4 : 5) + keyBytes) +
      (value === null ? 1 : (zv < 0x80 ? 1 : zv < 0x4000 ? 2 : zv < 0x200000 ? 3 : zv < 0x10000000 ? 4 : 5) + valueBytes) +
      1;
    let v = body * 2;
    while (v >= 0x80) {
      into[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    into[pos++] = v;
    into[pos++] = 0; // attributes
    if (tsSmall) {
      v = zt;
      while (v >= 0x80) {
        into[pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      into[pos++] = v;
    } else pos = writeVarlong(into, pos, tsDelta);
    v = zo;
    while (v >= 0x80) {
      into[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    into[pos++] = v;
    if (key == null) into[pos++] = 1;
    else {
      v = zk;
      while (v >= 0x80) {
        into[pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      into[pos++] = v;
      into.set(key, pos);
      pos += keyBytes;
    }
    if (value === null) into[pos++] = 1;
    else {
      v = zv;
      while (v >= 0x80) {
        into[pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      into[pos++] = v;
      into.set(value, pos);
      pos += valueBytes;
    }
    into[pos++] = 0; // header count
  }
  onePassMaxTimestamp = maxTimestamp;
  return pos;
}
