/**
 * `logtool doctor` (src/commands/doctor.ts, doctor-checks.ts) on copies of the broker log
 * directories in the fixtures: every one is healthy (exit 0, notes at most), and each planted
 * problem — a flipped bit in a .log, a broken index, a stray directory, a malformed leader-epoch
 * checkpoint, a producer snapshot beyond the log end — is one finding with its fix and exit 3.
 * Nothing doctor reads is changed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { cli, cliSync } from '../helpers/cli.js';
import { newTxnPartition } from '../helpers/txn-partition.js';
import { completeAbsentIndexes } from '../helpers/logdirs.js';
import { copyPartition, fileStamps, fixturePath, makeTempDir, removeTempDirs, requireFixtures, segmentCases, type SegmentCase } from '../helpers/fixtures.js';

requireFixtures(import.meta.url);
beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

/**
 * A whole case's log directory: its files, and every partition with the corpus' all-zero indexes
 * recreated. KRaft's `__cluster_metadata-0` is left out: the corpus keeps its checkpoints but not
 * its `.log` files (excludedFiles), so its epochs and snapshots rightly point past an empty log.
 */
function copyLogDir(c: SegmentCase): string {
  const dest = path.join(makeTempDir('logtool-doctor-'), 'data');
  fs.mkdirSync(dest);
  const root = fixturePath(c.case);
  for (const name of fs.readdirSync(root)) if (fs.statSync(path.join(root, name)).isFile()) fs.copyFileSync(path.join(root, name), path.join(dest, name));
  for (const partition of dataPartitions(c)) copyPartition(c, partition, dest);
  // Indexes the corpus left out: the all-zero ones recreated, those of unknown content (≥ 4 MiB) rebuilt, as a broker would have them.
  completeAbsentIndexes(c, dest);
  return dest;
}

const dataPartitions = (c: SegmentCase) => Object.keys(c.partitions).filter((p) => p !== '__cluster_metadata-0');

interface Report {
  ok: boolean;
  partitions: number;
  counts: { error: number; warning: number; note: number };
  findings: { severity: string; where: string; file?: string; position?: number; message: string; fix?: string }[];
  topics: { topic: string; partitions: number; sizeBytes: number }[];
}

async function doctor(...dirs: string[]): Promise<{ code: number; report: Report; stderr: string }> {
  const r = await cli('doctor', ...dirs, '--json');
  return { code: r.code, report: JSON.parse(r.stdout) as Report, stderr: r.stderr };
}

/** A partition of the case with records in it (the first by name). */
function dataPartition(c: SegmentCase, dir: string): string {
  const name = Object.keys(c.partitions).sort().find((p) => Object.values(c.partitions[p]!.selfDecoded ?? {}).some((f) => f.batches > 0));
  return path.join(dir, name!);
}

describe('doctor on the fixtures', () => {
  it.each(segmentCases().map((c) => [c.case, c] as const))('%s: healthy, exit 0, and nothing changed', async (_name, c) => {
    const dir = copyLogDir(c);
    const before = Object.fromEntries(fs.readdirSync(dir).map((n) => [n, fs.statSync(path.join(dir, n)).isDirectory() ? fileStamps(path.join(dir, n)) : fs.readFileSync(path.join(dir, n), 'hex')]));
    const { code, report, stderr } = await doctor(dir);
    expect(report.findings.filter((f) => f.severity !== 'note'), stderr).toEqual([]);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.partitions).toBe(dataPartitions(c).length);
    expect(report.topics.reduce((n, t) => n + t.partitions, 0)).toBe(report.partitions);
    const after = Object.fromEntries(fs.readdirSync(dir).map((n) => [n, fs.statSync(path.join(dir, n)).isDirectory() ? fileStamps(path.join(dir, n)) : fs.readFileSync(path.join(dir, n), 'hex')]));
    expect(after).toEqual(before);
  }, 120_000);
});

describe('doctor finds planted problems', () => {
  // Case names start with `segments/`: a startsWith('zk-…') matched none and fell back to the first
  // case, whose copy rebuilt 18 partitions' indexes in child processes for every test here.
  const c = segmentCases().find((s) => s.case.includes('/zk-cleanshutdown-')) ?? segmentCases()[0]!;

  it('a flipped bit in a .log: an error naming file and byte, fix recover; exit 3', async () => {
    const dir = copyLogDir(c);
    const part = dataPartition(c, dir);
    const log = path.join(part, fs.readdirSync(part).filter((n) => n.endsWith('.log')).sort()[0]!);
    const buf = fs.readFileSync(log);
    buf[buf.length - 3] ^= 0x10;
    fs.writeFileSync(log, buf);
    const { code, report } = await doctor(dir);
    expect(code).toBe(3);
    const errors = report.findings.filter((f) => f.severity === 'error');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]).toMatchObject({ file: log, fix: `logtool recover ${part}` });
    expect(errors[0]!.position).toBeTypeOf('number');
    expect(report.findings[0]!.severity).toBe('error'); // sorted by severity
  }, 120_000);

  it('a stray directory and a malformed leader-epoch checkpoint: findings with their fixes; text output too', async () => {
    const dir = copyLogDir(c);
    const part = dataPartition(c, dir);
    fs.mkdirSync(path.join(dir, 'orders-7.0123456789abcdef0123456789abcdef-stray'));
    fs.writeFileSync(path.join(part, 'leader-epoch-checkpoint'), '0\n2\n0 0\n');
    const { code, report } = await doctor(dir);
    expect(code).toBe(3);
    expect(report.findings).toContainEqual(expect.objectContaining({ severity: 'warning', where: path.join(dir, 'orders-7.0123456789abcdef0123456789abcdef-stray'), fix: expect.stringMatching(/^rm -r /) }));
    expect(report.findings).toContainEqual(expect.objectContaining({ severity: 'error', file: path.join(part, 'leader-epoch-checkpoint'), fix: expect.stringMatching(/^rm /) }));
    const text = await cli('doctor', dir);
    expect(text.code).toBe(3);
    expect(text.stdout).toMatch(/^warning .*-stray: a stray partition directory/m);
    expect(text.stdout).toMatch(/^ {8}fix: rm -r /m);
    expect(text.stdout).toMatch(/error\(s\), \d+ warning\(s\), \d+ note\(s\)\.$/m);
  }, 120_000);

  it('a producer snapshot beyond the log end: a warning; a partition directory alone can be checked', async () => {
    const dir = copyLogDir(c);
    const part = dataPartition(c, dir);
    fs.writeFileSync(path.join(part, '00000000000099999999.snapshot'), Buffer.alloc(0));
    const { code, report } = await doctor(part);
    expect(code).toBe(3);
    expect(report.partitions).toBe(1);
    expect(report.findings.filter((f) => f.file === path.join(part, '00000000000099999999.snapshot'))).toHaveLength(1);
  }, 120_000);

  it('segments past a retention logtool remembers: a note with the retention command, still exit 0', async () => {
    const root = makeTempDir();
    const dir = path.join(root, 'ev-0');
    const input = path.join(root, 'in.ndjson');
    fs.writeFileSync(input, [1, 2, 3, 4].map((i) => JSON.stringify({ value: `v${i}`, timestamp: 1_600_000_000_000 + i })).join('\n') + '\n');
    expect(cliSync('append', dir, '--input', input, '--retention-ms', '86400000', '--segment-bytes', '100', '--batch-records', '1').code).toBe(0);
    const { code, report } = await doctor(root);
    expect(code).toBe(0);
    expect(report.findings).toEqual([expect.objectContaining({ severity: 'note', where: dir, message: expect.stringMatching(/segment\(s\), \d+ bytes, past retention \(retention\.ms\)/), fix: `logtool retention ${dir}` })]);
    expect(report.topics).toEqual([{ topic: 'ev', partitions: 1, sizeBytes: expect.any(Number) }]);
  });

  it('a hanging transaction: a warning whose fix, run as given, ends it; exit 0 afterwards', async () => {
    // Producer 3000's transaction (offsets 14-15, written 2026-01-01) never got its marker: older
    // than Kafka's transaction.max.timeout.ms (15 min) by now, so it is hanging.
    const part = await newTxnPartition();
    const { code, report } = await doctor(part);
    expect(code).toBe(3);
    const hanging = report.findings.filter((f) => /hanging transaction/.test(f.message));
    expect(hanging).toEqual([expect.objectContaining({ severity: 'warning', where: part, message: expect.stringMatching(/producer 3000 \(epoch 1\) open since offset \d+/), fix: `logtool transactions abort ${part} --producer-id 3000 --producer-epoch 1` })]);
    const [, ...fixArgs] = hanging[0]!.fix!.split(' ');
    expect((await cli(...fixArgs)).code).toBe(0);
    const after = await doctor(part);
    expect(after.report.findings.filter((f) => /transaction/.test(f.message))).toEqual([]);
    expect(after.code).toBe(0);
  });

  it('a missing directory is exit 1; a directory with nothing of Kafka in it is exit 2', async () => {
    expect((await cli('doctor', path.join(makeTempDir(), 'nope'))).code).toBe(1);
    const empty = makeTempDir();
    fs.writeFileSync(path.join(empty, 'notes.txt'), 'x');
    expect((await cli('doctor', empty)).code).toBe(2);
  });
});
