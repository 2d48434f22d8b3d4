/**
 * Kafka's own partitions (../shared/fixtures/kafka/segments, copied to a temp dir first):
 *
 *  - the partitions Kafka's cleaner compacted (`__consumer_offsets` with delete-horizon batches,
 *    cleaner-offset-checkpoint entries) read correctly: every record, the horizon batches' flags;
 *  - compacting them again (from the log start: every partition Kafka's cleaner worked on, one
 *    per codec, those with producer ids, one metadata log) keeps exactly what Kafka's cleaner
 *    would keep — the latest record per key below the active segment, tombstones until their
 *    batch's delete horizon — so nothing Kafka would keep is removed; before the horizon, Kafka's
 *    cleaned batches come out byte for byte as Kafka wrote them;
 *  - partitions that cannot be compacted (records without a key, e.g. the KRaft metadata log) are
 *    refused without any change; every batch written decodes with kafkajs and has a valid CRC.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/engine/log/log.js';
import { KeylessRecordsError } from '../../../src/engine/cleaner/cleaner.js';
import { decodeRecords, readBatchHeader } from '../../../src/engine/format/record-batch.js';
import { copyPartition, hasFixtures, makeTempDir, removeTempDirs, segmentCases, type SegmentCase } from '../../helpers/fixtures.js';
import { checkAllCrcs, fingerprint, kafkajsDecodeAll, kafkajsRecords, rawBatches, strip, type Rec } from './helpers.js';

import { requireFixtures } from '../../helpers/fixtures.js';
requireFixtures(import.meta.url);

afterAll(removeTempDirs);

interface Facts {
  records: (Rec & { horizon: number | undefined })[];
  keyless: number;
  activeBase: number;
  horizons: number[];
}

/** Every data record with its batch's delete horizon, straight from the batch bytes. */
function facts(dir: string): Facts {
  const records: Facts['records'] = [];
  let keyless = 0;
  const horizons: number[] = [];
  const logs = fs.readdirSync(dir).filter((n) => /^\d{20}\.log$/.test(n)).sort();
  const activeBase = Number(logs[logs.length - 1]!.slice(0, 20));
  for (const b of rawBatches(dir)) {
    const h = readBatchHeader(b.bytes, 0);
    if (h.attributes & 0x20) continue; // control
    const horizon = h.attributes & 0x40 ? h.baseTimestamp : undefined;
    if (horizon !== undefined) horizons.push(horizon);
    for (const r of decodeRecords(b.bytes, 0, h)) {
      if (r.key === null && r.offset < activeBase) keyless++;
      records.push({ offset: r.offset, key: r.key === null ? null : r.key.toString('latin1'), value: r.value === null ? null : r.value.toString('latin1'), timestamp: r.timestamp, horizon });
    }
  }
  return { records, keyless, activeBase, horizons };
}

/** What Kafka's cleaner keeps when cleaning [0, activeBase) at time now. */
function kafkaWouldKeep(f: Facts, now: number): string[] {
  const latest = new Map<string, number>();
  for (const r of f.records) if (r.offset < f.activeBase && r.key !== null) latest.set(r.key, r.offset);
  return strip(f.records.filter((r) => r.offset >= f.activeBase || (r.key !== null && latest.get(r.key) === r.offset && (r.value !== null || r.horizon === undefined || now < r.horizon))));
}

function readAllLatin1(dir: string): string[] {
  const log = Log.open(dir, { readOnly: true });
  try {
    return strip([...log.read()].map((r) => ({ offset: r.offset, key: r.key === null ? null : r.key.toString('latin1'), value: r.value === null ? null : r.value.toString('latin1'), timestamp: r.timestamp })));
  } finally {
    void log.close();
  }
}

/** Hashes of the `.log` files only (index files are rebuilt by opens, and large when preallocated). */
function logFingerprint(dir: string): Record<string, string> {
  return Object.fromEntries(Object.entries(fingerprint(dir)).filter(([f]) => f.endsWith('.log')));
}

/**
 * The partitions to compact again: every one Kafka's cleaner has worked on (an entry in its log
 * directory's cleaner-offset-checkpoint), one per codec, those with producer ids, and one KRaft
 * metadata log (records without keys: refused).
 */
function selectPartitions(): { c: SegmentCase; p: string }[] {
  const out: { c: SegmentCase; p: string }[] = [];
  const codecsSeen = new Set<string>();
  let metadata = 0;
  for (const c of segmentCases()) {
    for (const [p, f] of Object.entries(c.partitions)) {
      const files = Object.values(f.selfDecoded ?? {});
      if (f.empty || !files.some((d) => d.records > 0)) continue;
      const codecs = [...new Set(files.flatMap((d) => Object.keys(d.codecs)))].sort().join('+');
      const producers = files.some((d) => d.producerIds.some((id) => id !== '-1'));
      const isMetadata = p.startsWith('__cluster_metadata');
      if (f.cleaner !== undefined || producers || (isMetadata && metadata++ < 1) || !codecsSeen.has(codecs)) out.push({ c, p });
      codecsSeen.add(codecs);
    }
  }
  return out;
}

describe.skipIf(!hasFixtures)("Kafka's compacted partitions", () => {
  const horizonCase = segmentCases().find((c) => c.case.endsWith('kraft-confluentgo-mashakosher-2025'));

  it('reads the partitions Kafka cleaned, delete-horizon batches included', () => {
    expect(horizonCase).toBeDefined();
    for (const p of ['__consumer_offsets-15', '__consumer_offsets-2']) {
      const dir = copyPartition(horizonCase!, p, makeTempDir(), { recreateZeroIndexes: true });
      const expected = Object.values(horizonCase!.partitions[p]!.selfDecoded!).reduce((n, d) => n + d.records, 0);
      const f = facts(dir);
      expect(readAllLatin1(dir).length).toBe(expected);
      expect(f.horizons.length).toBe(1);
      // The horizon batch's records read with timestamps below the horizon (base = horizon, deltas negative).
      const h = f.records.filter((r) => r.horizon !== undefined);
      expect(h.length).toBeGreaterThan(0);
      for (const r of h) expect(r.timestamp).toBeLessThan(r.horizon!);
    }
  });

  it('before the delete horizon, compacting a Kafka-cleaned partition again keeps its batches byte for byte', async () => {
    const dir = copyPartition(horizonCase!, '__consumer_offsets-15', makeTempDir(), { recreateZeroIndexes: true });
    const f = facts(dir);
    const cleanedBefore = rawBatches(dir).filter((b) => b.file.endsWith('00000000000000000000.log')).map((b) => b.bytes.toString('hex'));
    const log = Log.open(dir);
    const r = await log.compact({ nowMs: Math.min(...f.horizons) - 1, fromStart: true, deleteDelayMs: 0 });
    await log.close();
    expect(r.recordsRemoved).toBe(0);
    const cleanedAfter = rawBatches(dir).filter((b) => b.file.endsWith('00000000000000000000.log')).map((b) => b.bytes.toString('hex'));
    expect(cleanedAfter).toEqual(cleanedBefore);
  });

  it('compacting Kafka partitions again keeps exactly what Kafka would keep (or refuses without changes)', async () => {
    const partitions = selectPartitions();
    expect(partitions.filter(({ c, p }) => c.partitions[p]!.cleaner !== undefined).length).toBeGreaterThanOrEqual(5);
    let compacted = 0;
    let refused = 0;
    for (const { c, p } of partitions) {
      const dir = copyPartition(c, p, makeTempDir());
      // Open once as a writer so recovery (indexes of a copy without the clean-shutdown marker) is done.
      await Log.open(dir).close();
      const f = facts(dir);
      const magics = Object.values(c.partitions[p]!.selfDecoded ?? {}).flatMap((d) => Object.keys(d.magics));
      // After the horizons Kafka set, so that expired tombstones go too.
      const now = Math.max(0, ...f.horizons) + 1;
      const before = logFingerprint(dir);
      const log = Log.open(dir);
      let err: unknown;
      try {
        await log.compact({ nowMs: now, fromStart: true, deleteDelayMs: 0 });
      } catch (e) {
        err = e;
      } finally {
        await log.close();
      }
      const where = `${path.basename(c.case)}/${p}`;
      if (f.keyless > 0 || magics.some((m) => m !== '2')) {
        expect(err, where).toBeDefined();
        if (f.keyless > 0 && magics.every((m) => m === '2')) expect(err, where).toBeInstanceOf(KeylessRecordsError);
        expect(logFingerprint(dir), where).toEqual(before);
        refused++;
        continue;
      }
      if (err) throw err;
      expect(readAllLatin1(dir), where).toEqual(kafkaWouldKeep(f, now));
      checkAllCrcs(dir);
      expect(strip(kafkajsRecords(await kafkajsDecodeAll(dir), 'latin1')), where).toEqual(readAllLatin1(dir));
      compacted++;
    }
    expect(compacted).toBeGreaterThanOrEqual(10);
    expect(refused).toBeGreaterThan(0);
  });
});
