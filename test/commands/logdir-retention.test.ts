/**
 * `retention` and `compact` over log directories with Kafka's topic configs (issue 12): in a
 * broker's log directory logtool's defaults are not the topic's, so a partition uses configs given
 * explicitly, its remembered logtool.properties, or Kafka's built-in ones for internal topics
 * (compact), and is otherwise skipped with a notice. `delete-records` on a log directory names one
 * partition with --topic and --partition.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs, requireFixtures, segmentCases, type SegmentCase } from '../helpers/fixtures.js';
import { copyBrokerLogDir, parseRun, partitionNames, treeStamps, type PartitionLine } from '../helpers/logdirs.js';

requireFixtures(import.meta.url);
beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

type Line = PartitionLine;

const cases = segmentCases();
const INTERNAL = new Set(['__consumer_offsets', '__transaction_state']);
const FAR_FUTURE = String(Date.parse('2100-01-01T00:00:00Z'));

describe('retention --dry-run over every broker log directory of the corpus', () => {
  it.each(cases.map((c) => [c.case, c] as [string, SegmentCase]))('%s: no deletion planned in an internal topic, none where the config is unknown', async (_n, c) => {
    const dir = copyBrokerLogDir(c);
    // KRaft brokers: every topic of their partitions is in __cluster_metadata (test/engine/logdir/cluster-metadata-configs.test.ts).
    const hasMetadata = fs.existsSync(path.join(dir, '__cluster_metadata-0'));
    const before = treeStamps(dir);
    // Far in the future: with logtool's defaults (delete, 7 days) every old segment would be due.
    const r = await cli('retention', dir, '--dry-run', '--json', '--now', FAR_FUTURE);
    expect(r.code, r.stderr).toBe(0);
    const { lines, summary } = parseRun<Line>(r.stdout);
    expect(lines.map((l) => path.basename(l.dir)).sort()).toEqual(partitionNames(dir));
    for (const l of lines) {
      if (INTERNAL.has(l.topic)) {
        expect(l, l.dir).toMatchObject({ outcome: 'ok', configSource: hasMetadata ? 'metadata' : 'internal', cleanupPolicy: 'compact' });
        expect(l.deleted, l.dir).toEqual([]);
      } else if (hasMetadata) {
        // No dynamic config set for these topics: Kafka's defaults (delete, 7 days).
        expect(l, l.dir).toMatchObject({ outcome: 'ok', configSource: 'metadata', cleanupPolicy: 'delete', retentionMs: 604_800_000 });
      } else {
        expect(l, l.dir).toMatchObject({ outcome: 'skipped' });
        expect(l.note).toMatch(/topic config unknown/);
        expect(l.deleted).toBeUndefined();
      }
    }
    expect(summary.skipped).toBe(hasMetadata ? 0 : lines.filter((l) => !INTERNAL.has(l.topic)).length);
    if (summary.skipped > 0) expect(r.stderr).toMatch(/partition\(s\) of .* skipped: topic config unknown/);
    expect(treeStamps(dir)).toEqual(before);
  }, 120_000);

  it('a broker’s __consumer_offsets-31 given alone plans no deletion (it is compacted, not deleted)', async () => {
    const c = cases.find((x) => x.case.includes('kraft-multisegment-rupia'))!;
    const dir = copyBrokerLogDir(c);
    const r = await cli('retention', path.join(dir, '__consumer_offsets-31'), '--dry-run', '--json', '--now', FAR_FUTURE);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { cleanupPolicy: string; deleted: unknown[]; segmentsBefore: number };
    expect(report.segmentsBefore).toBe(2);
    expect(report.cleanupPolicy).toBe('compact');
    expect(report.deleted).toEqual([]);
    // A partition of an ordinary topic there, alone: its config comes from the broker's __cluster_metadata.
    const other = partitionNames(dir).find((n) => !n.startsWith('__'))!;
    const known = await cli('retention', path.join(dir, other), '--dry-run', '--json', '--now', FAR_FUTURE);
    expect(known.code, known.stderr).toBe(0);
    expect(JSON.parse(known.stdout)).toMatchObject({ cleanupPolicy: 'delete', retentionMs: 604_800_000 });
    expect(JSON.parse(known.stdout)).not.toHaveProperty('skipped');
    // A topic the metadata does not know: skipped with a notice, nothing planned.
    fs.cpSync(path.join(dir, other), path.join(dir, 'notinmetadata-0'), { recursive: true });
    const s = await cli('retention', path.join(dir, 'notinmetadata-0'), '--dry-run', '--json', '--now', FAR_FUTURE);
    expect(s.code, s.stderr).toBe(0);
    expect(JSON.parse(s.stdout)).toMatchObject({ skipped: true });
    expect(s.stderr).toMatch(/topic config unknown/);
  });

  it('explicit configs apply (and are not remembered in the broker’s partition)', async () => {
    const c = cases.find((x) => x.case.includes('multisegment-erickimm'))!;
    const dir = copyBrokerLogDir(c);
    const args = ['retention', dir, '--topic', 'stock-trades', '--config', 'retention.ms=1000', '--now', FAR_FUTURE, '--json'];
    const dry = await cli(...args, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    const [line] = parseRun<Line>(dry.stdout).lines;
    expect(line).toMatchObject({ topic: 'stock-trades', partition: 0, configSource: 'explicit', cleanupPolicy: 'delete' });
    // Every segment is past retention.ms=1000: both go, an empty one is rolled first (Kafka's rule).
    expect(line!.deleted!.map((d) => path.basename(d.file))).toEqual(['00000000000000000000.log', '00000000000000003586.log']);
    expect(line).toMatchObject({ rolled: true });
    const real = await cli(...args);
    expect(real.code, real.stderr).toBe(0);
    expect(fs.readdirSync(path.join(dir, 'stock-trades-0')).filter((f) => f.endsWith('.log'))).toEqual([`${String(line!.logEndOffset).padStart(20, '0')}.log`]);
    expect(fs.existsSync(path.join(dir, 'stock-trades-0', 'logtool.properties'))).toBe(false);
    expect((await cli('retention', dir, '--config', 'retention.ms=abc')).code).toBe(2);
    expect((await cli('retention', dir, '--config', 'no.such.config=1')).code).toBe(2);
  });
});

describe('compact over a log directory', () => {
  it('compacts the partitions whose cleanup.policy includes compact; the others are skipped', async () => {
    const dir = path.join(makeTempDir('logtool-logdir-compact-'), 'data');
    for (const [name, policy] of [['plain-0', 'delete'], ['users-0', 'compact']] as const) {
      const log = Log.open(path.join(dir, name), { config: { flushMode: 'async', cleanupPolicy: policy, segmentBytes: 300 } });
      for (let i = 0; i < 40; i++) await log.append([{ key: Buffer.from(`k${i % 4}`), value: Buffer.from(`value ${i}`), timestamp: 1_700_000_000_000 + i }]);
      await log.close();
    }
    const before = treeStamps(path.join(dir, 'plain-0'));
    const r = await cli('compact', dir, '--json');
    expect(r.code, r.stderr).toBe(0);
    const { lines, summary } = parseRun<Line>(r.stdout);
    expect(lines.map((l) => [l.topic, l.outcome])).toEqual([['plain', 'skipped'], ['users', 'ok']]);
    expect(lines[0]!.note).toMatch(/cleanup\.policy delete/);
    expect(lines[1]!.recordsRemoved).toBeGreaterThan(0);
    expect(summary).toMatchObject({ ok: 1, skipped: 1, exitCode: 0 });
    expect(treeStamps(path.join(dir, 'plain-0'))).toEqual(before);
  });

  it('on a broker directory: internal topics by Kafka’s built-in config, unknown ones skipped, nothing changed by --dry-run', async () => {
    const c = cases.find((x) => x.case.includes('kraft-confluentgo'))!;
    const dir = copyBrokerLogDir(c);
    const before = treeStamps(dir);
    const r = await cli('compact', dir, '--dry-run', '--json');
    expect(r.code, r.stderr).toBe(0);
    const { lines } = parseRun<Line>(r.stdout);
    for (const l of lines) expect(l.outcome, l.dir).toBe(INTERNAL.has(l.topic) ? 'ok' : 'skipped');
    expect(lines.some((l) => l.topic === '__consumer_offsets')).toBe(true);
    expect(treeStamps(dir)).toEqual(before);
  });
});

describe('delete-records on a log directory', () => {
  it('needs --topic and --partition (exit 2), then changes that one partition only', async () => {
    const dir = path.join(makeTempDir('logtool-logdir-dr-'), 'data');
    for (const name of ['a-0', 'a-1']) {
      const log = Log.open(path.join(dir, name), { config: { flushMode: 'async', segmentBytes: 200 } });
      for (let i = 0; i < 20; i++) await log.append([{ key: null, value: Buffer.from(`value ${i}`) }]);
      await log.close();
    }
    const before = treeStamps(dir);
    for (const extra of [[], ['--topic', 'a'], ['--partition', '0']]) {
      const r = await cli('delete-records', dir, '--before-offset', '5', ...extra);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/needs --topic and --partition/);
    }
    expect(treeStamps(dir)).toEqual(before);
    const r = await cli('delete-records', dir, '--before-offset', '5', '--topic', 'a', '--partition', '1', '--json');
    expect(r.code, r.stderr).toBe(0);
    const { lines } = parseRun<Line & { logStartOffsetAfter: number }>(r.stdout);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ topic: 'a', partition: 1, logStartOffsetAfter: 5 });
    expect(fs.readFileSync(path.join(dir, 'log-start-offset-checkpoint'), 'utf8')).toMatch(/^a 1 5$/m);
    expect(fs.readdirSync(path.join(dir, 'a-0'))).toEqual(Object.keys(before).filter((f) => f.startsWith('a-0/')).map((f) => path.basename(f)).sort());
  });
});
