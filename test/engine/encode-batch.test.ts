/**
 * encodeBatch's fast path (inlined varints, no headers, no compression) against a plain reference
 * encoder — the straightforward implementation it replaced — byte for byte, on random records
 * with and without headers, keys, timestamps, offset deltas and batch options.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  Attr,
  computeBatchCrc,
  encodeBatch,
  LOG_OVERHEAD,
  RECORD_BATCH_OVERHEAD,
  writeInt64,
  type EncodeBatchOptions,
  type RecordHeader,
  type RecordInput,
} from '../../src/engine/format/record-batch.js';
import { sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from '../../src/engine/format/varint.js';
import { recordArb, T0 } from './arbitraries.js';

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

/** Encodes records (uncompressed) into buf at pos; returns the position after them. */
function writeRecords(
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
    pos = writeVarlong(buf, pos, (r.timestamp ?? nowMs) - baseTimestamp);
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
/** The reference: uncompressed v2 batch, written field by field with the varint helpers. */
function referenceEncode(records: readonly RecordInput[], opts: EncodeBatchOptions): Buffer {
  const count = records.length;
  const nowMs = opts.nowMs ?? Date.now();
  let baseTimestamp = opts.baseTimestamp ?? (count > 0 ? (records[0]!.timestamp ?? nowMs) : -1);
  let maxTimestamp = -1;
  const bodySizes = new Int32Array(count);
  const headerKeyLens: number[] = [];
  let recordsBytes = 0;
  for (let i = 0; i < count; i++) {
    const r = records[i]!;
    const ts = r.timestamp ?? nowMs;
    if (ts > maxTimestamp) maxTimestamp = ts;
    const key = r.key ?? null;
    const value = r.value;
    const body =
      1 +
      sizeOfVarlong(ts - baseTimestamp) +
      sizeOfVarint(opts.offsetDeltas ? opts.offsetDeltas[i]! : i) +
      (key === null ? 1 : sizeOfVarint(key.length) + key.length) +
      (value === null ? 1 : sizeOfVarint(value.length) + value.length) +
      headerBytes(r.headers, headerKeyLens);
    bodySizes[i] = body;
    recordsBytes += sizeOfVarint(body) + body;
  }
  if (count === 0) baseTimestamp = opts.baseTimestamp ?? -1;
  const buf = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + recordsBytes);
  const end = writeRecords(records, buf, RECORD_BATCH_OVERHEAD, baseTimestamp, nowMs, bodySizes, headerKeyLens, opts.offsetDeltas);
  let attributes = 0;
  if (opts.logAppendTime) attributes |= Attr.logAppendTime;
  if (opts.transactional) attributes |= Attr.transactional;
  if (opts.control) attributes |= Attr.control;
  if (opts.deleteHorizon) attributes |= Attr.deleteHorizon;
  writeInt64(buf, 0, opts.baseOffset);
  buf.writeInt32BE(end - LOG_OVERHEAD, 8);
  buf.writeInt32BE(opts.partitionLeaderEpoch ?? -1, 12);
  buf[16] = 2;
  buf.writeInt16BE(attributes, 21);
  buf.writeInt32BE(opts.lastOffsetDelta ?? (count > 0 ? (opts.offsetDeltas ? opts.offsetDeltas[count - 1]! : count - 1) : 0), 23);
  writeInt64(buf, 27, baseTimestamp);
  writeInt64(buf, 35, opts.logAppendTime ? nowMs : maxTimestamp);
  writeInt64(buf, 43, opts.producerId ?? -1);
  buf.writeInt16BE(opts.producerEpoch ?? -1, 51);
  buf.writeInt32BE(opts.baseSequence ?? -1, 53);
  buf.writeInt32BE(count, 57);
  buf.writeUInt32BE(computeBatchCrc(buf, 0, end), 17);
  return buf;
}

const optsArb = fc.record(
  {
    baseOffset: fc.integer({ min: 0, max: 2 ** 40 }),
    partitionLeaderEpoch: fc.integer({ min: -1, max: 1000 }),
    logAppendTime: fc.boolean(),
    producerId: fc.integer({ min: -1, max: 2 ** 40 }),
    producerEpoch: fc.integer({ min: -1, max: 32767 }),
    baseSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
    transactional: fc.boolean(),
    nowMs: fc.integer({ min: T0 - 2 ** 40, max: T0 + 2 ** 40 }),
  },
  { requiredKeys: ['baseOffset', 'nowMs'] }, // nowMs fixed: both encoders must see the same clock
);

/** Records without headers and sometimes without a timestamp or key: the fast path's input. */
const plainRecordArb = recordArb({ maxBytes: 300 }).chain((r) =>
  fc.record({ dropTs: fc.boolean(), dropKey: fc.boolean() }).map(({ dropTs, dropKey }) => {
    const out: RecordInput = { value: r.value };
    if (!dropKey) out.key = r.key;
    if (!dropTs) out.timestamp = r.timestamp;
    return out;
  }),
);

describe('encodeBatch matches the reference encoder byte for byte', () => {
  it('records without headers (the fast path)', () => {
    fc.assert(
      fc.property(fc.array(plainRecordArb, { maxLength: 40 }), optsArb, (records, opts) => {
        expect(encodeBatch(records, opts).equals(referenceEncode(records, opts))).toBe(true);
      }),
      { numRuns: 400, seed: 42 },
    );
  });

  it('records with headers, offset deltas and overrides (the general path)', () => {
    fc.assert(
      fc.property(fc.array(recordArb({ maxBytes: 200 }), { maxLength: 20 }), optsArb, fc.boolean(), (records, opts, withDeltas) => {
        const o: EncodeBatchOptions = { ...opts };
        if (withDeltas && records.length > 0) {
          let d = 0;
          o.offsetDeltas = records.map(() => (d += 1 + (d % 3)));
          o.lastOffsetDelta = o.offsetDeltas[o.offsetDeltas.length - 1]! + 2;
        }
        expect(encodeBatch(records, o).equals(referenceEncode(records, o))).toBe(true);
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('large values, timestamp deltas beyond int32 and an empty batch', () => {
    const big = Buffer.alloc(300_000, 0x5a);
    const cases: [RecordInput[], EncodeBatchOptions][] = [
      [[{ key: Buffer.from('k'), value: big, timestamp: T0 }], { baseOffset: 1 }],
      [[{ value: Buffer.from('a'), timestamp: T0 }, { value: Buffer.from('b'), timestamp: T0 + 2 ** 33 }, { value: null, timestamp: T0 - 2 ** 35 }], { baseOffset: 0 }],
      [[], { baseOffset: 7, lastOffsetDelta: 4, baseTimestamp: -1, nowMs: T0 }],
      [[{ value: Buffer.alloc(0) }, { key: Buffer.alloc(0), value: Buffer.alloc(64) }], { baseOffset: 3, nowMs: T0 }],
    ];
    for (const [records, opts] of cases) expect(encodeBatch(records, opts).equals(referenceEncode(records, opts))).toBe(true);
  });
});
