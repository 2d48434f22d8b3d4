/**
 * Buffered mode joins consecutive plain appends into one batch (log/open-batch.ts), as a Kafka
 * producer's batches join its sends: same offsets, timestamps, keys and values, valid batches of
 * at most batch.bytes, the exact bytes of one append of the same records, and no joining across
 * anything per batch (compression, producer ids, headers, another flush mode).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, type RecordInput } from '../../src/api.js';
import { crc32c } from '../../src/engine/format/crc32c.js';
import { CompressionType } from '../../src/engine/format/compression.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { rebuiltIndexes } from '../helpers/index-rebuild.js';
import { plain, plainInput, T0, type PlainRecord } from './arbitraries.js';

afterAll(removeTempDirs);

interface BatchHead {
  baseOffset: number;
  bytes: number;
  count: number;
  lastOffsetDelta: number;
  attributes: number;
  producerId: bigint;
  crcOk: boolean;
}

/** The v2 batch headers of one `.log` file, each CRC-32C checked. */
function batchHeads(file: string): BatchHead[] {
  const buf = fs.readFileSync(file);
  const out: BatchHead[] = [];
  for (let pos = 0; pos < buf.length; ) {
    const bytes = 12 + buf.readInt32BE(pos + 8);
    out.push({
      baseOffset: Number(buf.readBigInt64BE(pos)),
      bytes,
      count: buf.readInt32BE(pos + 57),
      lastOffsetDelta: buf.readInt32BE(pos + 23),
      attributes: buf.readInt16BE(pos + 21),
      producerId: buf.readBigInt64BE(pos + 43),
      crcOk: crc32c(buf, pos + 21, pos + bytes) === buf.readUInt32BE(pos + 17),
    });
    pos += bytes;
  }
  return out;
}

const logFiles = (dir: string): string[] => fs.readdirSync(dir).filter((n) => n.endsWith('.log')).sort().map((n) => path.join(dir, n));
const readAll = (log: Log): PlainRecord[] => [...log.read()].map(plain);

describe('buffered mode joins plain appends into batches (batch.bytes)', () => {
  it('one-record appends: every record back, batches of at most batch.bytes, valid and indexed as a rebuild would', async () => {
    const dir = path.join(makeTempDir(), 'j-0');
    const cfg = { flushMode: 'buffered' as const, commitBytes: 64 * 1024, indexIntervalBytes: 4096, segmentBytes: 256 * 1024 };
    const log = Log.open(dir, { config: cfg });
    const expected: PlainRecord[] = [];
    for (let i = 0; i < 5000; i++) {
      const r: RecordInput = { key: i % 3 === 0 ? null : Buffer.from(`k${i}`), value: Buffer.alloc(40 + (i % 90), i & 0xff), timestamp: T0 + (i % 7 === 0 ? -i : i) };
      const res = await log.append([r]);
      expect(res).toEqual({ baseOffset: i, lastOffset: i, count: 1, status: 'written' });
      expected.push(plainInput(r, i));
    }
    await log.close();
    const ro = Log.open(dir, { readOnly: true });
    expect(readAll(ro)).toEqual(expected);
    const segmentBases = ro.segments.map((s) => s.baseOffset);
    await ro.close();
    const heads = logFiles(dir).flatMap(batchHeads);
    expect(heads.every((b) => b.crcOk)).toBe(true);
    expect(heads.every((b) => b.bytes <= 16 * 1024)).toBe(true);
    expect(heads.length).toBeLessThan(5000 / 50); // ~150 B records, 16 KiB batches: ~100 records each
    let next = 0;
    for (const b of heads) {
      expect(b.baseOffset).toBe(next);
      expect(b.lastOffsetDelta).toBe(b.count - 1);
      next += b.count;
    }
    expect(next).toBe(5000);
    expect(segmentBases.length).toBeGreaterThan(1);
    const rebuilt = rebuiltIndexes(dir, segmentBases, cfg.indexIntervalBytes, 10 * 1024 * 1024);
    for (const base of segmentBases) {
      const name = String(base).padStart(20, '0');
      expect(fs.readFileSync(path.join(dir, `${name}.index`)).equals(rebuilt.get(base)!.index)).toBe(true);
      expect(fs.readFileSync(path.join(dir, `${name}.timeindex`)).equals(rebuilt.get(base)!.timeindex)).toBe(true);
    }
  });

  it('a joined batch has the bytes of one append of the same records', async () => {
    const records: RecordInput[] = Array.from({ length: 60 }, (_, i) => ({ key: i % 2 ? Buffer.from(`key-${i}`) : null, value: i % 11 === 0 ? null : Buffer.alloc(i * 3, i), timestamp: T0 + i * 1000 - (i % 5) * 7 }));
    const joinedDir = path.join(makeTempDir(), 'joined-0');
    const joined = Log.open(joinedDir, { config: { flushMode: 'buffered' } });
    for (let i = 0; i < records.length; i += 7) await joined.append(records.slice(i, i + 7));
    await joined.close();
    const oneDir = path.join(makeTempDir(), 'one-0');
    const one = Log.open(oneDir, { config: { flushMode: 'async' } });
    await one.append(records);
    await one.close();
    const log = (d: string) => fs.readFileSync(logFiles(d)[0]!);
    expect(batchHeads(logFiles(joinedDir)[0]!)).toHaveLength(1);
    expect(log(joinedDir).equals(log(oneDir))).toBe(true);
  });

  it('nothing joins across a compressed, producer, header-carrying or async append, nor with batch.bytes 0', async () => {
    const dir = path.join(makeTempDir(), 'mix-0');
    const log = Log.open(dir, { config: { flushMode: 'buffered' } });
    const rec = (i: number, extra: Partial<RecordInput> = {}): RecordInput => ({ key: null, value: Buffer.from(`v${i}`), timestamp: T0 + i, ...extra });
    const expected: PlainRecord[] = [];
    const add = async (rs: RecordInput[], options?: Parameters<Log['append']>[1]): Promise<void> => {
      const res = await log.append(rs, options);
      expect(res.baseOffset).toBe(expected.length);
      for (const r of rs) expected.push(plainInput(r, expected.length));
    };
    await add([rec(0), rec(1)]);
    await add([rec(2)]); // joins: batch [0, 2]
    await add([rec(3), rec(4)], { compression: CompressionType.lz4 }); // its own batch
    await add([rec(5)]); // opens [5, 6]
    await add([rec(6)]);
    await add([rec(7, { headers: [{ key: 'h', value: Buffer.from('x') }] })]); // headers: its own batch
    await add([rec(8)]); // opens [8, 9]
    await add([rec(9)], { producerId: 7, producerEpoch: 0, baseSequence: 0 }); // producer: its own, and seals [8]
    await add([rec(10)]);
    await add([rec(11)], { flushMode: 'async' }); // commits [10] first, then itself
    await add([rec(12)]);
    await log.close();
    const ro = Log.open(dir, { readOnly: true });
    expect(readAll(ro)).toEqual(expected);
    await ro.close();
    const heads = batchHeads(logFiles(dir)[0]!);
    expect(heads.every((b) => b.crcOk)).toBe(true);
    expect(heads.map((b) => [b.baseOffset, b.count])).toEqual([[0, 3], [3, 2], [5, 2], [7, 1], [8, 1], [9, 1], [10, 1], [11, 1], [12, 1]]);
    expect(heads[1]!.attributes & 7).toBe(CompressionType.lz4);
    expect(heads[5]!.producerId).toBe(7n);

    const apartDir = path.join(makeTempDir(), 'apart-0');
    const apart = Log.open(apartDir, { config: { flushMode: 'buffered', batchBytes: 0 } });
    for (let i = 0; i < 5; i++) await apart.append([rec(i)]);
    await apart.close();
    expect(batchHeads(logFiles(apartDir)[0]!).map((b) => b.count)).toEqual([1, 1, 1, 1, 1]);
  });

  it('an append larger than batch.bytes is a batch of its own, and a small one after it opens a new batch', async () => {
    const dir = path.join(makeTempDir(), 'big-0');
    const log = Log.open(dir, { config: { flushMode: 'buffered', batchBytes: 1024 } });
    const small = (n: number): RecordInput[] => Array.from({ length: n }, () => ({ key: null, value: Buffer.alloc(100, 1), timestamp: T0 }));
    await log.append(small(3));
    await log.append(small(20)); // ~2.2 KB: alone
    await log.append(small(4)); // joins nothing before it (the big one is not open)
    await log.append(small(4));
    await log.append(small(4)); // would pass 1 KiB: a new batch
    await log.close();
    const heads = batchHeads(logFiles(dir)[0]!);
    expect(heads.map((b) => b.count)).toEqual([3, 20, 8, 4]);
    expect(heads.every((b) => b.crcOk)).toBe(true);
  });
});
