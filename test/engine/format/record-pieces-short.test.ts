/**
 * Records taken from lz4's blocks and snappy's chunks (record-pieces.ts) are read in one pass when
 * they have the short form nearly every record has (readShortRecord), as records of a joined or
 * uncompressed section are, not field by field (issue 15). record-pieces.test.ts checks that the
 * records and errors are the same either way.
 */
import { describe, expect, it, vi } from 'vitest';
import '../../../src/engine/format/codecs/index.js';
import { CompressionType } from '../../../src/engine/format/compression.js';
import { decodeRecords, encodeBatch, readBatchHeader } from '../../../src/engine/format/record-batch.js';
import { readShortRecord } from '../../../src/engine/format/record-skip.js';

vi.mock('../../../src/engine/format/record-skip.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../src/engine/format/record-skip.js')>();
  return { ...actual, readShortRecord: vi.fn(actual.readShortRecord) };
});

describe.each(['lz4', 'snappy'] as const)('%s records placed in a piece', (codec) => {
  it('are read in one pass each, also those straddling two pieces', () => {
    // 300 records of ~1 KiB: a section of several blocks / chunks, records across each boundary.
    const input = Array.from({ length: 300 }, (_, i) => ({ key: Buffer.from(`key-${i}`), value: Buffer.alloc(1000 + (i % 50), i & 0xff) }));
    const batch = encodeBatch(input, { baseOffset: 0, nowMs: 5, compression: CompressionType[codec] });
    const short = vi.mocked(readShortRecord);
    short.mockClear();
    const out = decodeRecords(batch, 0, readBatchHeader(batch, 0));
    expect(out.map((r) => r.value!.equals(input[Number(r.offset)]!.value))).toEqual(input.map(() => true));
    expect(short).toHaveBeenCalledTimes(300);
    for (const r of short.mock.results) expect(r.value).toBeGreaterThan(0);
  });
});
