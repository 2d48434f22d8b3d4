/**
 * RecordDecoder reads the common record in one pass (record-skip.ts readShortRecord) and any other
 * field by field with Kafka's checks (its parseFields). The one pass may only accept what the
 * checked read accepts, with the same view: otherwise a read would show other bytes, or pass over
 * damage the checked read reports. Both are run at every byte position of random batches, intact
 * and damaged (a position inside a record is random bytes to either).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBatch, readBatchHeader, RecordDecoder, RECORD_BATCH_OVERHEAD } from '../../../src/engine/format/record-batch.js';
import { readShortRecord } from '../../../src/engine/format/record-skip.js';
import { RecordView } from '../../../src/engine/format/record-view.js';
import { T0, recordArb } from '../arbitraries.js';

const FIELDS = ['timestampDelta', 'offsetDelta', 'keyStart', 'keyLength', 'valueStart', 'valueLength', 'headerCount', 'headersStart', 'headersEnd'] as const;
const fieldsOf = (v: RecordView): number[] => FIELDS.map((f) => v[f]);

/** The checked read of the record at `pos` (RecordDecoder's own, reached past its privacy): its view and end, or its error. */
function checkedRead(d: RecordDecoder, pos: number): { fields: number[]; end: number } | { error: string } {
  const inner = d as unknown as { c: { pos: number }; parseFields(i: number, v: RecordView): void };
  const v = new RecordView();
  inner.c.pos = pos;
  try {
    inner.parseFields(0, v);
  } catch (e) {
    return { error: String(e) };
  }
  return { fields: fieldsOf(v), end: inner.c.pos };
}

/** Records of every shape: small and two-byte lengths (values up to 300 B), null keys and values, headers, wide timestamp deltas. */
const batchArb = fc.record({
  records: fc.array(fc.oneof(recordArb({ maxBytes: 300, tsSpread: 30, maxHeaders: 0 }), recordArb({ maxBytes: 300, tsSpread: 20_000, maxHeaders: 1 })), { minLength: 1, maxLength: 8 }),
  damage: fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { maxLength: 4 }),
});

describe('the one-pass read of short records', () => {
  it('accepts only records the checked read accepts, with the same view and end, at every byte position', () => {
    let accepted = 0;
    let damagedAccepted = 0;
    fc.assert(
      fc.property(batchArb, ({ records, damage }) => {
        const buf = Buffer.from(encodeBatch(records, { baseOffset: 0, nowMs: T0 }));
        const h = readBatchHeader(buf, 0);
        for (const d of damage) buf[RECORD_BATCH_OVERHEAD + (d.at % (buf.length - RECORD_BATCH_OVERHEAD))] = d.byte;
        const decoder = new RecordDecoder(buf, 0, h);
        const v = new RecordView();
        for (let pos = RECORD_BATCH_OVERHEAD; pos <= buf.length; pos++) {
          const end = readShortRecord(buf, pos, buf.length, v);
          if (end < 0) continue;
          accepted++;
          if (damage.length > 0) damagedAccepted++;
          expect(checkedRead(decoder, pos)).toEqual({ fields: fieldsOf(v), end });
        }
      }),
      { numRuns: 1000 },
    );
    // The property was exercised, on intact and damaged bytes alike.
    expect(accepted).toBeGreaterThan(1000);
    expect(damagedAccepted).toBeGreaterThan(0);
  });

  it('takes the records a 100 B read is made of, and passes any record with a header to the checked read', () => {
    const value = Buffer.alloc(100, 0x41);
    const buf = encodeBatch(
      Array.from({ length: 500 }, (_, i) => ({ key: i % 2 ? null : Buffer.from('k'), value, timestamp: T0 + (i % 50), headers: i === 7 ? [{ key: 'h', value: null }] : [] })),
      { baseOffset: 0, nowMs: T0 },
    );
    const decoder = new RecordDecoder(buf, 0, readBatchHeader(buf, 0));
    const v = new RecordView();
    let short = 0;
    for (let i = 0, pos = RECORD_BATCH_OVERHEAD; i < 500; i++) {
      const end = readShortRecord(buf, pos, buf.length, v);
      const checked = checkedRead(decoder, pos);
      if (i === 7) expect(end).toBe(-1);
      else {
        expect(checked).toEqual({ fields: fieldsOf(v), end });
        short++;
      }
      pos = 'end' in checked ? checked.end : -1;
    }
    expect(short).toBe(499);
  });
});
