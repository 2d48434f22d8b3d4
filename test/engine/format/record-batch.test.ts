/**
 * RecordBatch v2 (kafka-format.md §2): the worked examples of §19 byte for byte, random records
 * round-tripping through encodeBatch → readBatchHeader/decodeRecords, header fields and CRC-32C,
 * and arbitrary corruption only ever raising LogtoolError (CorruptDataError for bad bytes).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  Attr,
  computeBatchCrc,
  controlTypeOf,
  decodeRecords,
  encodeBatch,
  isCrcValid,
  lastOffsetOf,
  readBatchHeader,
  RECORD_BATCH_OVERHEAD,
  RecordDecoder,
  timestampTypeOf,
  type BatchHeader,
  type RecordInput,
} from '../../../src/engine/format/record-batch.js';
import { crc32c, crc32cJs, nativeCrc32c, nativeThresholdBytes, setNativeThresholdBytes } from '../../../src/engine/format/crc32c.js';
import { createRequire } from 'node:module';
import os from 'node:os';
import { CorruptDataError, LogtoolError } from '../../../src/engine/errors.js';
import { recordArb, T0 } from '../arbitraries.js';

function expectSameRecords(got: ReturnType<typeof decodeRecords>, input: readonly RecordInput[], baseOffset: number, offsetDeltas?: number[]): void {
  expect(got.length).toBe(input.length);
  for (let i = 0; i < input.length; i++) {
    const g = got[i]!;
    const r = input[i]!;
    expect(g.offset).toBe(baseOffset + (offsetDeltas ? offsetDeltas[i]! : i));
    expect(g.timestamp).toBe(r.timestamp);
    expect(g.key === null ? null : Buffer.from(g.key)).toEqual(r.key ?? null);
    expect(g.value === null ? null : Buffer.from(g.value)).toEqual(r.value);
    expect(g.headers.map((h) => ({ key: h.key, value: h.value === null ? null : Buffer.from(h.value) }))).toEqual(r.headers ?? []);
  }
}

describe('CRC-32C', () => {
  it('has the check value of "123456789" (JS table and native)', () => {
    const b = Buffer.from('123456789');
    expect(crc32cJs(b)).toBe(0xe3069283);
    expect(crc32c(b)).toBe(0xe3069283);
    // Force the native path too, whatever the threshold.
    const big = Buffer.alloc(4096, 0x61);
    expect(crc32c(big)).toBe(crc32cJs(big));
  });

  it('JS slice-by-16 agrees with the native add-on at every length and offset below the threshold, chained', () => {
    const buf = Buffer.alloc(600);
    for (let i = 0; i < buf.length; i++) buf[i] = (i * 2654435761) >>> 24;
    const threshold = nativeThresholdBytes;
    const jsCrcs: number[] = [];
    for (let len = 0; len <= 520; len++) jsCrcs.push(crc32cJs(buf, len % 7, (len % 7) + len, len * 977));
    setNativeThresholdBytes(0);
    try {
      for (let len = 0; len <= 520; len++) expect(crc32c(buf, len % 7, (len % 7) + len, len * 977)).toBe(jsCrcs[len]);
    } finally {
      setNativeThresholdBytes(threshold);
    }
  });

  it('JS and native agree on random data and sub-ranges', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), fc.nat(), fc.nat(), (a, x, y) => {
        const buf = Buffer.from(a);
        const s = buf.length ? x % buf.length : 0;
        const e = s + (buf.length - s ? y % (buf.length - s + 1) : 0);
        expect(crc32c(buf, s, e)).toBe(crc32cJs(buf, s, e));
      }),
      { numRuns: 300, seed: 11 },
    );
  });
});

describe('CRC-32C add-ons', () => {
  const require = createRequire(import.meta.url);
  // Each add-on the engine may call, straight (whichever nativeCrc32c picked, the other stays tested).
  const addOns: [string, (b: Buffer, initial: number) => number][] = [['@node-rs/crc32', (require('@node-rs/crc32') as { crc32c: (b: Buffer, i: number) => number }).crc32c]];
  let sse: { hardware_support: boolean; sse42_crc: (b: Buffer, i: number) => number } | undefined;
  try {
    sse = require('sse4_crc32/build/Release/crc32c.node') as typeof sse;
  } catch {
    sse = undefined; // an optional dependency: not built on this machine
  }
  if (sse?.hardware_support) addOns.push(['sse4_crc32', sse.sse42_crc]);

  it('crc32c uses sse4_crc32 where it is built and the CPU has SSE 4.2, else @node-rs/crc32', () => {
    expect(nativeCrc32c().addOn).toBe(sse?.hardware_support ? 'sse4_crc32' : '@node-rs/crc32');
    // This project's own machines (x86-64 with SSE 4.2, npm ci builds the add-on) take the fast one.
    if (os.arch() === 'x64' && process.env.CI) expect(nativeCrc32c().addOn).toBe('sse4_crc32');
  });

  it.each(addOns)('%s agrees with the JS table at random lengths, offsets and initial CRCs', (_name, fn) => {
    const pool = Buffer.alloc(70_000);
    for (let i = 0; i < pool.length; i++) pool[i] = (i * 2654435761 + (i >>> 7)) >>> 24;
    fc.assert(
      fc.property(fc.nat({ max: 69_999 }), fc.oneof(fc.nat({ max: 600 }), fc.nat({ max: 69_999 })), fc.nat({ max: 0xffffffff }), (start, len, initial) => {
        const end = Math.min(pool.length, start + len);
        expect(fn(pool.subarray(start, end), initial) >>> 0).toBe(crc32cJs(pool, start, end, initial));
      }),
      { numRuns: 2000, seed: 15 },
    );
    // Chained: a CRC continued over a split equals the CRC of the whole.
    const whole = crc32cJs(pool, 3, 65_539);
    expect(fn(pool.subarray(40_001, 65_539), fn(pool.subarray(3, 40_001), 0)) >>> 0).toBe(whole);
  });
});

describe('§19 worked examples', () => {
  it('A: two-record uncompressed batch encodes to exactly the documented bytes', () => {
    const batch = encodeBatch(
      [
        { key: Buffer.from('k'), value: Buffer.from('v1'), timestamp: T0 },
        { key: null, value: Buffer.from('v2'), timestamp: T0 + 5, headers: [{ key: 'h', value: Buffer.from('x') }] },
      ],
      { baseOffset: 0, partitionLeaderEpoch: 0 },
    );
    const expected = [
      '0000000000000000 00000048 00000000 02 fde86579 0000 00000001',
      '0000018bcfe56800 0000018bcfe56805 ffffffffffffffff ffff ffffffff 00000002',
      '12 00 00 00 02 6b 04 7631 00',
      '18 00 0a 02 01 04 7632 02 02 68 02 78',
    ]
      .join('')
      .replace(/\s+/g, '');
    expect(batch.toString('hex')).toBe(expected);
    expect(batch.length).toBe(84);
    const h = readBatchHeader(batch, 0);
    expect(h.batchLength).toBe(72);
    expect(h.crc).toBe(4259865977);
    expect(isCrcValid(batch, 0, h)).toBe(true);
    expect(h.maxTimestamp).toBe(1700000000005);
    const recs = decodeRecords(batch, 0, h);
    expect(recs.map((r) => [r.offset, r.timestamp, r.key?.toString() ?? null, r.value?.toString(), r.headers.map((x) => [x.key, x.value?.toString()])])).toEqual([
      [0, T0, 'k', 'v1', []],
      [1, T0 + 5, null, 'v2', [['h', 'x']]],
    ]);
  });

  it('B: COMMIT marker built with the control/transactional/producer options', () => {
    const key = Buffer.from('00000001', 'hex'); // version 0, type 1 (COMMIT)
    const value = Buffer.from('000000000005', 'hex'); // version 0, coordinatorEpoch 5
    const batch = encodeBatch([{ key, value, timestamp: T0 }], {
      baseOffset: 10,
      partitionLeaderEpoch: 3,
      producerId: 1000,
      producerEpoch: 0,
      transactional: true,
      control: true,
    });
    const expected = [
      '000000000000000a 00000042 00000003 02 fc84b034 0030 00000000',
      '0000018bcfe56800 0000018bcfe56800 00000000000003e8 0000 ffffffff 00000001',
      '20 00 00 00 08 00000001 0c 0000 00000005 00',
    ]
      .join('')
      .replace(/\s+/g, '');
    expect(batch.toString('hex')).toBe(expected);
    expect(batch.length).toBe(78);
    const h = readBatchHeader(batch, 0);
    expect(h.crc).toBe(0xfc84b034);
    expect(h.attributes).toBe(Attr.transactional | Attr.control);
    const [r] = decodeRecords(batch, 0, h);
    expect(r!.offset).toBe(10);
    expect(controlTypeOf(r!.key)).toEqual({ version: 0, type: 1, name: 'COMMIT' });
  });

  it('CRC covers [21, end) only: rewriting baseOffset / epoch keeps it valid, any byte from 21 on breaks it', () => {
    const batch = encodeBatch([{ key: Buffer.from('k'), value: Buffer.from('v'), timestamp: T0 }], { baseOffset: 0, nowMs: T0 });
    const h0 = readBatchHeader(batch, 0);
    const b = Buffer.from(batch);
    b.writeInt32BE(1234, 4); // low half of baseOffset
    b.writeInt32BE(77, 12); // partitionLeaderEpoch
    expect(isCrcValid(b, 0, readBatchHeader(b, 0))).toBe(true);
    for (let i = 21; i < b.length; i++) {
      const c = Buffer.from(batch);
      c[i]! ^= 0x01;
      expect(computeBatchCrc(c, 0, c.length), `byte ${i}`).not.toBe(h0.crc);
    }
  });
});

describe('encode → decode round trip (property)', () => {
  const opts = fc.record({
    baseOffset: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2 ** 53 - 2 ** 32 })),
    partitionLeaderEpoch: fc.integer({ min: -1, max: 0x7fffffff }),
    producerId: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 2 ** 53 - 1 })),
    producerEpoch: fc.integer({ min: -1, max: 0x7fff }),
    baseSequence: fc.integer({ min: -1, max: 0x7fffffff }),
    transactional: fc.boolean(),
  });

  it('random records (binary keys/values, nulls, null header values, negative timestamp deltas) decode identically', () => {
    fc.assert(
      fc.property(fc.array(recordArb(), { minLength: 1, maxLength: 20 }), opts, (records, o) => {
        const batch = encodeBatch(records, { ...o, nowMs: T0 });
        const h = readBatchHeader(batch, 0);
        expect(h.magic).toBe(2);
        expect(h.batchLength + 12).toBe(batch.length);
        expect(h.baseOffset).toBe(o.baseOffset);
        expect(h.partitionLeaderEpoch).toBe(o.partitionLeaderEpoch);
        expect(h.producerId).toBe(o.producerId);
        expect(h.producerEpoch).toBe(o.producerEpoch);
        expect(h.baseSequence).toBe(o.baseSequence);
        expect(h.recordsCount).toBe(records.length);
        expect(h.lastOffsetDelta).toBe(records.length - 1);
        expect(lastOffsetOf(h)).toBe(o.baseOffset + records.length - 1);
        expect(h.baseTimestamp).toBe(records[0]!.timestamp);
        expect(h.maxTimestamp).toBe(Math.max(...records.map((r) => r.timestamp!)));
        expect(h.attributes).toBe(o.transactional ? Attr.transactional : 0);
        expect(timestampTypeOf(h)).toBe('CreateTime');
        expect(isCrcValid(batch, 0, h)).toBe(true);
        expect(crc32cJs(batch, 21, batch.length)).toBe(h.crc);
        expectSameRecords(decodeRecords(batch, 0, h), records, o.baseOffset);
      }),
      { numRuns: 300, seed: 20240601 },
    );
  });

  it('decodes a batch sitting at a non-zero position inside a larger buffer', () => {
    fc.assert(
      fc.property(fc.array(recordArb(), { minLength: 1, maxLength: 5 }), fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (records, pre, post) => {
        const batch = encodeBatch(records, { baseOffset: 99, nowMs: T0 });
        const buf = Buffer.concat([Buffer.from(pre), batch, Buffer.from(post)]);
        const h = readBatchHeader(buf, pre.length);
        expect(isCrcValid(buf, pre.length, h)).toBe(true);
        expectSameRecords(decodeRecords(buf, pre.length, h), records, 99);
      }),
      { numRuns: 100, seed: 9 },
    );
  });

  it('records without timestamps get nowMs; LogAppendTime makes every record carry maxTimestamp', () => {
    const recs: RecordInput[] = [{ value: Buffer.from('a') }, { value: Buffer.from('b'), timestamp: T0 - 5 }];
    const b1 = encodeBatch(recs, { baseOffset: 0, nowMs: T0 });
    const h1 = readBatchHeader(b1, 0);
    expect(decodeRecords(b1, 0, h1).map((r) => r.timestamp)).toEqual([T0, T0 - 5]);
    expect(h1.maxTimestamp).toBe(T0);

    const b2 = encodeBatch(recs, { baseOffset: 0, nowMs: T0 + 1000, logAppendTime: true });
    const h2 = readBatchHeader(b2, 0);
    expect(timestampTypeOf(h2)).toBe('LogAppendTime');
    expect(h2.maxTimestamp).toBe(T0 + 1000);
    expect(decodeRecords(b2, 0, h2).map((r) => r.timestamp)).toEqual([T0 + 1000, T0 + 1000]);
  });

  it('offset gaps (compacted batches) and an overridden lastOffsetDelta survive', () => {
    fc.assert(
      fc.property(fc.array(recordArb({ maxBytes: 8 }), { minLength: 1, maxLength: 10 }), fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 10, maxLength: 10 }), (records, gaps) => {
        const deltas: number[] = [];
        let d = 0;
        for (let i = 0; i < records.length; i++) {
          deltas.push(d);
          d += gaps[i]!;
        }
        const lastOffsetDelta = deltas[deltas.length - 1]! + 3;
        const batch = encodeBatch(records, { baseOffset: 500, nowMs: T0, offsetDeltas: deltas, lastOffsetDelta });
        const h = readBatchHeader(batch, 0);
        expect(h.lastOffsetDelta).toBe(lastOffsetDelta);
        expectSameRecords(decodeRecords(batch, 0, h), records, 500, deltas);
      }),
      { numRuns: 100, seed: 13 },
    );
  });

  it('an empty batch (cleaner header-only form) is 61 bytes and yields no records', () => {
    const b = encodeBatch([], { baseOffset: 7, lastOffsetDelta: 4, baseTimestamp: -1, nowMs: T0 });
    expect(b.length).toBe(RECORD_BATCH_OVERHEAD);
    const h = readBatchHeader(b, 0);
    expect(h.batchLength).toBe(49);
    expect(h.recordsCount).toBe(0);
    expect(h.baseTimestamp).toBe(-1);
    expect(isCrcValid(b, 0, h)).toBe(true);
    expect(decodeRecords(b, 0, h)).toEqual([]);
  });
});

describe('corruption never escapes as anything but LogtoolError, never hangs', () => {
  type Mutation =
    | { kind: 'flip'; at: number; bit: number }
    | { kind: 'truncate'; to: number }
    | { kind: 'huge'; at: number; bytes: number[] }
    | { kind: 'count'; value: number }
    | { kind: 'length'; value: number }
    | { kind: 'garbage'; at: number; bytes: number[] };

  const hugeVarints = [
    [0xfe, 0xff, 0xff, 0xff, 0x0f], // int32 max
    [0xff, 0xff, 0xff, 0xff, 0x0f], // int32 min
    [0x81, 0x80, 0x80, 0x80, 0x08], // large negative
    [0xff, 0xff, 0xff, 0xff, 0xff, 0x01], // over-long
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], // over-long varlong
  ];

  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
    fc.record({ kind: fc.constant('truncate' as const), to: fc.nat() }),
    fc.record({ kind: fc.constant('huge' as const), at: fc.nat(), bytes: fc.constantFrom(...hugeVarints) }),
    fc.record({ kind: fc.constant('count' as const), value: fc.oneof(fc.integer({ min: -0x80000000, max: 0x7fffffff }), fc.constantFrom(0x7fffffff, -1, 0)) }),
    fc.record({ kind: fc.constant('length' as const), value: fc.oneof(fc.integer({ min: -0x80000000, max: 0x7fffffff }), fc.constantFrom(0x7fffffff, 0, 48, 49)) }),
    fc.record({ kind: fc.constant('garbage' as const), at: fc.nat(), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 16 }) }),
  );

  function apply(batch: Buffer, muts: Mutation[]): Buffer {
    let b = Buffer.from(batch);
    for (const m of muts) {
      switch (m.kind) {
        case 'flip':
          if (b.length) b[m.at % b.length]! ^= 1 << m.bit;
          break;
        case 'truncate':
          b = b.subarray(0, m.to % (b.length + 1));
          break;
        case 'huge':
        case 'garbage': {
          // Land in the records section where possible (that is where lengths live).
          const start = b.length > RECORD_BATCH_OVERHEAD ? RECORD_BATCH_OVERHEAD + (m.at % (b.length - RECORD_BATCH_OVERHEAD)) : m.at % Math.max(1, b.length);
          for (let i = 0; i < m.bytes.length && start + i < b.length; i++) b[start + i] = m.bytes[i]!;
          break;
        }
        case 'count':
          if (b.length >= 61) b.writeInt32BE(m.value, 57);
          break;
        case 'length':
          if (b.length >= 12) b.writeInt32BE(m.value, 8);
          break;
      }
    }
    return b;
  }

  it('decodeRecords on mutated batches', () => {
    let threw = 0;
    let runs = 0;
    fc.assert(
      fc.property(fc.array(recordArb({ maxBytes: 40 }), { minLength: 1, maxLength: 8 }), fc.array(mutation, { minLength: 1, maxLength: 4 }), (records, muts) => {
        runs++;
        const batch = encodeBatch(records, { baseOffset: 0, nowMs: T0 });
        const bad = apply(batch, muts);
        // A header is read from the mutated bytes when they hold one; for a batch cut below
        // 61 bytes the caller's (original) header is used, as a reader that trusted it would.
        const h: BatchHeader = bad.length >= RECORD_BATCH_OVERHEAD ? readBatchHeader(bad, 0) : readBatchHeader(batch, 0);
        try {
          const out = decodeRecords(bad, 0, h);
          expect(out.length).toBe(h.recordsCount);
        } catch (e) {
          threw++;
          if (!(e instanceof LogtoolError)) throw new Error(`non-LogtoolError escaped: ${(e as Error)?.stack ?? String(e)}`);
          if (e.kind === 'corrupt') expect(e).toBeInstanceOf(CorruptDataError);
          else expect(e.kind).toBe('unsupported'); // compression bits flipped to a codec not registered here
        }
      }),
      { numRuns: 3000, seed: 424242 },
    );
    expect(runs).toBe(3000);
    expect(threw).toBeGreaterThan(runs / 4); // most corruptions are detected structurally
  });

  it('checkRest (verify --deep: every record checked, none built) counts and fails exactly as decoding does', () => {
    const outcome = (f: () => number): string => {
      try {
        return `records ${f()}`;
      } catch (e) {
        if (!(e instanceof LogtoolError)) throw e;
        return `${e.kind}: ${e.message}`;
      }
    };
    let failed = 0;
    fc.assert(
      fc.property(fc.array(recordArb({ maxBytes: 40 }), { minLength: 1, maxLength: 8 }), fc.array(mutation, { minLength: 0, maxLength: 4 }), (records, muts) => {
        const batch = encodeBatch(records, { baseOffset: 0, nowMs: T0 });
        const bad = apply(batch, muts);
        const h: BatchHeader = bad.length >= RECORD_BATCH_OVERHEAD ? readBatchHeader(bad, 0) : readBatchHeader(batch, 0);
        const decoded = outcome(() => decodeRecords(bad, 0, h).length);
        if (!decoded.startsWith('records')) failed++;
        expect(outcome(() => new RecordDecoder(bad, 0, h).checkRest())).toBe(decoded);
      }),
      { numRuns: 2000, seed: 515151 },
    );
    expect(failed).toBeGreaterThan(100);
  });

  it('a batch truncated anywhere inside its records section is reported as corrupt', () => {
    fc.assert(
      fc.property(fc.array(recordArb({ maxBytes: 30 }), { minLength: 1, maxLength: 6 }), fc.nat(), (records, cut) => {
        const batch = encodeBatch(records, { baseOffset: 0, nowMs: T0 });
        const h = readBatchHeader(batch, 0);
        const to = RECORD_BATCH_OVERHEAD + (cut % (batch.length - RECORD_BATCH_OVERHEAD));
        expect(() => decodeRecords(batch.subarray(0, to), 0, h)).toThrow(CorruptDataError);
      }),
      { numRuns: 300, seed: 77 },
    );
  });

  it('bytes left over after recordsCount records, or fewer records than declared, are corrupt', () => {
    const batch = encodeBatch([{ value: Buffer.from('a') }, { value: Buffer.from('b') }], { baseOffset: 0, nowMs: T0 });
    const fewer = Buffer.from(batch);
    fewer.writeInt32BE(1, 57);
    expect(() => decodeRecords(fewer, 0, readBatchHeader(fewer, 0))).toThrow(/remain/);
    const more = Buffer.from(batch);
    more.writeInt32BE(3, 57);
    expect(() => decodeRecords(more, 0, readBatchHeader(more, 0))).toThrow(CorruptDataError);
    const negative = Buffer.from(batch);
    negative.writeInt32BE(-1, 57);
    expect(() => decodeRecords(negative, 0, readBatchHeader(negative, 0))).toThrow(/negative record count/);
  });

  it('a record claiming 2^31-1 headers or a giant key length fails fast', () => {
    // Record 0 of example-A-like batch: body = attrs, Δts, Δoff, key len, key, val len, val, header count.
    const batch = encodeBatch([{ key: Buffer.from('k'), value: Buffer.from('v') }], { baseOffset: 0, nowMs: T0 });
    const h = readBatchHeader(batch, 0);
    const headerCountAt = batch.length - 1;
    const b = Buffer.concat([batch.subarray(0, headerCountAt), Buffer.from([0xfe, 0xff, 0xff, 0xff, 0x0f])]);
    b.writeInt32BE(b.length - 12, 8);
    b[RECORD_BATCH_OVERHEAD] = (b.length - RECORD_BATCH_OVERHEAD - 1) << 1; // fix record length
    // Fails at the first header past the record's end, not after 2^31 iterations (the test's
    // timeout would catch that; timings themselves belong in bench).
    expect(() => decodeRecords(b, 0, readBatchHeader(b, 0))).toThrow(CorruptDataError);
    const k = Buffer.from(batch);
    k[RECORD_BATCH_OVERHEAD + 4] = 0x7e; // key length 63 > record
    expect(() => decodeRecords(k, 0, h)).toThrow(CorruptDataError);
  });
});
