/**
 * The recopy skips, unread, the batches Kafka's filter drops whole (Cleaner.cleanInto /
 * MemoryRecords.filterTo: no record retained, not the last batch of an active producer, not at
 * the round's upper bound; cleaner/dead-runs.ts) — and leaves every file exactly as the reading
 * recopy does.
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/engine/log/log.js';
import { CompressionType } from '../../../src/engine/format/compression.js';
import { OffsetMap, OFFSET_MAP_ENTRY_BYTES } from '../../../src/engine/cleaner/offset-map.js';
import { countingIO } from '../../helpers/counting-io.js';
import { removeTempDirs, tempPartitionPath } from '../../helpers/fixtures.js';
import { buildLog, fingerprint, modelCompaction, readAll, strip, type BatchSpec } from './helpers.js';

afterAll(removeTempDirs);

const T0 = 1_700_000_000_000;
const CONFIG = { segmentBytes: 400 * 1024 };
const PER_BATCH = 40;
const VALUE = 'x'.repeat(1000);

/** Batches of 40 ~1 KiB records whose keys repeat every batch (each batch replaces the previous one's). */
function batches(count: number): BatchSpec[] {
  return Array.from({ length: count }, (_, b) => ({
    // An idempotent producer's only batch in the middle: it stays (emptied), Kafka keeps an active producer's last batch.
    ...(b === 9 ? { producerId: 7, producerEpoch: 0, baseSequence: 0 } : {}),
    records: Array.from({ length: PER_BATCH }, (_, r) => ({ key: `k${(r + (b % 3 === 2 ? 1 : 0)) % PER_BATCH}`, value: `${b}.${r}${VALUE}`, timestamp: T0 + b * PER_BATCH + r })),
  }));
}

async function compact(dir: string, opts: Parameters<Log['compact']>[0]) {
  const counting = countingIO();
  const log = Log.open(dir, { config: CONFIG, io: counting.io });
  try {
    const report = await log.compact({ deleteDelayMs: 0, nowMs: T0 + 10_000, ...opts });
    return { report, logBytesRead: counting.logBytesRead() };
  } finally {
    await log.close();
  }
}

describe('dead batches in the recopy', () => {
  it('are dropped without being read, and the files written are byte for byte those of the reading recopy', async () => {
    const dir = tempPartitionPath('dead-0');
    const written = await buildLog(dir, batches(24), CONFIG);
    const copy = tempPartitionPath('dead-1');
    fs.cpSync(dir, copy, { recursive: true });

    const skipping = await compact(dir, {});
    // No room for the map's marks beside an explicit map size: every batch is read and filtered.
    const reading = await compact(copy, { maxMemoryBytes: 20 << 20, offsetMapBytes: 8 << 20 });
    expect(skipping.report.offsetMap.markBytes).toBeGreaterThan(0);
    expect(reading.report.offsetMap.markBytes).toBe(0);

    expect(fingerprint(dir)).toEqual(fingerprint(copy));
    const facts = (r: typeof skipping.report) => [r.recordsRemoved, r.recordsRetained, r.batchesRemoved, r.batchesEmptied, r.batchesCopied, r.batchesRewritten, r.bytesScanned, r.bytesAfter, r.bytesCrcChecked];
    expect(facts(skipping.report)).toEqual(facts(reading.report));
    expect(skipping.report.batchesEmptied).toBe(1); // the idempotent producer's batch
    expect(skipping.report.batchesRemoved).toBeGreaterThan(15);
    expect(strip(readAll(dir))).toEqual(strip(modelCompaction(written, skipping.report.cleanedThrough)));

    // Batches of ~41 KB (under the header scan's 64 KiB window): the header scan, the map build and
    // a reading recopy read every byte, three times the range; the skipping recopy leaves out the
    // dropped batches (all but the producer's and the runs beside it and at segment ends).
    const batchBytes = PER_BATCH * 1000;
    expect(reading.logBytesRead).toBeGreaterThanOrEqual(3 * reading.report.bytesBefore);
    expect(skipping.logBytesRead).toBeLessThan(3 * skipping.report.bytesBefore - 12 * batchBytes);
  });

  it('are skipped pass by pass when the map fills, compressed ones included, with the same files as reading them', async () => {
    // 120 keys in three sets of 40, a map of 90 keys: each pass maps two batches' keys and ends.
    const specs: BatchSpec[] = batches(18).map((b, i) => ({
      ...b,
      compression: i % 3 === 1 ? CompressionType.gzip : undefined,
      records: b.records.map((r, j) => ({ ...r, key: `s${i % 3}-${j}` })),
    }));
    const dir = tempPartitionPath('dead-2');
    const written = await buildLog(dir, specs, CONFIG);
    const copy = tempPartitionPath('dead-3');
    fs.cpSync(dir, copy, { recursive: true });
    const offsetMapBytes = 100 * OFFSET_MAP_ENTRY_BYTES;
    const skipping = await compact(dir, { offsetMapBytes });
    const reading = await compact(copy, { maxMemoryBytes: 16 << 20, offsetMapBytes });
    expect(skipping.report.passes).toBeGreaterThan(2);
    expect(skipping.report.offsetMap.markBytes).toBeGreaterThan(0);
    expect(reading.report.offsetMap.markBytes).toBe(0);
    expect(fingerprint(dir)).toEqual(fingerprint(copy));
    expect(strip(readAll(dir))).toEqual(strip(readAll(copy)));
    expect(readAll(dir).length).toBeLessThan(written.length);
    expect(skipping.logBytesRead).toBeLessThan(reading.logBytesRead);
  });
});

describe('OffsetMap.anyLatest', () => {
  it('agrees with the per-offset marks over every range, across word boundaries', () => {
    const base = 1000;
    const map = new OffsetMap(4096 * OFFSET_MAP_ENTRY_BYTES, undefined, 200);
    map.clear(base);
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const key = (k: number) => Buffer.from(`key-${k}`);
    for (let o = base; o < base + 200; o++) {
      if (rand() >= 0.9) continue;
      const k = key(Math.floor(rand() * 60));
      map.put(k, 0, k.length, o);
    }
    for (let from = base; from < base + 200; from += 3) {
      for (let to = from; to < base + 200; to += 5) {
        let any = false;
        for (let o = from; o <= to; o++) {
          const bit = (map as unknown as { marks: { state(o: number): number } }).marks.state(o);
          if (bit === 1) any = true;
        }
        expect(map.anyLatest(from, to)).toBe(any);
      }
    }
    expect(map.anyLatest(base - 1, base + 5)).toBeUndefined();
    expect(map.anyLatest(base + 190, base + 200)).toBeUndefined();
  });
});
