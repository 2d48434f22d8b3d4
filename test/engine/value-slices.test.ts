/**
 * encodeValueSlices (format/value-slices.ts, `append --lines`' encoder) against encodeRecordBatch
 * of the same records {key: null, value, timestamp}, byte for byte: random values and the bytes
 * between them (line ends, and gaps, overlaps and descending ranges that the staged copy must
 * detect), scratch space too small or absent; and Log.appendValueSlices against Log.append, the
 * files written under each flush mode.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Log } from '../../src/api.js';
import { encodeRecordBatch, type EncodeBatchOptions, type RecordInput } from '../../src/engine/format/record-batch.js';
import { encodeValueSlices, type ValueSlices } from '../../src/engine/format/value-slices.js';
import type { FlushMode } from '../../src/engine/config.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

/** Values laid out in one buffer with `gaps[i]` bytes before value i (or given ranges), as slices. */
function slicesOf(values: Buffer[], gaps: number[], timestampMs: number | undefined): ValueSlices {
  const total = values.reduce((n, v, i) => n + v.length + gaps[i]!, 0);
  const buf = Buffer.alloc(total, 0x0a);
  const starts = new Int32Array(values.length + 3);
  const ends = new Int32Array(values.length + 3);
  let at = 0;
  values.forEach((v, i) => {
    at += gaps[i]!;
    starts[i] = at;
    at += v.copy(buf, at);
    ends[i] = at;
  });
  return { buf, starts, ends, count: values.length, timestampMs };
}

const recordsOf = (s: ValueSlices): RecordInput[] =>
  Array.from({ length: s.count }, (_, i) => ({ key: null, value: Buffer.from(s.buf.subarray(s.starts[i]!, s.ends[i]!)), timestamp: s.timestampMs }));

function expectSameBytes(s: ValueSlices, opts: EncodeBatchOptions): void {
  const want = encodeRecordBatch(recordsOf(s), { ...opts, into: undefined });
  const got = encodeValueSlices(s, opts);
  expect(got.buf.equals(want.buf)).toBe(true);
  expect([got.count, got.lastOffsetDelta, got.maxTimestamp]).toEqual([want.count, want.lastOffsetDelta, want.maxTimestamp]);
}

const valueArb = fc.oneof(
  { weight: 6, arbitrary: fc.uint8Array({ minLength: 0, maxLength: 140 }) },
  { weight: 1, arbitrary: fc.integer({ min: 8100, max: 8300 }).map((n) => new Uint8Array(n).fill(0x61)) },
);

describe('encodeValueSlices', () => {
  it('encodes the bytes encodeRecordBatch encodes for the same null-key records, whatever lies between the values', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(valueArb, fc.oneof(fc.constantFrom(1, 2), fc.integer({ min: 0, max: 40 }))), { minLength: 1, maxLength: 300 }),
        fc.option(fc.integer({ min: 0, max: 2 ** 45 }), { nil: undefined }),
        fc.constantFrom(undefined, 0, 100, 70_000, 4 * 1024 * 1024),
        fc.integer({ min: 0, max: 2 ** 40 }),
        (items, timestampMs, intoBytes, baseOffset) => {
          const s = slicesOf(items.map(([v]) => Buffer.from(v)), items.map(([, g]) => g), timestampMs);
          expectSameBytes(s, { baseOffset, nowMs: 1_700_000_000_000, into: intoBytes === undefined ? undefined : Buffer.alloc(intoBytes, 0xee) });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('encodes ranges that repeat, overlap or go backwards (no staged copy) correctly', () => {
    const buf = Buffer.from('alpha\nbeta\ngamma\ndelta\n');
    const cases: [number, number][][] = [
      [[0, 5], [0, 5], [6, 10]],
      [[17, 22], [11, 16], [6, 10], [0, 5]],
      [[0, 10], [6, 16], [3, 8]],
      [[0, 0], [22, 22], [0, 22]],
    ];
    for (const ranges of cases) {
      const s: ValueSlices = { buf, starts: Int32Array.from(ranges.map((r) => r[0])), ends: Int32Array.from(ranges.map((r) => r[1])), count: ranges.length, timestampMs: 5 };
      expectSameBytes(s, { baseOffset: 7, into: Buffer.alloc(4096) });
    }
  });
});

describe('Log.appendValueSlices', () => {
  const files = (dir: string): Record<string, string> =>
    Object.fromEntries(fs.readdirSync(dir).filter((n) => !n.endsWith('.lock')).map((n) => [n, fs.readFileSync(path.join(dir, n)).toString('hex')]));

  for (const flushMode of ['async', 'sync', 'buffered'] as FlushMode[]) {
    it(`writes the files Log.append writes for the same records (${flushMode})`, async () => {
      const root = makeTempDir('logtool-slices-');
      const values = Array.from({ length: 3000 }, (_, i) => Buffer.from(`line ${i} ${'é'.repeat(i % 90)}`));
      const gaps = values.map((_, i) => (i % 3 === 0 ? 2 : 1));
      const results: unknown[][] = [];
      for (const [name, bySlices] of [['a-0', true], ['b-0', false]] as const) {
        const log = Log.open(path.join(root, name), { config: { flushMode, segmentBytes: 64 * 1024 } });
        const got: unknown[] = [];
        for (let b = 0; b < 30; b++) {
          const s = slicesOf(values.slice(b * 100, b * 100 + 100), gaps.slice(b * 100, b * 100 + 100), 1_700_000_000_000 + b);
          got.push(await (bySlices ? log.appendValueSlices(s) : log.append(recordsOf(s))));
        }
        results.push(got);
        await log.close();
      }
      expect(results[0]).toEqual(results[1]);
      const a = files(path.join(root, 'a-0'));
      expect(Object.keys(a).filter((n) => n.endsWith('.log')).length).toBeGreaterThan(3);
      expect(a).toEqual(files(path.join(root, 'b-0')));
    });
  }

  it('refuses an empty batch', () => {
    const log = Log.open(path.join(makeTempDir('logtool-slices-'), 'c-0'));
    expect(() => log.appendValueSlices({ buf: Buffer.alloc(0), starts: new Int32Array(1), ends: new Int32Array(1), count: 0, timestampMs: undefined })).toThrow(/at least one record/);
    void log.close();
  });
});
