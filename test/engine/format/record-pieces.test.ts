/**
 * lz4 and snappy batches are decoded from their 64 KiB blocks / 32 KiB xerial chunks without
 * joining them (record-pieces.ts, issue 15): the same records as the same section read uncompressed, and the same error at the same
 * record when the section is damaged anywhere — inside a block, across a block boundary, at the end.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import '../../../src/engine/format/codecs/index.js';
import { lz4Compress, LZ4_KAFKA_BLOCK_BYTES } from '../../../src/engine/format/codecs/lz4.js';
import { snappyCompress, XERIAL_BLOCK_BYTES } from '../../../src/engine/format/codecs/snappy.js';
import { CompressionType } from '../../../src/engine/format/compression.js';
import { decodeRecords, encodeBatch, readBatchHeader, RECORD_BATCH_OVERHEAD, type RecordInput } from '../../../src/engine/format/record-batch.js';

type Pieced = 'lz4' | 'snappy';
/** Each codec that gives pieces: how it compresses and its piece size. */
const piecedCodecs = [
  { codec: 'lz4' as const, compress: (b: Buffer) => lz4Compress(b), pieceBytes: LZ4_KAFKA_BLOCK_BYTES },
  { codec: 'snappy' as const, compress: snappyCompress, pieceBytes: XERIAL_BLOCK_BYTES },
];

/** The same batch with its records section replaced by `section`, compressed with `codec` or not. */
function batchWith(plain: Buffer, section: Buffer, codec?: Pieced): Buffer {
  const head = Buffer.from(plain.subarray(0, RECORD_BATCH_OVERHEAD));
  const body = codec === undefined ? section : piecedCodecs.find((c) => c.codec === codec)!.compress(section);
  head.writeInt32BE(RECORD_BATCH_OVERHEAD - 12 + body.length, 8); // batchLength
  head.writeInt16BE((head.readInt16BE(21) & ~7) | (codec === undefined ? 0 : CompressionType[codec]), 21); // attributes: codec
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

describe.each(piecedCodecs)('$codec records taken from the pieces, not joined (issue 15)', ({ codec, pieceBytes }) => {
  it('gives the records the same section gives uncompressed, also for records straddling blocks', () => {
    let straddled = 0;
    fc.assert(
      fc.property(records, (rs) => {
        const plain = encodeBatch(rs as RecordInput[], { baseOffset: 1000, nowMs: 5 });
        const section = plain.subarray(RECORD_BATCH_OVERHEAD);
        if (section.length > pieceBytes) straddled++;
        const expected = outcome(plain);
        expect(expected).not.toHaveProperty('error');
        const packed = batchWith(plain, section, codec);
        expect(outcome(packed)).toEqual(expected);
        // Taken from the pieces (or a straddling record's own copy), never from one joined section.
        for (const r of decodeRecords(packed, 0, readBatchHeader(packed, 0))) if (r.value) expect(r.value.buffer.byteLength).toBeLessThanOrEqual(pieceBytes);
      }),
      { numRuns: 40 },
    );
    expect(straddled).toBeGreaterThan(5); // the property did cover multi-block frames
  });

  it('fails with the error the uncompressed section gives, at the same record, wherever it is damaged', () => {
    const rs: RecordInput[] = Array.from({ length: 150 }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.alloc(900 + (i % 7) * 50, i), headers: i % 3 ? [] : [{ key: 'h', value: Buffer.from('v') }] }));
    const plain = encodeBatch(rs, { baseOffset: 7, nowMs: 5 });
    const section = Buffer.from(plain.subarray(RECORD_BATCH_OVERHEAD));
    expect(section.length).toBeGreaterThan(2 * pieceBytes);
    let errors = 0;
    fc.assert(
      fc.property(
        // Positions near the block boundaries, where records straddle, and anywhere.
        fc.oneof(fc.integer({ min: pieceBytes - 1200, max: pieceBytes + 40 }), fc.integer({ min: 2 * pieceBytes - 1200, max: 2 * pieceBytes + 40 }), fc.integer({ min: 0, max: section.length - 1 })),
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: -3, max: 3 }),
        (at, byte, cut) => {
          const damaged = Buffer.from(section);
          damaged[at] = byte;
          const s = cut < 0 ? damaged.subarray(0, damaged.length + cut) : cut > 0 ? Buffer.concat([damaged, Buffer.alloc(cut)]) : damaged;
          const expected = outcome(batchWith(plain, s));
          if ((expected as { error?: string }).error !== undefined) errors++;
          expect(outcome(batchWith(plain, s, codec))).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
    expect(errors).toBeGreaterThan(25);
  });
});
