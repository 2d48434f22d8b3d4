/**
 * lz4 batches are decoded from their 64 KiB blocks without joining them (record-pieces.ts, issue
 * 15): the same records as the same section read uncompressed, and the same error at the same
 * record when the section is damaged anywhere — inside a block, across a block boundary, at the end.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import '../../../src/engine/format/codecs/index.js';
import { lz4Compress, LZ4_KAFKA_BLOCK_BYTES } from '../../../src/engine/format/codecs/lz4.js';
import { CompressionType } from '../../../src/engine/format/compression.js';
import { decodeRecords, encodeBatch, readBatchHeader, RECORD_BATCH_OVERHEAD, type RecordInput } from '../../../src/engine/format/record-batch.js';

/** The same batch with its records section replaced by `section`, compressed with lz4 or not. */
function batchWith(plain: Buffer, section: Buffer, lz4: boolean): Buffer {
  const head = Buffer.from(plain.subarray(0, RECORD_BATCH_OVERHEAD));
  const body = lz4 ? lz4Compress(section) : section;
  head.writeInt32BE(RECORD_BATCH_OVERHEAD - 12 + body.length, 8); // batchLength
  head.writeInt16BE((head.readInt16BE(21) & ~7) | (lz4 ? CompressionType.lz4 : 0), 21); // attributes: codec
  return Buffer.concat([head, body]);
}

/** What decoding gives: the records (offset, timestamp, key, value, headers) or the error message. */
function outcome(batch: Buffer): unknown {
  try {
    const hex = (b: Buffer | null) => (b === null ? null : b.toString('hex'));
    return decodeRecords(batch, 0, readBatchHeader(batch, 0)).map((r) => [r.offset, r.timestamp, hex(r.key), hex(r.value), r.headers.map((x) => [x.key, hex(x.value)])]);
  } catch (e) {
    return { error: (e as Error).message };
  }
}

const records = fc.array(
  fc.record({
    key: fc.option(fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)), { nil: null }),
    value: fc.option(fc.nat({ max: 2600 }).map((n) => Buffer.alloc(n + 400, n & 0xff)), { nil: null }),
    headers: fc.array(fc.record({ key: fc.string({ maxLength: 8 }), value: fc.option(fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)), { nil: null }) }), { maxLength: 2 }),
  }),
  { minLength: 60, maxLength: 120 },
);

describe('lz4 records taken from the blocks, not joined (issue 15)', () => {
  it('gives the records the same section gives uncompressed, also for records straddling blocks', () => {
    let straddled = 0;
    fc.assert(
      fc.property(records, (rs) => {
        const plain = encodeBatch(rs as RecordInput[], { baseOffset: 1000, nowMs: 5 });
        const section = plain.subarray(RECORD_BATCH_OVERHEAD);
        if (section.length > LZ4_KAFKA_BLOCK_BYTES) straddled++;
        const expected = outcome(plain);
        expect(expected).not.toHaveProperty('error');
        const lz4 = batchWith(plain, section, true);
        expect(outcome(lz4)).toEqual(expected);
        // Taken from the blocks (or a straddling record's own copy), never from one joined section.
        for (const r of decodeRecords(lz4, 0, readBatchHeader(lz4, 0))) if (r.value) expect(r.value.buffer.byteLength).toBeLessThanOrEqual(LZ4_KAFKA_BLOCK_BYTES);
      }),
      { numRuns: 40 },
    );
    expect(straddled).toBeGreaterThan(5); // the property did cover multi-block frames
  });

  it('fails with the error the uncompressed section gives, at the same record, wherever it is damaged', () => {
    const rs: RecordInput[] = Array.from({ length: 150 }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.alloc(900 + (i % 7) * 50, i), headers: i % 3 ? [] : [{ key: 'h', value: Buffer.from('v') }] }));
    const plain = encodeBatch(rs, { baseOffset: 7, nowMs: 5 });
    const section = Buffer.from(plain.subarray(RECORD_BATCH_OVERHEAD));
    expect(section.length).toBeGreaterThan(2 * LZ4_KAFKA_BLOCK_BYTES);
    let errors = 0;
    fc.assert(
      fc.property(
        // Positions near the block boundaries, where records straddle, and anywhere.
        fc.oneof(fc.integer({ min: LZ4_KAFKA_BLOCK_BYTES - 1200, max: LZ4_KAFKA_BLOCK_BYTES + 40 }), fc.integer({ min: 2 * LZ4_KAFKA_BLOCK_BYTES - 1200, max: 2 * LZ4_KAFKA_BLOCK_BYTES + 40 }), fc.integer({ min: 0, max: section.length - 1 })),
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: -3, max: 3 }),
        (at, byte, cut) => {
          const damaged = Buffer.from(section);
          damaged[at] = byte;
          const s = cut < 0 ? damaged.subarray(0, damaged.length + cut) : cut > 0 ? Buffer.concat([damaged, Buffer.alloc(cut)]) : damaged;
          const expected = outcome(batchWith(plain, s, false));
          if ((expected as { error?: string }).error !== undefined) errors++;
          expect(outcome(batchWith(plain, s, true))).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
    expect(errors).toBeGreaterThan(25);
  });
});
