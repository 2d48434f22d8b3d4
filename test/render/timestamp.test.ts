/**
 * formatTimestamp (src/render/timestamp.ts) prints what `new Date(ts).toISOString()` prints for
 * every timestamp a Date holds, though it makes one Date per second of timestamps: in order, out of
 * order, at the edges of the Date range and of each second, and across years with six digits.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../src/render/timestamp.js';

const MAX_DATE_MS = 8.64e15;

describe('formatTimestamp', () => {
  it('is toISOString for any millisecond a Date holds, whatever came before', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: MAX_DATE_MS }), { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 2000 }), (tss, step) => {
        for (const ts of tss) {
          for (const t of [ts, Math.min(MAX_DATE_MS, ts + step), ts - (ts % 1000), Math.max(0, ts - 1)]) expect(formatTimestamp(t)).toBe(new Date(t).toISOString());
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a run of records in one second, the edges, and what a Date cannot hold', () => {
    const base = Date.UTC(2026, 11, 1, 23, 59, 59, 0);
    for (let ms = 0; ms < 1000; ms++) expect(formatTimestamp(base + ms)).toBe(new Date(base + ms).toISOString());
    for (const t of [0, 1, 9, 10, 99, 100, 999, 1000, 253402300799999, 253402300800000, MAX_DATE_MS - 1, MAX_DATE_MS, 1.5]) expect(formatTimestamp(t)).toBe(new Date(t).toISOString());
    expect(formatTimestamp(-1)).toBe('-1');
    expect(formatTimestamp(MAX_DATE_MS + 1)).toBe('8640000000000001');
  });
});
