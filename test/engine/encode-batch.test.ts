/**
 * encodeBatch's fast path (inlined varints, no headers, no compression) against a plain reference
 * encoder — the straightforward implementation it replaced — byte for byte, on random records
 * with and without headers, keys, timestamps, offset deltas and batch options.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { crc32c } from '../../src/engine/format/crc32c.js';
import {
  encodeBatch,
  encodeBatchAt,
  headerLastOffsetDelta,
  headerMaxTimestamp,
  measureRecords,
  readBatchHeader,
  RECORD_BATCH_OVERHEAD,
  writeBatchHeader,
  writeRecords,
  type EncodeBatchOptions,
  type RecordInput,
} from '../../src/engine/format/record-batch.js';
import { recordArb, T0 } from './arbitraries.js';

/**
 * The reference: the general writer (measureRecords + writeRecords + writeBatchHeader), which
 * handles every record field by field with the varint helpers; the fast path must match it.
 */
function referenceEncode(records: readonly RecordInput[], opts: EncodeBatchOptions): Buffer {
  const count = records.length;
  const nowMs = opts.nowMs ?? Date.now();
  const baseTimestamp = Number(opts.baseTimestamp ?? (count > 0 ? (records[0]!.timestamp ?? nowMs) : -1));
  const maxTimestamp = records.reduce((m, r) => Math.max(m, Number(r.timestamp ?? nowMs)), -1);
  const m = measureRecords(records, baseTimestamp, nowMs, opts.offsetDeltas);
  const buf = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + m.recordsBytes);
  const end = writeRecords(records, buf, RECORD_BATCH_OVERHEAD, baseTimestamp, nowMs, m.bodySizes, m.headerKeyLens, opts.offsetDeltas);
  writeBatchHeader(buf, end, opts, { compression: 0, count, baseTimestamp, maxTimestamp, nowMs });
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

  it('into scratch space (the append path): one pass when it fits, the same bytes when it does not', () => {
    let onePass = 0;
    let fallback = 0;
    fc.assert(
      fc.property(fc.array(plainRecordArb, { maxLength: 40 }), optsArb, fc.integer({ min: 0, max: 14_000 }), (records, opts, scratchBytes) => {
        const into = Buffer.alloc(scratchBytes, 0xee);
        const expected = referenceEncode(records, opts);
        const got = encodeBatch(records, { ...opts, into });
        expect(got.equals(expected)).toBe(true);
        if (got.buffer === into.buffer) onePass++;
        else fallback++;
      }),
      { numRuns: 400, seed: 4242 },
    );
    expect(onePass).toBeGreaterThan(50);
    expect(fallback).toBeGreaterThan(50);
  });

  it('into scratch space with headers, timestamps beyond int32 deltas or beyond 2^53: the same bytes as without', () => {
    fc.assert(
      fc.property(fc.array(recordArb({ maxBytes: 200 }), { maxLength: 20 }), optsArb, (records, opts) => {
        const into = Buffer.alloc(64 * 1024);
        expect(encodeBatch(records, { ...opts, into }).equals(referenceEncode(records, opts))).toBe(true);
      }),
      { numRuns: 200, seed: 99 },
    );
    const far: RecordInput[] = [{ value: Buffer.from('a'), timestamp: T0 }, { value: Buffer.from('b'), timestamp: T0 + 2 ** 33 }];
    expect(encodeBatch(far, { baseOffset: 0, into: Buffer.alloc(4096) }).equals(referenceEncode(far, { baseOffset: 0 }))).toBe(true);
    const huge: RecordInput[] = [{ value: Buffer.from('a'), timestamp: 2n ** 60n }];
    expect(encodeBatch(huge, { baseOffset: 0, nowMs: T0, into: Buffer.alloc(4096) })).toEqual(encodeBatch(huge, { baseOffset: 0, nowMs: T0 }));
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

  it('in place at an offset (the buffered write buffer): the same bytes, nothing before it touched, the header read back as given', () => {
    let inPlace = 0;
    fc.assert(
      fc.property(fc.array(plainRecordArb, { minLength: 1, maxLength: 40 }), optsArb, fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 14_000 }), (records, opts, start, room) => {
        const into = Buffer.alloc(start + room, 0xee);
        const expected = referenceEncode(records, opts);
        const end = encodeBatchAt(records, opts, into, start);
        expect(into.subarray(0, start).every((b) => b === 0xee)).toBe(true);
        if (end < 0) return; // no room: append() takes encodeRecordBatch
        inPlace++;
        const got = into.subarray(start, end);
        expect(got.equals(expected)).toBe(true);
        // Read back by the independent header reader and checksum, not the writer under test.
        const h = readBatchHeader(into, start);
        expect(h).toMatchObject({ baseOffset: opts.baseOffset, batchLength: end - start - 12, magic: 2, recordsCount: records.length, lastOffsetDelta: records.length - 1 });
        expect(h.partitionLeaderEpoch).toBe(opts.partitionLeaderEpoch ?? -1);
        expect([h.producerId, h.producerEpoch, h.baseSequence]).toEqual([opts.producerId ?? -1, opts.producerEpoch ?? -1, opts.baseSequence ?? -1]);
        expect(h.crc).toBe(crc32c(into, start + 21, end));
        expect([headerLastOffsetDelta, headerMaxTimestamp]).toEqual([h.lastOffsetDelta, h.maxTimestamp]);
      }),
      { numRuns: 400, seed: 777 },
    );
    expect(inPlace).toBeGreaterThan(100);
  });
});
