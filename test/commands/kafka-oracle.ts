/**
 * Test oracle for the dump-log and read tests: an independent reading of Kafka's on-disk format
 * straight from kafka-format.md (§2 v2 batches, §3 legacy messages, §4 file iteration), written
 * without any logtool source. CRC-32C is a local table implementation, CRC-32 is zlib's, gzip is
 * zlib's and LZ4 frames are lz4js's. It decodes what the tests need and nothing more (no snappy or
 * zstd record bodies).
 */
import { createRequire } from 'node:module';
import zlib from 'node:zlib';

const require = createRequire(import.meta.url);
const lz4js: { decompress(b: Uint8Array): Uint8Array } = require('lz4js');

export const INT_MAX = 2147483647;
export const CODEC_NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32c(b: Uint8Array): number {
  let c = 0xffffffff;
  for (const x of b) c = CRC32C_TABLE[(c ^ x) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** IEEE CRC-32 (legacy messages). */
export const crc32 = (b: Uint8Array): number => zlib.crc32(b) >>> 0;

const i64 = (b: Buffer, p: number): number => Number(b.readBigInt64BE(p));

/** §2.1: baseSequence + delta, wrapping past 2^31 − 1 to 0; −1 stays −1. */
export function sequenceAt(baseSequence: number, delta: number): number {
  if (baseSequence === -1) return -1;
  const s = baseSequence + delta;
  return s > INT_MAX ? s - (INT_MAX + 1) : s;
}

/** Zig-zag varint / varlong (§1), as a Number. */
function varint(b: Buffer, p: number): [number, number] {
  let v = 0n;
  let shift = 0n;
  for (;;) {
    const x = b[p++]!;
    v |= BigInt(x & 0x7f) << shift;
    shift += 7n;
    if ((x & 0x80) === 0) break;
  }
  return [Number((v >> 1n) ^ -(v & 1n)), p];
}

export interface OracleRecord {
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headerKeys: string[];
  /** v2: the record's sequence; legacy: undefined. */
  sequence?: number;
  /** Legacy: the message's own stored CRC and whether it matches. */
  crc?: number;
  crcValid?: boolean;
}

export interface OracleEntry {
  position: number;
  /** Whole entry including the 12-byte prefix. */
  size: number;
  magic: number;
  bytes: Buffer;
  /** v2 header fields (legacy: offset = lastOffset, the rest −1/false). */
  baseOffset: number;
  lastOffset: number;
  lastOffsetDelta: number;
  partitionLeaderEpoch: number;
  crc: number;
  crcValid: boolean;
  attributes: number;
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  count: number;
  codec: number;
  timestampType: 'CreateTime' | 'LogAppendTime' | 'NoTimestampType';
  isTransactional: boolean;
  isControl: boolean;
  hasDeleteHorizon: boolean;
}

/** §4 (FileLogInputStream): entries while more than 17 bytes remain and the entry fits. */
export function walk(buf: Buffer): { entries: OracleEntry[]; validBytes: number } {
  const entries: OracleEntry[] = [];
  let pos = 0;
  while (pos < buf.length - 17) {
    const size = buf.readInt32BE(pos + 8);
    if (size < 14) throw new Error(`oracle: size ${size} at ${pos}`);
    if (pos > buf.length - 12 - size) break;
    entries.push(parseEntry(buf.subarray(pos, pos + 12 + size), pos));
    pos += 12 + size;
  }
  return { entries, validBytes: pos };
}

export function parseEntry(b: Buffer, position: number): OracleEntry {
  const magic = b.readInt8(16);
  if (magic >= 2) {
    const attributes = b.readInt16BE(21) & 0xff;
    const baseOffset = i64(b, 0);
    const lastOffsetDelta = b.readInt32BE(23);
    const crc = b.readUInt32BE(17);
    return {
      position,
      size: b.length,
      magic,
      bytes: b,
      baseOffset,
      lastOffset: baseOffset + lastOffsetDelta,
      lastOffsetDelta,
      partitionLeaderEpoch: b.readInt32BE(12),
      crc,
      crcValid: crc32c(b.subarray(21)) === crc,
      attributes,
      baseTimestamp: i64(b, 27),
      maxTimestamp: i64(b, 35),
      producerId: i64(b, 43),
      producerEpoch: b.readInt16BE(51),
      baseSequence: b.readInt32BE(53),
      count: b.readInt32BE(57),
      codec: attributes & 7,
      timestampType: attributes & 8 ? 'LogAppendTime' : 'CreateTime',
      isTransactional: (attributes & 0x10) !== 0,
      isControl: (attributes & 0x20) !== 0,
      hasDeleteHorizon: (attributes & 0x40) !== 0,
    };
  }
  const attributes = b[17]!;
  const offset = i64(b, 0);
  const crc = b.readUInt32BE(12);
  return {
    position,
    size: b.length,
    magic,
    bytes: b,
    baseOffset: offset,
    lastOffset: offset,
    lastOffsetDelta: 0,
    partitionLeaderEpoch: -1,
    crc,
    crcValid: crc32(b.subarray(16)) === crc,
    attributes,
    baseTimestamp: -1,
    maxTimestamp: magic === 1 ? i64(b, 18) : -1,
    producerId: -1,
    producerEpoch: -1,
    baseSequence: -1,
    count: -1,
    codec: attributes & 7,
    timestampType: magic === 0 ? 'NoTimestampType' : attributes & 8 ? 'LogAppendTime' : 'CreateTime',
    isTransactional: false,
    isControl: false,
    hasDeleteHorizon: false,
  };
}

function decompress(codec: number, data: Buffer): Buffer | undefined {
  if (codec === 0) return data;
  if (codec === 1) return zlib.gunzipSync(data);
  if (codec === 3) return Buffer.from(lz4js.decompress(data));
  return undefined;
}

/** Records of an entry (§2.3 / §3), or undefined for codecs the oracle does not decode. */
export function records(e: OracleEntry): OracleRecord[] | undefined {
  return e.magic >= 2 ? v2Records(e) : legacyRecords(e);
}

function v2Records(e: OracleEntry): OracleRecord[] | undefined {
  const data = decompress(e.codec, e.bytes.subarray(61));
  if (!data) return undefined;
  const out: OracleRecord[] = [];
  let p = 0;
  for (let i = 0; i < e.count; i++) {
    let len: number, tsDelta: number, offDelta: number, kl: number, vl: number, hc: number;
    [len, p] = varint(data, p);
    const end = p + len;
    p += 1; // attributes
    [tsDelta, p] = varint(data, p);
    [offDelta, p] = varint(data, p);
    [kl, p] = varint(data, p);
    const key = kl < 0 ? null : data.subarray(p, p + kl);
    if (kl > 0) p += kl;
    [vl, p] = varint(data, p);
    const value = vl < 0 ? null : data.subarray(p, p + vl);
    if (vl > 0) p += vl;
    [hc, p] = varint(data, p);
    const headerKeys: string[] = [];
    for (let h = 0; h < hc; h++) {
      let hk: number, hv: number;
      [hk, p] = varint(data, p);
      headerKeys.push(data.subarray(p, p + hk).toString('utf8'));
      p += hk;
      [hv, p] = varint(data, p);
      if (hv > 0) p += hv;
    }
    if (p !== end) throw new Error(`oracle: record ${i} of batch ${e.baseOffset} ends at ${p}, not ${end}`);
    out.push({
      offset: e.baseOffset + offDelta,
      timestamp: e.timestampType === 'LogAppendTime' ? e.maxTimestamp : e.baseTimestamp + tsDelta,
      key,
      value,
      headerKeys,
      sequence: sequenceAt(e.baseSequence, offDelta),
    });
  }
  return out;
}

interface LegacyMessage {
  offset: number;
  magic: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  crc: number;
  crcValid: boolean;
}

function legacyMessage(b: Buffer): LegacyMessage {
  const magic = b[16]!;
  let p = magic === 1 ? 26 : 18;
  const kl = b.readInt32BE(p);
  p += 4;
  const key = kl < 0 ? null : b.subarray(p, p + kl);
  if (kl > 0) p += kl;
  const vl = b.readInt32BE(p);
  p += 4;
  const value = vl < 0 ? null : b.subarray(p, p + vl);
  const crc = b.readUInt32BE(12);
  return { offset: i64(b, 0), magic, timestamp: magic === 1 ? i64(b, 18) : -1, key, value, crc, crcValid: crc32(b.subarray(16)) === crc };
}

function legacyRecords(e: OracleEntry): OracleRecord[] | undefined {
  const outer = legacyMessage(e.bytes);
  if (e.codec === 0) return [{ offset: outer.offset, timestamp: outer.timestamp, key: outer.key, value: outer.value, headerKeys: [], crc: outer.crc, crcValid: outer.crcValid }];
  const data = decompress(e.codec, outer.value!);
  if (!data) return undefined;
  const inner: LegacyMessage[] = [];
  for (let q = 0; data.length - q >= 12; ) {
    const n = 12 + data.readInt32BE(q + 8);
    if (q + n > data.length) break;
    inner.push(legacyMessage(data.subarray(q, q + n)));
    q += n;
  }
  // §3: v1 inner offsets are relative; absolute = wrapper − lastInner + inner (wrapper 0 = base 0).
  const base = outer.magic === 1 && outer.offset !== 0 ? outer.offset - inner[inner.length - 1]!.offset : 0;
  const lat = outer.magic === 1 && (e.attributes & 8) !== 0;
  return inner.map((m) => ({
    offset: base + m.offset,
    timestamp: m.magic === 0 ? -1 : lat ? outer.timestamp : m.timestamp,
    key: m.key,
    value: m.value,
    headerKeys: [],
    crc: m.crc,
    crcValid: m.crcValid,
  }));
}

/** §16.2 batch line. */
export function expectedBatchLine(e: OracleEntry): string {
  const tail = ` position: ${e.position} ${e.timestampType}: ${e.maxTimestamp} size: ${e.size} magic: ${e.magic} compresscodec: ${CODEC_NAMES[e.codec]} crc: ${e.crc} isvalid: ${e.crcValid}`;
  if (e.magic < 2) return `offset: ${e.lastOffset}${tail}`;
  return (
    `baseOffset: ${e.baseOffset} lastOffset: ${e.lastOffset} count: ${e.count} baseSequence: ${e.baseSequence} ` +
    `lastSequence: ${sequenceAt(e.baseSequence, e.lastOffsetDelta)} producerId: ${e.producerId} producerEpoch: ${e.producerEpoch} ` +
    `partitionLeaderEpoch: ${e.partitionLeaderEpoch} isTransactional: ${e.isTransactional} isControl: ${e.isControl} ` +
    `deleteHorizonMs: ${e.hasDeleteHorizon ? `OptionalLong[${e.baseTimestamp}]` : 'OptionalLong.empty'}${tail}`
  );
}

const CONTROL_TYPES = ['ABORT', 'COMMIT', 'LEADER_CHANGE'];

/**
 * LeaderChangeMessage v0 as Kafka's JSON converter prints it, read straight from the bytes:
 * int16 version, int32 leaderId, then two compact arrays (count + 1, one byte here) of int32 voter
 * ids each followed by an empty tagged-field section.
 */
function leaderChangeJson(v: Buffer): string {
  let p = 6;
  const voters = (): string => {
    const n = v[p++]! - 1;
    const ids: string[] = [];
    for (let i = 0; i < n; i++, p += 5) ids.push(`{"voterId":${v.readInt32BE(p)}}`);
    return `[${ids.join(',')}]`;
  };
  const a = voters();
  const b = voters();
  return `{"version":${v.readInt16BE(0)},"leaderId":${v.readInt32BE(2)},"voters":${a},"grantingVoters":${b}}`;
}

/** §16.2 record line (metadata; with `print`, key and payload as UTF-8). */
export function expectedRecordLine(e: OracleEntry, r: OracleRecord, print = false): string {
  let line = `| offset: ${r.offset} ${e.timestampType}: ${r.timestamp} keySize: ${r.key ? r.key.length : -1} valueSize: ${r.value ? r.value.length : -1}`;
  if (e.magic >= 2) {
    line += ` sequence: ${r.sequence} headerKeys: [${r.headerKeys.join(',')}]`;
    if (e.isControl) {
      const type = r.key!.readInt16BE(2);
      if (type > 2) throw new Error(`oracle: control type ${type} not modelled`);
      line += type < 2 ? ` endTxnMarker: ${CONTROL_TYPES[type]} coordinatorEpoch: ${r.value!.readInt32BE(2)}` : ` LeaderChange: ${leaderChangeJson(r.value!)}`;
    }
  } else {
    line += ` isValid: ${r.crcValid} crc: ${r.crc}`;
  }
  if (print && !e.isControl) {
    if (r.key) line += ` key: ${r.key.toString('utf8')}`;
    if (r.value) line += ` payload: ${r.value.toString('utf8')}`;
  }
  return line;
}

// ---------------------------------------------------------------------------------------------
// Writers for hand-made inputs

function int64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
}

/** One legacy entry (§3) with a correct CRC-32 unless `crc` is given. */
export function legacyEntry(m: { offset: number; magic: 0 | 1; attributes?: number; timestamp?: number; key: Buffer | null; value: Buffer | null; crc?: number }): Buffer {
  const field = (x: Buffer | null) => {
    const len = Buffer.alloc(4);
    len.writeInt32BE(x === null ? -1 : x.length);
    return x === null ? len : Buffer.concat([len, x]);
  };
  const body = Buffer.concat([Buffer.from([m.magic, m.attributes ?? 0]), m.magic === 1 ? int64(m.timestamp ?? -1) : Buffer.alloc(0), field(m.key), field(m.value)]);
  const head = Buffer.alloc(16);
  head.writeBigInt64BE(BigInt(m.offset), 0);
  head.writeInt32BE(4 + body.length, 8);
  head.writeUInt32BE(m.crc ?? crc32(body), 12);
  return Buffer.concat([head, body]);
}

/** A gzip wrapper (§3) around inner entries. */
export function legacyGzipWrapper(w: { offset: number; magic: 0 | 1; timestamp?: number; logAppendTime?: boolean; inner: Buffer[] }): Buffer {
  return legacyEntry({ offset: w.offset, magic: w.magic, attributes: 1 | (w.logAppendTime ? 8 : 0), timestamp: w.timestamp, key: null, value: zlib.gzipSync(Buffer.concat(w.inner)) });
}

/** Recomputes the CRC-32C of a v2 batch in place (after a test edits its header). */
export function fixBatchCrc(b: Buffer): Buffer {
  b.writeUInt32BE(crc32c(b.subarray(21)), 17);
  return b;
}

/** Offset-index file bytes (§6.1) for absolute offsets. */
export function offsetIndexBytes(base: number, entries: [offset: number, position: number][]): Buffer {
  const b = Buffer.alloc(entries.length * 8);
  entries.forEach(([o, p], i) => {
    b.writeInt32BE(o - base, i * 8);
    b.writeInt32BE(p, i * 8 + 4);
  });
  return b;
}

/** Time-index file bytes (§6.2). */
export function timeIndexBytes(base: number, entries: [timestamp: number, offset: number][]): Buffer {
  const b = Buffer.alloc(entries.length * 12);
  entries.forEach(([t, o], i) => {
    b.writeBigInt64BE(BigInt(t), i * 12);
    b.writeInt32BE(o - base, i * 12 + 8);
  });
  return b;
}

/** Bytes of §19 worked examples A (two-record batch) and B (COMMIT marker), from the notes' hex. */
export const WORKED_EXAMPLE_A = Buffer.from(
  (
    '0000000000000000 00000048 00000000 02 fde86579 0000 00000001' +
    '0000018bcfe56800 0000018bcfe56805 ffffffffffffffff ffff ffffffff 00000002' +
    '12 00 00 00 02 6b 04 7631 00' +
    '18 00 0a 02 01 04 7632 02 02 68 02 78'
  ).replace(/\s+/g, ''),
  'hex',
);
export const WORKED_EXAMPLE_B = Buffer.from(
  (
    '000000000000000a 00000042 00000003 02 fc84b034 0030 00000000' +
    '0000018bcfe56800 0000018bcfe56800 00000000000003e8 0000 ffffffff 00000001' +
    '20 00 00 00 08 00000001 0c 0000 00000005 00'
  ).replace(/\s+/g, ''),
  'hex',
);
