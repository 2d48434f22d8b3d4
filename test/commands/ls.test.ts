/**
 * `logtool ls` (issue 12, the read-only listing): every broker log directory of the Kafka corpus
 * lists with `--json`, its rows agreeing with the broker's checkpoint files and cases.json; the
 * entries that are not partitions are classified; an empty folder is a usage error; Kafka's
 * renamed `-delete`/`-future`/`-stray` directories are listed as such and never as partitions.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { fileStamps, fixturePath, fixturesRoot, makeTempDir, removeTempDirs, requireFixtures, segmentCases, type SegmentCase } from '../helpers/fixtures.js';
import { classifyEntry, listLogDir } from '../../src/engine/logdir/entries.js';

requireFixtures(import.meta.url);
beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

interface Row {
  topic: string;
  partition: number;
  recoveryPoint: number | null;
  logStartOffset: number;
  logEndOffset: number;
  needsRecovery: boolean;
  cleanupPolicy: string;
  error?: string;
}
interface Summary {
  summary: true;
  partitions: number;
  errors: number;
  logDirs: { logDir: string; broker: boolean; partitions: number; entries: { name: string; kind: string }[] }[];
}

function parseNdjson(stdout: string): { rows: Row[]; summary: Summary } {
  const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as Row | Summary);
  const summary = lines.pop() as Summary;
  expect(summary.summary).toBe(true);
  return { rows: lines as Row[], summary };
}

const isPartitionName = (n: string) => /^[a-zA-Z0-9._-]+-(0|[1-9]\d{0,8})$/.test(n);

/** Directories under `root` (itself included) that hold at least one partition directory. */
function logDirsUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    const subdirs = fs.readdirSync(d, { withFileTypes: true }).filter((e) => e.isDirectory());
    if (subdirs.some((e) => isPartitionName(e.name))) out.push(d);
    for (const e of subdirs) if (!isPartitionName(e.name)) walk(path.join(d, e.name));
  };
  walk(root);
  return out;
}

/** The broker's own recovery-point-offset-checkpoint, parsed here independently of the engine. */
function checkpointEntries(file: string): Map<string, number> {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0);
  expect(lines[0]).toBe('0');
  const out = new Map<string, number>();
  for (const l of lines.slice(2)) {
    const [topic, part, offset] = l.split(' ');
    out.set(`${topic}-${part}`, Number(offset));
  }
  expect(out.size).toBe(Number(lines[1]));
  return out;
}

const cases = segmentCases();

describe('ls over every broker log directory of the corpus', () => {
  it('finds a broker log directory in every segments case', () => {
    for (const c of cases) expect(logDirsUnder(fixturePath(c.case)), c.case).not.toHaveLength(0);
  });

  it.each(cases.map((c) => [c.case, c] as [string, SegmentCase]))('%s', async (_name, c) => {
    for (const dir of logDirsUnder(fixturePath(c.case))) {
      const before = fileStamps(dir);
      const r = await cli('ls', dir, '--json');
      expect(r.code, r.stderr).toBe(0);
      expect(fileStamps(dir), 'ls changed nothing in the log directory').toEqual(before);
      const { rows, summary } = parseNdjson(r.stdout);
      const byName = new Map(rows.map((row) => [`${row.topic}-${row.partition}`, row]));
      // One row per partition of the case; KRaft's metadata log is never one.
      const expected = Object.keys(c.partitions).filter((p) => p !== '__cluster_metadata-0' && path.dirname(path.join(c.case, p)) === path.relative(fixturesRoot, dir));
      expect([...byName.keys()].sort()).toEqual(expected.sort());
      expect(byName.has('__cluster_metadata-0')).toBe(false);
      expect(summary.partitions).toBe(rows.length);
      expect(summary.errors).toBe(0);
      expect(summary.logDirs[0]!.broker).toBe(true);
      const checkpoint = checkpointEntries(path.join(dir, 'recovery-point-offset-checkpoint'));
      for (const [name, facts] of Object.entries(c.partitions)) {
        const row = byName.get(name);
        if (!row) continue;
        expect(row.error, name).toBeUndefined();
        expect(row.recoveryPoint, `${name}: recovery point vs the checkpoint file`).toBe(checkpoint.get(name) ?? null);
        if (facts['recovery-point'] !== undefined) expect(row.recoveryPoint, `${name}: recovery point vs cases.json`).toBe(Number(facts['recovery-point']));
        const lasts = Object.values(facts.selfDecoded ?? {})
          .map((f) => f.lastOffset)
          .filter((o): o is string => o !== null)
          .map(Number);
        const logEnd = lasts.length > 0 ? Math.max(...lasts) + 1 : Number(facts['recovery-point'] ?? 0);
        expect(row.logEndOffset, `${name}: log end vs cases.json`).toBe(logEnd);
        expect(row.needsRecovery, name).toBe(row.logEndOffset > (row.recoveryPoint ?? 0));
        if (row.topic === '__consumer_offsets' || row.topic === '__transaction_state') expect(row.cleanupPolicy).toBe('compact');
        // KRaft brokers: decoded from __cluster_metadata (no dynamic cleanup.policy set: Kafka's delete).
        else expect(row.cleanupPolicy, name).toBe(fs.existsSync(path.join(dir, '__cluster_metadata-0')) ? 'delete' : 'unknown');
      }
    }
  });
});

describe('entries that are not partitions', () => {
  const kraft = cases.find((c) => fs.existsSync(fixturePath(c.case, '__cluster_metadata-0')) && fs.existsSync(fixturePath(c.case, 'bootstrap.checkpoint')));

  it('a KRaft broker directory: meta.properties, checkpoints, bootstrap.checkpoint and __cluster_metadata-0 as metadata', async () => {
    expect(kraft, 'a KRaft case in the corpus').toBeDefined();
    const dir = fixturePath(kraft!.case);
    const kinds = new Map(listLogDir(dir).map((e) => [e.name, e.kind]));
    expect(kinds.get('meta.properties')).toBe('meta.properties');
    expect(kinds.get('bootstrap.checkpoint')).toBe('bootstrap.checkpoint');
    expect(kinds.get('__cluster_metadata-0')).toBe('metadata');
    for (const f of ['recovery-point-offset-checkpoint', 'log-start-offset-checkpoint', 'replication-offset-checkpoint', 'cleaner-offset-checkpoint']) expect(kinds.get(f), f).toBe('checkpoint');
    // The CLI reports the same classification in its summary.
    const r = await cli('ls', dir, '--json');
    expect(r.code, r.stderr).toBe(0);
    const entries = new Map(parseNdjson(r.stdout).summary.logDirs[0]!.entries.map((e) => [e.name, e.kind]));
    expect(entries.get('__cluster_metadata-0')).toBe('metadata');
    expect(entries.get('meta.properties')).toBe('meta.properties');
    expect(entries.get('recovery-point-offset-checkpoint')).toBe('checkpoint');
    expect([...entries.values()]).not.toContain('partition');
  });

  it('classifies names by Kafka’s rules', () => {
    const uuid = '0123456789abcdef0123456789abcdef';
    expect(classifyEntry('.lock', false).kind).toBe('lock');
    expect(classifyEntry('orders-3', true)).toMatchObject({ kind: 'partition', topicPartition: { topic: 'orders', partition: 3 } });
    expect(classifyEntry('orders-03', true).kind).toBe('unknown');
    expect(classifyEntry('orders-3', false).kind).toBe('unknown');
    expect(classifyEntry(`orders-3.${uuid}-delete`, true)).toMatchObject({ kind: 'delete', topicPartition: { topic: 'orders', partition: 3 } });
    expect(classifyEntry(`orders-3.${uuid}-future`, true).kind).toBe('future');
    expect(classifyEntry(`orders-3.${uuid}-stray`, true).kind).toBe('stray');
    expect(classifyEntry(`my-topic-12.${uuid}-delete`, true)).toMatchObject({ kind: 'delete', topicPartition: { topic: 'my-topic', partition: 12 } });
    expect(classifyEntry('orders-3-delete', true).kind).toBe('unknown');
    expect(classifyEntry('notes.txt', false).kind).toBe('unknown');
  });

  it('a planted -delete directory is listed as such, never as a partition; unknown entries as unknown', async () => {
    const c = cases.find((x) => x.case.includes('gzip-nodelogcollector')) ?? cases[0]!;
    const dir = path.join(makeTempDir('logtool-ls-'), 'logdir');
    fs.cpSync(fixturePath(c.case), dir, { recursive: true });
    const victim = Object.keys(c.partitions).find((p) => p !== '__cluster_metadata-0')!;
    const deleted = `${victim}.0123456789abcdef0123456789abcdef-delete`;
    fs.renameSync(path.join(dir, victim), path.join(dir, deleted));
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'hello');
    const r = await cli('ls', dir, '--json');
    expect(r.code, r.stderr).toBe(0);
    const { rows, summary } = parseNdjson(r.stdout);
    expect(rows.map((x) => `${x.topic}-${x.partition}`)).not.toContain(victim);
    const entries = new Map(summary.logDirs[0]!.entries.map((e) => [e.name, e.kind]));
    expect(entries.get(deleted)).toBe('delete');
    expect(entries.get('notes.txt')).toBe('unknown');
    // The text form lists it below the table too.
    const t = await cli('ls', dir);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toMatch(new RegExp(`${deleted.replace(/\./g, '\\.')}/\\tdelete`));
  });
});

describe('usage and errors', () => {
  it('an entry name with control bytes stays on one escaped line of the text listing', async () => {
    const parent = makeTempDir('logtool-ls-ctl-');
    fs.mkdirSync(path.join(parent, 'a-0'));
    fs.writeFileSync(path.join(parent, 'evil\nname\u001b[31m'), '');
    const r = await cli('ls', parent);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('\u001b');
    const line = r.stdout.split('\n').find((l) => l.includes('evil'));
    expect(line).toBeDefined();
    expect(line).toContain('name');
    expect(line).toMatch(/\tunknown$/);
  });

  it('an empty folder is exit 2', async () => {
    const dir = makeTempDir('logtool-ls-empty-');
    const r = await cli('ls', dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not a log directory');
    expect(r.stdout).toBe('');
  });

  it('a partition directory given itself is a one-partition listing with its parent’s recovery point', async () => {
    const c = cases.find((x) => x.case.includes('gzip-nodelogcollector')) ?? cases[0]!;
    const name = Object.keys(c.partitions).find((p) => p !== '__cluster_metadata-0')!;
    const r = await cli('ls', fixturePath(c.case, name), '--json');
    expect(r.code, r.stderr).toBe(0);
    const { rows } = parseNdjson(r.stdout);
    expect(rows).toHaveLength(1);
    expect(`${rows[0]!.topic}-${rows[0]!.partition}`).toBe(name);
    expect(rows[0]!.recoveryPoint).toBe(checkpointEntries(fixturePath(c.case, 'recovery-point-offset-checkpoint')).get(name) ?? null);
  });

  it('a partition that fails to open is a row with its error and exit 3; the others are still listed', async () => {
    const parent = makeTempDir('logtool-ls-bad-');
    const good = path.join(parent, 'a-0');
    const bad = path.join(parent, 'b-0');
    fs.mkdirSync(good);
    fs.mkdirSync(bad);
    // A segment that is no record batch: 100 bytes of 0xff (batch length -1).
    fs.writeFileSync(path.join(bad, '00000000000000000000.log'), Buffer.alloc(100, 0xff));
    const r = await cli('ls', parent, '--json');
    expect(r.code, r.stderr).toBe(3);
    const { rows, summary } = parseNdjson(r.stdout);
    expect(rows.map((x) => x.topic)).toEqual(['a', 'b']);
    expect(rows[0]!.error).toBeUndefined();
    expect(rows[1]!.error).toBeDefined();
    expect(summary.errors).toBe(1);
  });
});
