/**
 * Kafka's cleaner schedule (src/engine/cleaner/schedule.ts, kafka-format.md §15.1):
 *
 *  - the dirty ratio is computed at segment granularity (a segment straddling the first dirty
 *    offset counts as clean and as cleanable) and matches a hand computation;
 *  - min.cleanable.dirty.ratio decides below/above; min.compaction.lag.ms bounds the cleanable
 *    range; max.compaction.lag.ms forces a compaction once a dirty batch is old enough;
 *  - background compaction (LogOptions.cleanerCheckIntervalMs) runs when the policy is compact and
 *    the schedule asks for it, and not otherwise;
 *  - `logtool compact --if-needed` exits 0 either way, compacts only when needed, and its JSON
 *    carries dirtyRatio and needed; the config flags are validated.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/engine/log/log.js';
import type { LogConfig } from '../../../src/engine/config.js';
import { compactionSchedule } from '../../../src/engine/cleaner/schedule.js';
import { cliSync } from '../../helpers/cli.js';
import { ensureBuilt } from '../../helpers/build.js';
import { removeTempDirs, tempPartitionPath } from '../../helpers/fixtures.js';
import { readAll } from './helpers.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const T0 = 1_700_000_000_000;

/**
 * 20 single-record batches of one size B (keys k0..k4, 3-digit values, timestamps T0 + i s), with
 * segment.bytes = 3B: segments at 0, 3, 6, 9, 12, 15 hold 3 batches each, the active one at 18
 * holds 2. Returns the directory and B.
 */
async function build(name: string, config: Partial<LogConfig> = {}): Promise<{ dir: string; B: number }> {
  const dir = tempPartitionPath(name);
  // One batch alone gives its size.
  const probe = tempPartitionPath('probe-0');
  const p = Log.open(probe, { config: { flushMode: 'async' } });
  await p.append([{ key: Buffer.from('k0'), value: Buffer.from('v000'), timestamp: T0 }]);
  const B = p.segments[0]!.size;
  await p.close();
  const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 3 * B, ...config } });
  for (let i = 0; i < 20; i++) await log.append([{ key: Buffer.from(`k${i % 5}`), value: Buffer.from(`v${String(i).padStart(3, '0')}`), timestamp: T0 + i * 1000 }]);
  await log.close();
  return { dir, B };
}

async function withLog<T>(dir: string, config: Partial<LogConfig>, f: (log: Log) => T): Promise<T> {
  const log = Log.open(dir, { config, rememberConfig: false });
  try {
    return f(log);
  } finally {
    await log.close();
  }
}

async function setCheckpoint(dir: string, offset: number): Promise<void> {
  await withLog(dir, {}, (log) => log.writeCleanerCheckpoint(offset));
}

describe('dirty ratio and the decision', () => {
  it('matches a hand computation at segment granularity', async () => {
    const { dir, B } = await build('ratio-0');
    await withLog(dir, {}, (log) => {
      expect(log.segments.map((s) => s.baseOffset)).toEqual([0, 3, 6, 9, 12, 15, 18]);
      expect(log.segments.map((s) => s.size)).toEqual([3 * B, 3 * B, 3 * B, 3 * B, 3 * B, 3 * B, 2 * B]);
      // No checkpoint: everything before the active segment is dirty.
      const s = compactionSchedule(log, { nowMs: T0 + 60_000 });
      expect(s).toMatchObject({ firstDirtyOffset: 0, firstUncleanableOffset: 18, cleanBytes: 0, cleanableBytes: 18 * B, dirtyRatio: 1, needed: true, compactNow: false });
    });
    // Checkpoint 7, inside segment 6: clean = segments 0, 3, 6 (9B); cleanable = 6, 9, 12, 15 (12B).
    await setCheckpoint(dir, 7);
    await withLog(dir, {}, (log) => {
      const s = log.compactionSchedule({ nowMs: T0 + 60_000 });
      expect(s).toMatchObject({ firstDirtyOffset: 7, firstUncleanableOffset: 18, cleanBytes: 9 * B, cleanableBytes: 12 * B, needed: true });
      expect(s.dirtyRatio).toBeCloseTo(12 / 21, 12);
      expect(s.reason).toMatch(/> min\.cleanable\.dirty\.ratio 0\.5/);
    });
    // Checkpoint 10: clean = 0, 3, 6, 9 (12B); cleanable = 9, 12, 15 (9B): 9/21 < 0.5.
    await setCheckpoint(dir, 10);
    await withLog(dir, {}, (log) => {
      const s = log.compactionSchedule({ nowMs: T0 + 60_000 });
      expect(s).toMatchObject({ cleanBytes: 12 * B, cleanableBytes: 9 * B, needed: false });
      expect(s.dirtyRatio).toBeCloseTo(9 / 21, 12);
      expect(s.reason).toMatch(/≤ min\.cleanable\.dirty\.ratio 0\.5/);
    });
    // ... which is above a ratio of 0.4 (and exactly 9/21 is not above itself).
    await withLog(dir, { minCleanableDirtyRatio: 0.4 }, (log) => expect(log.compactionSchedule({ nowMs: T0 }).needed).toBe(true));
    await withLog(dir, { minCleanableDirtyRatio: 9 / 21 }, (log) => expect(log.compactionSchedule({ nowMs: T0 }).needed).toBe(false));
    // Checkpoint 12, on a boundary: clean 12B, cleanable 6B.
    await setCheckpoint(dir, 12);
    await withLog(dir, {}, (log) => {
      const s = log.compactionSchedule({ nowMs: T0 });
      expect(s).toMatchObject({ cleanBytes: 12 * B, cleanableBytes: 6 * B });
      expect(s.dirtyRatio).toBeCloseTo(1 / 3, 12);
      // --from-start ignores the checkpoint.
      expect(log.compactionSchedule({ nowMs: T0, fromStart: true }).dirtyRatio).toBe(1);
    });
    // Checkpoint at the active segment: nothing cleanable.
    await setCheckpoint(dir, 18);
    await withLog(dir, { minCleanableDirtyRatio: 0 }, (log) => {
      const s = log.compactionSchedule({ nowMs: T0 });
      expect(s).toMatchObject({ cleanableBytes: 0, dirtyRatio: 0, needed: false });
      expect(s.reason).toMatch(/nothing cleanable/);
    });
  });

  it('min.compaction.lag.ms ends the cleanable range at the first young dirty segment', async () => {
    const { dir, B } = await build('minlag-0');
    // now − lag = T0 + 15 s: segment 12 (newest T0+14 s) is old enough, segment 15 (T0+17 s) is not.
    await withLog(dir, { minCompactionLagMs: 10_000 }, (log) => {
      const s = log.compactionSchedule({ nowMs: T0 + 25_000 });
      expect(s).toMatchObject({ firstUncleanableOffset: 15, cleanBytes: 0, cleanableBytes: 15 * B, dirtyRatio: 1 });
    });
  });

  it('max.compaction.lag.ms forces a compaction once the earliest dirty batch is older than now − lag', async () => {
    const { dir } = await build('maxlag-0');
    await setCheckpoint(dir, 12); // ratio 1/3: not needed by the ratio
    // The earliest dirty non-active segment is 12, whose first batch has timestamp T0 + 12 s.
    await withLog(dir, { maxCompactionLagMs: 5000 }, (log) => {
      const early = log.compactionSchedule({ nowMs: T0 + 17_000 });
      expect(early).toMatchObject({ earliestDirtyTimestamp: T0 + 12_000, maxCompactionDelayMs: 0, compactNow: false, needed: false });
      const late = log.compactionSchedule({ nowMs: T0 + 17_001 });
      expect(late).toMatchObject({ maxCompactionDelayMs: 1, compactNow: true, needed: true });
      expect(late.reason).toMatch(/max\.compaction\.lag\.ms 5000/);
    });
    // The default (never) does not force it, however old.
    await withLog(dir, {}, (log) => expect(log.compactionSchedule({ nowMs: T0 + 1e12 })).toMatchObject({ compactNow: false, needed: false, earliestDirtyTimestamp: undefined }));
    // Forced only when something is cleanable.
    await setCheckpoint(dir, 18);
    await withLog(dir, { maxCompactionLagMs: 1 }, (log) => expect(log.compactionSchedule({ nowMs: T0 + 1e12 }).needed).toBe(false));
  });

  it('validates and remembers the two configs', async () => {
    const dir = tempPartitionPath('cfg-0');
    expect(() => Log.open(dir, { config: { minCleanableDirtyRatio: 1.5 } })).toThrow(/min\.cleanable\.dirty\.ratio must be a number from 0 to 1/);
    expect(() => Log.open(dir, { config: { maxCompactionLagMs: 0 } })).toThrow(/max\.compaction\.lag\.ms must be at least 1/);
    const log = Log.open(dir, { config: { minCleanableDirtyRatio: 0.25, maxCompactionLagMs: 60_000 } });
    await log.close();
    const props = fs.readFileSync(path.join(dir, 'logtool.properties'), 'utf8');
    expect(props).toMatch(/min\.cleanable\.dirty\.ratio=0\.25/);
    expect(props).toMatch(/max\.compaction\.lag\.ms=60000/);
    await withLog(dir, {}, (l) => expect([l.config.minCleanableDirtyRatio, l.config.maxCompactionLagMs]).toEqual([0.25, 60_000]));
  });
});

describe('background compaction', () => {
  const waitFor = async (cond: () => boolean, ms: number) => {
    const end = Date.now() + ms;
    while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    return cond();
  };

  it('runs when cleanup.policy is compact and cleanerCheckIntervalMs is given, and not otherwise', async () => {
    const { dir } = await build('bg-0');
    const before = readAll(dir).length;
    // Not configured: no timer, nothing happens.
    const plain = Log.open(dir, { config: { cleanupPolicy: 'compact', fileDeleteDelayMs: 0 }, rememberConfig: false });
    await new Promise((r) => setTimeout(r, 100));
    expect(plain.backgroundCompactions).toBe(0);
    await plain.close();
    // Configured but cleanup.policy delete: no compaction either.
    const del = Log.open(dir, { config: { cleanupPolicy: 'delete', fileDeleteDelayMs: 0 }, rememberConfig: false, cleanerCheckIntervalMs: 10 });
    await new Promise((r) => setTimeout(r, 100));
    expect(del.backgroundCompactions).toBe(0);
    await del.close();
    expect(readAll(dir).length).toBe(before);
    // Compact policy but the ratio is never exceeded (nothing is above 1): the schedule says no.
    const high = Log.open(dir, { config: { cleanupPolicy: 'compact', minCleanableDirtyRatio: 1, fileDeleteDelayMs: 0 }, rememberConfig: false, cleanerCheckIntervalMs: 10 });
    await new Promise((r) => setTimeout(r, 100));
    expect(high.backgroundCompactions).toBe(0);
    await high.close();
    expect(readAll(dir).length).toBe(before);
    // Compact policy, dirty ratio 1 > 0.5: compacted in the background.
    const warnings: string[] = [];
    const log = Log.open(dir, { config: { cleanupPolicy: 'compact', fileDeleteDelayMs: 0 }, rememberConfig: false, cleanerCheckIntervalMs: 10, onWarning: (w) => warnings.push(w.message) });
    expect(await waitFor(() => log.backgroundCompactions > 0, 5000)).toBe(true);
    expect(log.cleanerError).toBeUndefined();
    // Cleaned: nothing dirty is left, so later rounds find nothing to do.
    expect(log.compactionSchedule().needed).toBe(false);
    await new Promise((r) => setTimeout(r, 50));
    expect(log.backgroundCompactions).toBe(1);
    await log.close();
    expect(warnings).toEqual([]);
    const after = readAll(dir);
    // Offsets 0..17 keep one record per key (5 keys), the active segment's 18, 19 stay.
    expect(after.length).toBeLessThan(before);
    const cleaned = after.filter((r) => r.offset < 18);
    expect(new Set(cleaned.map((r) => r.key)).size).toBe(cleaned.length);
    expect(after.filter((r) => r.offset >= 18).map((r) => r.offset)).toEqual([18, 19]);
  });

  it('records a failing background compaction instead of throwing', async () => {
    const dir = tempPartitionPath('bgfail-0');
    const log0 = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 200 } });
    for (let i = 0; i < 10; i++) await log0.append([{ key: i === 3 ? null : Buffer.from(`k${i % 2}`), value: Buffer.from(`v${i}`), timestamp: T0 + i }]);
    await log0.close();
    const warnings: string[] = [];
    const log = Log.open(dir, { config: { cleanupPolicy: 'compact' }, rememberConfig: false, cleanerCheckIntervalMs: 10, onWarning: (w) => warnings.push(w.message) });
    expect(await waitFor(() => log.cleanerError !== undefined, 5000)).toBe(true);
    expect(warnings.some((w) => /background compaction failed/.test(w))).toBe(true);
    await log.close();
  });
});

describe('logtool compact --if-needed', () => {
  it('compacts only when needed, exits 0 either way, and reports dirtyRatio and needed', async () => {
    const { dir } = await build('cli-0');
    await setCheckpoint(dir, 10); // ratio 9/21
    const not = cliSync('compact', dir, '--if-needed', '--json');
    expect(not.code).toBe(0);
    const j = JSON.parse(not.stdout);
    expect(j).toMatchObject({ ok: true, needed: false, compacted: false });
    expect(j.dirtyRatio).toBeCloseTo(9 / 21, 12);
    expect(j.reason).toMatch(/min\.cleanable\.dirty\.ratio/);
    const text = cliSync('compact', dir, '--if-needed', '--no-progress');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Compaction not needed .*dirty ratio 0\.429/);
    // A lower ratio (fractional flag) makes it needed: it compacts.
    const yes = cliSync('compact', dir, '--if-needed', '--min-cleanable-dirty-ratio', '0.4', '--json');
    expect(yes.code).toBe(0);
    const y = JSON.parse(yes.stdout);
    expect(y).toMatchObject({ ok: true, needed: true, compacted: true, cleanedThrough: 18 });
    expect(y.dirtyRatio).toBeCloseTo(9 / 21, 12);
    expect(y.recordsRemoved).toBeGreaterThan(0);
    // The flag was remembered; now nothing is dirty.
    const again = JSON.parse(cliSync('compact', dir, '--if-needed', '--json').stdout);
    expect(again).toMatchObject({ needed: false, dirtyRatio: 0 });
    // Invalid ratios are usage errors.
    expect(cliSync('compact', dir, '--min-cleanable-dirty-ratio', '1.5').code).toBe(2);
    expect(cliSync('compact', dir, '--min-cleanable-dirty-ratio', 'abc').code).toBe(2);
  });
});

describe('segment roll of a compacted log', () => {
  it('rolls by min(segment.ms, max.compaction.lag.ms) when cleanup.policy has compact, by segment.ms otherwise', async () => {
    const T = 1_700_000_000_000;
    const segmentsAfter = async (policy: string): Promise<number> => {
      const dir = tempPartitionPath();
      const log = Log.open(dir, { config: { cleanupPolicy: policy, segmentMs: 3_600_000, maxCompactionLagMs: 60_000, flushMode: 'async' } });
      // Records 30 s apart: 10 of them span 4.5 min, past the 60 s lag but far below segment.ms.
      for (let i = 0; i < 10; i++) await log.append([{ key: Buffer.from(`k${i % 3}`), value: Buffer.from('v'), timestamp: T + i * 30_000 }]);
      const n = log.segments.length;
      await log.close();
      return n;
    };
    expect(await segmentsAfter('compact')).toBeGreaterThanOrEqual(4);
    expect(await segmentsAfter('delete')).toBe(1);
  });
});
