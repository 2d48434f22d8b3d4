/**
 * issue 9 item 7: `consume --exec CMD [--exec-records N]` — a real acknowledgement instead of a
 * pipe. CMD runs through `sh -c` once per batch of at most N records with the lines `consume`
 * prints on its stdin; a batch is committed only when CMD exits 0; the first failure stops consume
 * with CMD's exit code (128+n for signal n). Real shell commands, real files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { cli } from '../helpers/cli.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

async function partition(n: number): Promise<{ dir: string; work: string }> {
  const work = makeTempDir('logtool-exec-');
  const dir = path.join(work, 'jobs-0');
  const log = Log.open(dir, { config: { flushMode: 'async' } });
  await log.append(Array.from({ length: n }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), timestamp: 1_700_000_000_000 + i })));
  await log.close();
  return { dir, work };
}

const position = (dir: string): string | undefined => {
  const f = path.join(dir, 'consumer-offsets-checkpoint');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').trim().split('\n')[2] : undefined;
};

/** Batches CMD received, split on the marker line it writes before each. */
const batches = (file: string): string[][] =>
  fs
    .readFileSync(file, 'utf8')
    .split('--batch--\n')
    .slice(1)
    .map((b) => b.split('\n').filter(Boolean));

describe('consume --exec', () => {
  it('runs CMD once per batch of at most --exec-records, with consume\'s lines on stdin, and commits after each', async () => {
    const { dir, work } = await partition(10);
    const out = path.join(work, 'received');
    const r = await cli('consume', dir, '--group', 'g', '--json', '--exec-records', '4', '--exec', `{ echo --batch--; cat; } >> '${out}'`);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const got = batches(out);
    expect(got.map((b) => b.length)).toEqual([4, 4, 2]);
    expect(JSON.parse(got[0]![0]!)).toEqual({ offset: 0, timestamp: 1_700_000_000_000, key: 'k0', value: 'v0', headers: [] });
    expect(got.flat().map((l) => (JSON.parse(l) as { offset: number }).offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(position(dir)).toBe('g 10');
  });

  it('--max-records stays the total; the text format is the one consume prints; without --exec-records the rest is one batch', async () => {
    const { dir, work } = await partition(10);
    const out = path.join(work, 'received');
    const r = await cli('consume', dir, '--group', 'g', '--max-records', '6', '--exec-records', '4', '--exec', `{ echo --batch--; cat; } >> '${out}'`);
    expect(r.code).toBe(0);
    expect(batches(out).map((b) => b.length)).toEqual([4, 2]);
    expect(batches(out)[0]![0]).toBe('0\t2023-11-14T22:13:20.000Z\tk0\tv0');
    expect(position(dir)).toBe('g 6');
    const rest = await cli('consume', dir, '--group', 'g', '--exec', `{ echo --batch--; cat; } >> '${out}'`);
    expect(rest.code).toBe(0);
    expect(batches(out).map((b) => b.length)).toEqual([4, 2, 4]);
    expect(position(dir)).toBe('g 10');
  });

  it('a CMD failing midway: only the batches before it are committed, consume exits with its code, the rest is delivered next time', async () => {
    const { dir, work } = await partition(10);
    const out = path.join(work, 'received');
    const count = path.join(work, 'runs');
    // Succeeds twice, then takes its input and exits 7.
    const cmd = `n=$(cat '${count}' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '${count}'; { echo --batch--; cat; } >> '${out}'; [ $n -lt 3 ] || exit 7`;
    const r = await cli('consume', dir, '--group', 'g', '--exec-records', '3', '--exec', cmd);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/--exec command exited with 7 on records 6\.\.8; not committed, group g stays at 6/);
    expect(fs.readFileSync(count, 'utf8').trim()).toBe('3');
    expect(position(dir)).toBe('g 6');
    const again = await cli('consume', dir, '--group', 'g', '--exec-records', '3', '--exec', `{ echo --batch--; cat; } >> '${out}'`);
    expect(again.code).toBe(0);
    expect(batches(out).slice(3).flat().map((l) => Number(l.split('\t')[0]))).toEqual([6, 7, 8, 9]);
    expect(position(dir)).toBe('g 10');
  });

  it('a CMD killed by a signal: exit 128+n, nothing committed', async () => {
    const { dir } = await partition(5);
    const term = await cli('consume', dir, '--group', 'g', '--exec', 'cat > /dev/null; kill -TERM $$');
    expect(term.code).toBe(128 + 15);
    expect(term.stderr).toMatch(/killed by SIGTERM on records 0\.\.4/);
    const kill = await cli('consume', dir, '--group', 'g', '--exec', 'kill -KILL $$');
    expect(kill.code).toBe(128 + 9);
    expect(position(dir)).toBeUndefined();
  });

  it('--exec-records without --exec is a usage error', async () => {
    const { dir } = await partition(1);
    const r = await cli('consume', dir, '--group', 'g', '--exec-records', '5');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--exec-records needs --exec/);
    expect(position(dir)).toBeUndefined();
  });
});
