/**
 * Recovery of real broker log directories (../shared/fixtures/kafka/segments, read-only; each
 * partition is copied into its own temp log dir with the root checkpoints and, where present,
 * the clean-shutdown marker; absent all-zero preallocated indexes are recreated in the copy):
 *
 *  - the cases without a clean-shutdown marker (ldipoc, seanorth, berkayakcay, mscaldas; their
 *    recovery points are below the log end) recover without losing any batch the broker wrote:
 *    nothing truncated or dropped, every `.log` byte-identical, log end ≥ the high watermark;
 *  - the cases shut down cleanly report nothing to repair, and their log end equals the recovery
 *    point the broker checkpointed;
 *  - indexes rebuilt by Kafka's recovery rule either equal the broker's files or differ only in
 *    ways Kafka's lookups accept (older brokers' time-index offsets, fact 8).
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { loadLog } from '../../src/engine/recovery/loader.js';
import { realIO } from '../../src/engine/io.js';
import { resolveConfig } from '../../src/engine/config.js';
import { parseTopicPartition } from '../../src/engine/log/topic-partition.js';
import { LogSegment } from '../../src/engine/segment/segment.js';
import { verifySegmentIndexFiles } from '../../src/engine/recovery/index-rebuilder.js';
import { verifySegmentIndexes } from '../../src/engine/recovery/index-verifier.js';
import { copyPartition, fixturePath, hasCleanShutdownMarker, hasFixtures, makeTempDir, removeTempDirs, segmentCases, type SegmentCase } from '../helpers/fixtures.js';

import { requireFixtures } from '../helpers/fixtures.js';
requireFixtures(import.meta.url);

afterAll(removeTempDirs);

const UNCLEAN = ['ldipoc', 'seanorth', 'berkayakcay', 'mscaldas'];
const ROOT_FILES = ['recovery-point-offset-checkpoint', 'log-start-offset-checkpoint', 'replication-offset-checkpoint', '.kafka_cleanshutdown'];

const sha = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

function partitionsOf(c: SegmentCase): string[] {
  return fs
    .readdirSync(fixturePath(c.case))
    .filter((n) => fs.statSync(fixturePath(c.case, n)).isDirectory() && parseTopicPartition(n) !== undefined)
    .sort();
}

/** A private log dir holding one partition of the case. */
function copyOne(c: SegmentCase, partition: string): { dir: string; logDir: string } {
  const logDir = makeTempDir('logtool-fixture-');
  for (const f of ROOT_FILES) if (fs.existsSync(fixturePath(c.case, f))) fs.copyFileSync(fixturePath(c.case, f), path.join(logDir, f));
  const dir = copyPartition(c, partition, logDir, { recreateZeroIndexes: true });
  for (const n of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, n), 0o644);
  for (const n of fs.readdirSync(logDir)) fs.chmodSync(path.join(logDir, n), n === path.basename(dir) ? 0o755 : 0o644);
  return { dir, logDir };
}

function logHashes(dir: string): Record<string, string> {
  return Object.fromEntries(
    fs
      .readdirSync(dir)
      .filter((n) => n.endsWith('.log'))
      .map((n) => [n, sha(path.join(dir, n))]),
  );
}

const cases = segmentCases();

describe.skipIf(!hasFixtures)('recovery of real broker log directories', () => {
  it('the corpus has the expected unclean and clean cases', () => {
    expect(cases.length).toBe(10);
    for (const c of cases) expect(hasCleanShutdownMarker(c), c.case).toBe(!UNCLEAN.some((u) => c.case.includes(u)));
  });

  for (const c of cases) {
    const clean = hasCleanShutdownMarker(c);
    it(`${c.case.replace('segments/', '')}: ${clean ? 'clean shutdown, nothing to repair' : 'unclean shutdown, recovered without losing a batch'}`, () => {
      const config = resolveConfig({});
      let scanned = 0;
      let identical = 0;
      let validDifferent = 0;
      for (const partition of partitionsOf(c)) {
        const facts = c.partitions[partition] ?? {};
        const { dir } = copyOne(c, partition);
        const before = logHashes(dir);
        const tp = parseTopicPartition(dir)!;
        const where = `${c.case}/${partition}`;
        const r = loadLog({ io: realIO, dir, tp, config, readOnly: false, discardLost: false, onWarning: () => {} });
        for (const s of r.segments) s.close();
        const rep = r.report;
        expect(rep.truncated, where).toEqual([]);
        expect(rep.segmentsDropped, where).toEqual([]);
        expect(rep.tempFilesRemoved, where).toEqual([]);
        // Every .log is byte-identical (a partition without any gets an empty one, as Kafka does).
        expect(Object.fromEntries(Object.entries(logHashes(dir)).filter(([n]) => n in before)), where).toEqual(before);
        const hw = facts.replication !== undefined ? Number(facts.replication) : undefined;
        const rp = facts['recovery-point'] !== undefined ? Number(facts['recovery-point']) : undefined;
        if (hw !== undefined) expect(r.nextOffset, `${where}: log end vs high watermark`).toBeGreaterThanOrEqual(hw);
        if (clean) {
          // Indexes the copy lacks (files of 4 MiB or more left out of the corpus) are the only repair allowed.
          // So is following the log end where the corpus left the .log files out (KRaft's
          // __cluster_metadata-0): its epochs and snapshots point past the emptied log, and the
          // loader truncates them as Kafka's does.
          const excludedLogs = (c.excludedFiles as { path: string }[]).filter((a) => a.path.startsWith(`${partition}/`) && a.path.endsWith('.log')).length;
          const missingInCorpus = c.absentFiles.filter((a) => a.path.startsWith(`${partition}/`)).length + excludedLogs;
          if (missingInCorpus === 0) expect(rep.repaired, `${where}: ${JSON.stringify(rep)}`).toBe(false);
          if (rp !== undefined) {
            expect(rep.cleanShutdown, where).toBe(true);
            expect(r.nextOffset, `${where}: log end vs recovery point`).toBe(rp);
            expect(rep.segmentsScanned, where).toBe(0);
          }
        } else {
          expect(rep.cleanShutdown, where).toBe(false);
          if (rp !== undefined && hw !== undefined && hw > rp) expect(rep.segmentsScanned, where).toBeGreaterThan(0);
        }
        scanned += rep.segmentsScanned;

        // Indexes by Kafka's recovery rule vs the broker's files.
        for (const s of fs.readdirSync(dir).filter((n) => /^\d{20}\.log$/.test(n))) {
          const base = Number(s.slice(0, 20));
          const v = verifySegmentIndexFiles(realIO, dir, base, { indexIntervalBytes: config.indexIntervalBytes });
          expect(v.scan.end, `${where}/${s}`).toEqual({ kind: 'end' });
          if (v.missing.length > 0) continue;
          if (v.differenceCount === 0) {
            identical++;
            continue;
          }
          const seg = new LogSegment({ io: realIO, dir, baseOffset: base, indexIntervalBytes: config.indexIntervalBytes, maxIndexBytes: 0, writable: false });
          try {
            expect(verifySegmentIndexes(seg), `${where}/${s}: ${JSON.stringify(v.differences.slice(0, 3))}`).toEqual([]);
          } finally {
            seg.closeQuietly();
          }
          validDifferent++;
        }
      }
      if (!clean) expect(scanned).toBeGreaterThan(0);
      expect(identical + validDifferent).toBeGreaterThan(0);
    });
  }
});
