/**
 * Producer snapshot files as Kafka writes them (snapshot-files.ts), against the snapshots of a real
 * KRaft broker's idempotent partition kraft-idempotent-multisegment-erickimm-2025/stock-trades-0:
 * 3586.snapshot (at the second segment's base: producers 6000–6007, 6009) and 5579.snapshot (at the
 * log end: producer 8000 too, written second — Kafka's HashMap puts 6000 and 8000 in bucket 0).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { realIO } from '../../../src/engine/io.js';
import { readProducerSnapshot } from '../../../src/engine/partition-state/producer-snapshot.js';
import { kafkaSnapshotOrder, listProducerSnapshots, newestUsableSnapshot, writeProducerSnapshot } from '../../../src/engine/partition-state/snapshot-files.js';
import { fixturePath, makeTempDir, removeTempDirs, requireFixtures } from '../../helpers/fixtures.js';

requireFixtures(import.meta.url);
afterAll(removeTempDirs);

const DIR = fixturePath('segments/kraft-idempotent-multisegment-erickimm-2025', 'stock-trades-0');
const file = (o: number) => path.join(DIR, `${String(o).padStart(20, '0')}.snapshot`);

describe('producer snapshot files', () => {
  it("entries in producer-id order, put in Kafka's HashMap order and written, give Kafka's exact bytes", () => {
    for (const offset of [3586, 5579]) {
      const kafka = readProducerSnapshot(realIO, file(offset));
      const byId = [...kafka].sort((a, b) => (a.producerId < b.producerId ? -1 : 1));
      const tmp = makeTempDir();
      const written = writeProducerSnapshot(realIO, tmp, offset, kafkaSnapshotOrder(byId));
      expect(path.basename(written)).toBe(path.basename(file(offset)));
      expect(fs.readFileSync(written).equals(fs.readFileSync(file(offset)))).toBe(true);
      expect(fs.readdirSync(tmp)).toEqual([path.basename(written)]); // no .tmp left
    }
    expect(kafkaSnapshotOrder(readProducerSnapshot(realIO, file(5579))).map((e) => Number(e.producerId)).slice(0, 3)).toEqual([6000, 8000, 6001]);
  });

  it('HashMap order: the table grows at load factor 0.75, and a given table size is used', () => {
    const e = (id: number) => ({ producerId: BigInt(id), epoch: 0, lastSequence: 0, lastOffset: 0n, offsetDelta: 0, timestamp: 0n, coordinatorEpoch: -1, currentTxnFirstOffset: -1n });
    const ids = (xs: ReturnType<typeof e>[]) => xs.map((x) => Number(x.producerId));
    expect(ids(kafkaSnapshotOrder([e(17), e(1), e(16)]))).toEqual([16, 17, 1]); // 16 → bucket 0, 17 and 1 → bucket 1 in insertion order
    expect(ids(kafkaSnapshotOrder([e(17), e(1), e(16)], 32))).toEqual([1, 16, 17]);
    const thirteen = Array.from({ length: 13 }, (_, i) => e(i * 16 + 1)); // 13 > 12 = 0.75 × 16: table of 32
    expect(ids(kafkaSnapshotOrder(thirteen)).slice(0, 3)).toEqual([1, 33, 65]);
    expect(ids(kafkaSnapshotOrder([e(-1)]))).toEqual([-1]);
  });

  it('the newest usable snapshot at or below an offset; a corrupt one is passed over', () => {
    expect(listProducerSnapshots(realIO, DIR).map((s) => s.offset)).toEqual([3586, 5579]);
    expect(newestUsableSnapshot(realIO, DIR, 6000)?.offset).toBe(5579);
    expect(newestUsableSnapshot(realIO, DIR, 5578)?.offset).toBe(3586);
    expect(newestUsableSnapshot(realIO, DIR, 3585)).toBeUndefined();
    const tmp = makeTempDir();
    for (const o of [3586, 5579]) fs.copyFileSync(file(o), path.join(tmp, path.basename(file(o))));
    const bad = path.join(tmp, path.basename(file(5579)));
    fs.chmodSync(bad, 0o644);
    const bytes = fs.readFileSync(bad);
    bytes[20] ^= 1;
    fs.writeFileSync(bad, bytes);
    const corrupt: string[] = [];
    const found = newestUsableSnapshot(realIO, tmp, 6000, (f, m) => corrupt.push(`${path.basename(f)}: ${m}`));
    expect(found?.offset).toBe(3586);
    expect(found?.entries).toHaveLength(9);
    expect(corrupt).toHaveLength(1);
    expect(corrupt[0]).toMatch(/00000000000000005579\.snapshot: .*CRC/);
    expect(fs.existsSync(bad)).toBe(true);
  });
});
