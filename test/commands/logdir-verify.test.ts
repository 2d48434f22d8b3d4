/**
 * `verify`, `recover` and `rebuild-index` over a whole log directory (issue 12, CLI): copies of
 * every broker log directory of the corpus verify clean with one NDJSON line per partition and a
 * summary; `recover --dry-run` on a cleanly shut down one finds nothing; one exit code by the rule
 * (1 if any partition failed, else 3 if any had a problem, else 0); `--topic/--partition/
 * --partitions` select; `--threads 1` and `--threads 2` print the same; entries that are not
 * partitions are never loaded.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { cliPath, ensureBuilt } from '../helpers/build.js';
import { cli, run } from '../helpers/cli.js';
import { hasCleanShutdownMarker, makeTempDir, removeTempDirs, requireFixtures, segmentCases, type SegmentCase } from '../helpers/fixtures.js';
import { copyBrokerLogDir, parseRun, partitionNames, treeStamps, type PartitionLine } from '../helpers/logdirs.js';

requireFixtures(import.meta.url);
beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

type Line = PartitionLine;

const cases = segmentCases();
const byCase = cases.map((c) => [c.case, c] as [string, SegmentCase]);

/** A logtool log directory of three partitions a-0, a-1, b-0 with a few records each. */
async function ownLogDir(): Promise<string> {
  const dir = path.join(makeTempDir('logtool-logdir-own-'), 'data');
  for (const name of ['a-0', 'a-1', 'b-0']) {
    const log = Log.open(path.join(dir, name), { config: { flushMode: 'async' } });
    for (let i = 0; i < 5; i++) await log.append([{ key: Buffer.from(`k${i}`), value: Buffer.from(`${name} value ${i}`), timestamp: 1_700_000_000_000 + i }]);
    await log.close();
  }
  return dir;
}

describe('verify over every broker log directory of the corpus', () => {
  it.each(byCase)('%s: exit 0, every partition listed once, nothing changed', async (_n, c) => {
    const dir = copyBrokerLogDir(c, { completeIndexes: true });
    const before = treeStamps(dir);
    const r = await cli('verify', dir, '--deep', '--json');
    expect(r.code, r.stdout.slice(-2000) + r.stderr).toBe(0);
    const { lines, summary } = parseRun<Line>(r.stdout);
    expect(lines.map((l) => path.basename(l.dir)).sort()).toEqual(partitionNames(dir));
    expect(lines.every((l) => l.outcome === 'ok' && l.problems!.length === 0)).toBe(true);
    expect(summary).toMatchObject({ partitions: lines.length, ok: lines.length, problems: 0, failed: 0, exitCode: 0, broker: true });
    expect(lines.map((l) => l.topic)).not.toContain('__cluster_metadata');
    expect(treeStamps(dir)).toEqual(before);
  }, 180_000);

  it.each(byCase.filter(([, c]) => hasCleanShutdownMarker(c)))('%s: recover --dry-run after a clean shutdown finds nothing and changes nothing', async (_n, c) => {
    const dir = copyBrokerLogDir(c, { completeIndexes: true });
    const before = treeStamps(dir);
    const r = await cli('recover', dir, '--dry-run', '--json');
    expect(r.code, r.stdout.slice(-2000) + r.stderr).toBe(0);
    const { lines, summary } = parseRun<Line>(r.stdout);
    expect(lines.length).toBe(partitionNames(dir).length);
    for (const l of lines) expect(['consistent', 'not-fully-checked'], l.dir).toContain(l.status);
    expect(summary).toMatchObject({ problems: 0, failed: 0, exitCode: 0 });
    expect(treeStamps(dir)).toEqual(before);
  }, 180_000);

  it('the corpus has a cleanly shut down broker directory', () => {
    expect(cases.some(hasCleanShutdownMarker)).toBe(true);
  });
});

describe('one exit code for the whole run', () => {
  it('a planted corrupt partition is exit 3, an unreadable one exit 1; every partition still reported', async () => {
    const dir = await ownLogDir();
    const victim = path.join(dir, 'a-1', '00000000000000000000.log');
    const buf = fs.readFileSync(victim);
    buf[buf.length - 3] ^= 0x40; // inside the last batch's records: its CRC no longer matches
    fs.writeFileSync(victim, buf);
    const corrupt = await cli('verify', dir, '--json');
    expect(corrupt.code, corrupt.stderr).toBe(3);
    const run = parseRun<Line>(corrupt.stdout);
    expect(run.lines.map((l) => [path.basename(l.dir), l.outcome])).toEqual([['a-0', 'ok'], ['a-1', 'problem'], ['b-0', 'ok']]);
    expect(run.summary).toMatchObject({ ok: 2, problems: 1, failed: 0, exitCode: 3 });
    // The text form: a table row per partition, the problem named with its file.
    const text = await cli('verify', dir);
    expect(text.code).toBe(3);
    expect(text.stdout).toMatch(/a\t1\t.*problem: 1 problem\(s\), first .*a-1\/00000000000000000000\.log at byte \d+/);
    expect(text.stdout).not.toContain('\u001b');

    // b-0's segment becomes a symbolic link to itself: opening it fails (ELOOP), even as root.
    const loop = path.join(dir, 'b-0', '00000000000000000000.log');
    fs.rmSync(loop);
    fs.symlinkSync('00000000000000000000.log', loop);
    const failed = await cli('verify', dir, '--json');
    expect(failed.code, failed.stderr).toBe(1);
    const f = parseRun<Line>(failed.stdout);
    expect(f.lines.map((l) => l.outcome)).toEqual(['ok', 'problem', 'failed']);
    expect(f.lines[2]!.error).toMatchObject({ kind: 'io', file: loop });
    expect(f.summary).toMatchObject({ failed: 1, problems: 1, exitCode: 1 });
  });

  it('a folder holding no partition and no Kafka file is exit 2; so is a selection matching nothing', async () => {
    const empty = makeTempDir('logtool-logdir-empty-');
    fs.writeFileSync(path.join(empty, 'notes.txt'), 'x');
    for (const cmd of [['verify'], ['recover', '--dry-run'], ['rebuild-index']]) {
      const r = await cli(...cmd, empty);
      expect(r.code, `${cmd.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain('not a log directory');
    }
    const dir = await ownLogDir();
    expect((await cli('verify', dir, '--topic', 'zzz')).code).toBe(2);
    expect((await cli('verify', dir, '--topic', '../a')).code).toBe(2);
    expect((await cli('verify', path.join(dir, 'a-0'), '--topic', 'a')).code).toBe(2);
  });
});

describe('selecting partitions', () => {
  it('--topic, --partition and --partitions pick exactly the partitions named', async () => {
    const dir = await ownLogDir();
    // One thread: selection happens before any partition is checked (threads are the test below's business).
    const names = async (...args: string[]) => {
      const r = await cli('verify', dir, '--json', '--threads', '1', ...args);
      expect(r.code, r.stderr).toBe(0);
      return parseRun<Line>(r.stdout).lines.map((l) => path.basename(l.dir));
    };
    expect(await names()).toEqual(['a-0', 'a-1', 'b-0']);
    expect(await names('--topic', 'a')).toEqual(['a-0', 'a-1']);
    expect(await names('--partition', '0')).toEqual(['a-0', 'b-0']);
    expect(await names('--topic', 'a', '--partition', '1')).toEqual(['a-1']);
    expect(await names('--partitions', 'b-*')).toEqual(['b-0']);
    expect(await names('--partitions', '?-1')).toEqual(['a-1']);
  });

  it('Kafka’s -delete/-future/-stray directories and __cluster_metadata-0 are never loaded as partitions', async () => {
    const dir = await ownLogDir();
    const uuid = '0123456789abcdef0123456789abcdef';
    for (const name of [`a-7.${uuid}-delete`, `a-8.${uuid}-future`, `a-9.${uuid}-stray`, '__cluster_metadata-0']) {
      fs.mkdirSync(path.join(dir, name));
      // Garbage a load would report: these directories must not be opened at all.
      fs.writeFileSync(path.join(dir, name, '00000000000000000000.log'), Buffer.alloc(64, 0xff));
    }
    for (const cmd of [['verify', '--threads', '1'], ['recover', '--dry-run'], ['rebuild-index', '--verify']]) {
      const r = await cli(...cmd, dir, '--json');
      expect(r.code, `${cmd.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
      expect(parseRun<Line>(r.stdout).lines.map((l) => path.basename(l.dir))).toEqual(['a-0', 'a-1', 'b-0']);
    }
  });
});

describe('progress', () => {
  it('on a terminal (CI unset) the run draws partitions done and bytes with rate; on a pipe nothing', async () => {
    const c = cases.find((x) => x.case.includes('multisegment-erickimm')) ?? cases[0]!;
    const dir = copyBrokerLogDir(c);
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const tty = await run('script', ['-qfec', `${q(process.execPath)} ${q(cliPath)} verify --deep ${q(dir)}`, '/dev/null'], { CI: undefined as unknown as string, NO_COLOR: '1' }, 120_000);
    // The label (cut to the terminal's width, keeping its ends) counts partitions; the counts are bytes.
    const draws = tty.stdout.split('\r').filter((l) => /partitions: /.test(l));
    expect(draws.length, tty.stdout.slice(0, 500)).toBeGreaterThan(0);
    expect(draws[0]).toMatch(/ verify \/.*\d+ partitions: /);
    expect(draws.at(-1)).toMatch(/partitions: .* of .*(KiB|MiB) \(\d+%\)/);
    const pipe = await cli('verify', '--deep', dir);
    expect(pipe.stderr).not.toMatch(/partitions:/);
    expect(pipe.stderr + pipe.stdout).not.toContain('\u001b');
  }, 180_000);
});

describe('threads', () => {
  it('--threads 1 and 2 print the same, as JSON and as text', async () => {
    const c = cases.find((x) => x.case.includes('zk-gzip-mixed')) ?? cases[0]!;
    const dir = copyBrokerLogDir(c, { completeIndexes: true });
    for (const cmd of [['verify', '--deep', '--json'], ['verify'], ['recover', '--dry-run', '--json'], ['rebuild-index', '--verify', '--json']]) {
      const one = await cli(...cmd, dir, '--threads', '1');
      const two = await cli(...cmd, dir, '--threads', '2');
      expect(one.stdout.split('\n').length, cmd.join(' ')).toBeGreaterThan(partitionNames(dir).length);
      expect(two.code, two.stderr).toBe(one.code);
      expect(two.stdout, cmd.join(' ')).toBe(one.stdout);
    }
  }, 240_000);
});

describe('rebuild-index and recover over a log directory', () => {
  it('a real recover leaves the same files and clean-shutdown marker with --threads 1 and 2', async () => {
    const tree = (dir: string) => Object.keys(treeStamps(dir)).filter((f) => !f.includes('lost+found')).sort();
    const runs: { code: number; files: string[]; marker: boolean }[] = [];
    for (const threads of ['1', '2']) {
      const dir = await ownLogDir();
      // Two partitions with a torn tail: both are opened for writing and repaired.
      for (const p of ['a-0', 'b-0']) fs.appendFileSync(path.join(dir, p, '00000000000000000000.log'), Buffer.from([0, 0, 0, 0, 0, 0, 0, 9, 0, 0]));
      expect(fs.existsSync(path.join(dir, '.kafka_cleanshutdown'))).toBe(true);
      const r = await cli('recover', dir, '--threads', threads, '--full', '--json');
      runs.push({ code: r.code, files: tree(dir), marker: fs.existsSync(path.join(dir, '.kafka_cleanshutdown')) });
    }
    expect(runs[0]!.code).toBe(3);
    expect(runs[1]).toEqual(runs[0]);
  });

  it('rebuild-index puts back a missing index in every selected partition; verify is then clean', async () => {
    const dir = await ownLogDir();
    for (const p of ['a-0', 'b-0']) fs.rmSync(path.join(dir, p, '00000000000000000000.index'));
    const check = await cli('rebuild-index', dir, '--verify', '--json');
    expect(check.code).toBe(3);
    expect(parseRun<Line>(check.stdout).lines.map((l) => l.outcome)).toEqual(['problem', 'ok', 'problem']);
    const only = await cli('rebuild-index', dir, '--topic', 'a', '--json');
    expect(only.code, only.stderr).toBe(0);
    expect(fs.existsSync(path.join(dir, 'a-0', '00000000000000000000.index'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'b-0', '00000000000000000000.index'))).toBe(false);
    expect((await cli('rebuild-index', dir)).code).toBe(0);
    expect((await cli('verify', dir)).code).toBe(0);
  });

  it('recover repairs the one torn partition (exit 3), then finds nothing (exit 0)', async () => {
    const dir = await ownLogDir();
    fs.rmSync(path.join(dir, '.kafka_cleanshutdown'), { force: true });
    fs.appendFileSync(path.join(dir, 'a-1', '00000000000000000000.log'), Buffer.from([0, 0, 0, 0, 0, 0, 0, 9, 0, 0]));
    const r = await cli('recover', dir, '--json');
    expect(r.code, r.stderr).toBe(3);
    expect(parseRun<Line>(r.stdout).lines.map((l) => [path.basename(l.dir), l.status])).toEqual([['a-0', 'consistent'], ['a-1', 'repaired'], ['b-0', 'consistent']]);
    const again = await cli('recover', dir, '--json');
    expect(again.code, again.stdout).toBe(0);
  });
});
