/**
 * Issue 10, "Every I/O call fails once", the real-process sample: fault-injection.test.ts makes
 * every I/O call fail in-process; here a sample of the same fault points runs in real `logtool`
 * child processes (the built CLI with test/helpers/fault-preload.mjs installed in front of the OS
 * file calls), so the error path a user meets — exit code, one stderr line, what is left on disk —
 * is the real one. After each run: exit 1 with exactly one `error:` line (the JSON error object
 * under --json) naming the injected
 * fault (or exit 0 when the fault was absorbed), every acknowledged record reads back exactly,
 * the next writer appends, and `verify` exits 0.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, compiledCliPath } from '../helpers/build.js';
import { cli, errorLineText, run } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs, repoRoot } from '../helpers/fixtures.js';
import { seededRandom } from '../helpers/crash-io.js';

const SEED = Number(process.env.FAULT_CHILD_SEED ?? 20261201);
const SAMPLES = Number(process.env.FAULT_CHILD_SAMPLES ?? 4);
const PRELOAD = path.join(repoRoot, 'test', 'helpers', 'fault-preload.mjs');
const ERRNOS = ['EIO', 'ENOSPC', 'EACCES'];

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

/** The compiled CLI (dist/cli.js): the preload installs its layer into dist/engine/io.js, which the bundled bin does not load. */
function faulty(args: string[], env: Record<string, string>) {
  return run(process.execPath, ['--import', PRELOAD, compiledCliPath, ...args], env);
}

/** A sample of fault points in [1, calls], always including the first and the last. */
function sample(calls: number, rnd: () => number): number[] {
  const points = new Set([1, calls]);
  while (points.size < Math.min(calls, SAMPLES)) points.add(1 + Math.floor(rnd() * calls));
  return [...points].sort((a, b) => a - b);
}

async function records(dir: string): Promise<{ offset: number; key: string; value: string }[]> {
  const r = await cli('read', dir, '--json');
  expect(r.code, r.stderr).toBe(0);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { offset: number; key: string; value: string })
    .map(({ offset, key, value }) => ({ offset, key, value }));
}

function copyDir(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true });
}

/** The failed command's own report, then the next writer and verify. */
async function checkAfter(name: string, k: number, r: { code: number; stderr: string }, dir: string, json: boolean): Promise<void> {
  const where = `${name}, call ${k}`;
  if (r.code !== 0) {
    expect(r.code, `${where}: ${r.stderr}`).toBe(1);
    // Under --json the error line is the JSON error object.
    const errors = r.stderr.split('\n').flatMap((l) => errorLineText(l, json) ?? []);
    expect(errors, `${where}: ${r.stderr}`).toHaveLength(1);
    expect(errors[0], where).toMatch(/injected fault/);
    expect(r.stderr, where).not.toMatch(/internal error|\n\s+at /);
  }
  const next = await cli('append', dir, '--key', 'after', '--value', 'fault');
  expect([0, 3], `${where}: next append: ${next.stderr}`).toContain(next.code);
  const v = await cli('verify', dir);
  expect(v.code, `${where}: verify: ${v.stdout} ${v.stderr}`).toBe(0);
}

describe('every I/O call fails once, in real child processes (a sample)', () => {
  it('append --flush sync with rolls: acknowledged batches survive, one error line, the next writer appends', async () => {
    const root = makeTempDir();
    const seed = path.join(root, 'seed', 't-0');
    fs.mkdirSync(path.dirname(seed)); // append creates the partition directory, not its log directory
    const input = path.join(root, 'input.ndjson');
    fs.writeFileSync(input, Array.from({ length: 120 }, (_, i) => JSON.stringify({ key: `k${i % 9}`, value: `v${i}` })).join('\n') + '\n');
    expect((await cli('append', seed, '--key', 'first', '--value', 'record', '--segment-bytes', '1024')).code).toBe(0);
    const argv = (dir: string) => ['append', dir, '--input', input, '--json', '--flush', 'sync', '--batch-records', '5'];
    const countFile = path.join(root, 'calls');
    const clean = path.join(root, 'clean', 't-0');
    copyDir(seed, clean);
    const free = await faulty(argv(clean), { LOGTOOL_FAULT_COUNT_FILE: countFile });
    expect(free.code, free.stderr).toBe(0);
    const calls = Number(fs.readFileSync(countFile, 'utf8'));
    const points = sample(calls, seededRandom(SEED));
    console.log(`fault-child append: ${calls} I/O calls, sampled ${points.join(', ')} (FAULT_CHILD_SEED=${SEED})`);
    for (const [i, k] of points.entries()) {
      const dir = path.join(root, `run-${k}`, 't-0');
      copyDir(seed, dir);
      const r = await faulty(argv(dir), { LOGTOOL_FAULT_CALL: String(k), LOGTOOL_FAULT_ERRNO: ERRNOS[i % ERRNOS.length]! });
      // What the command acknowledged before the fault (one --json line per acknowledged batch).
      const acked = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { lastOffset: number; status: string });
      expect(acked.every((a) => a.status === 'flushed')).toBe(true);
      const lastAcked = acked.length > 0 ? acked[acked.length - 1]!.lastOffset : 0;
      const got = await records(dir);
      expect(got[0], `call ${k}`).toEqual({ offset: 0, key: 'first', value: 'record' });
      for (let o = 1; o <= lastAcked; o++) expect(got[o], `call ${k}: acknowledged offset ${o}`).toEqual({ offset: o, key: `k${(o - 1) % 9}`, value: `v${o - 1}` });
      await checkAfter('append', k, r, dir, true);
    }
  });

  it('compact: the latest record of every key survives any failed call, one error line, the next writer appends', async () => {
    const root = makeTempDir();
    const seed = path.join(root, 'seed', 't-0');
    fs.mkdirSync(path.dirname(seed)); // append creates the partition directory, not its log directory
    const input = path.join(root, 'input.ndjson');
    fs.writeFileSync(input, Array.from({ length: 200 }, (_, i) => JSON.stringify({ key: `k${i % 13}`, value: `v${i}` })).join('\n') + '\n');
    const setup = await cli('append', seed, '--input', input, '--batch-records', '4', '--segment-bytes', '1024', '--cleanup-policy', 'compact', '--min-cleanable-dirty-ratio', '0.01');
    expect(setup.code, setup.stderr).toBe(0);
    const before = await records(seed);
    const latest = new Map(before.map((r) => [r.key, r]));
    const countFile = path.join(root, 'calls');
    const clean = path.join(root, 'clean', 't-0');
    copyDir(seed, clean);
    const free = await faulty(['compact', clean], { LOGTOOL_FAULT_COUNT_FILE: countFile });
    expect(free.code, free.stderr).toBe(0);
    expect((await records(clean)).length).toBeLessThan(before.length);
    const calls = Number(fs.readFileSync(countFile, 'utf8'));
    const points = sample(calls, seededRandom(SEED + 1));
    console.log(`fault-child compact: ${calls} I/O calls, sampled ${points.join(', ')} (FAULT_CHILD_SEED=${SEED})`);
    for (const [i, k] of points.entries()) {
      const dir = path.join(root, `run-${k}`, 't-0');
      copyDir(seed, dir);
      const r = await faulty(['compact', dir], { LOGTOOL_FAULT_CALL: String(k), LOGTOOL_FAULT_ERRNO: ERRNOS[i % ERRNOS.length]! });
      const got = await records(dir);
      const byOffset = new Map(before.map((x) => [x.offset, x]));
      for (const x of got) expect(byOffset.get(x.offset), `call ${k}: record ${x.offset} was not there before`).toEqual(x);
      for (const x of latest.values()) expect(got, `call ${k}: the latest record of ${x.key}`).toContainEqual(x);
      await checkAfter('compact', k, r, dir, false);
    }
  });
});
