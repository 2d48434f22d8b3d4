/**
 * `append --transaction` killed with SIGKILL at random points, many trials, against one partition:
 * after every kill, read_committed shows all or none of each run's input — none of an interrupted
 * run's (checked before the next writer opens the partition and after it ended the transaction with
 * an ABORT marker); a later run that completes is visible in full; no logtool transaction stays
 * open. Then `recover` ends a dangling transaction, and a bad input line aborts a run's transaction.
 * Delays come from a seeded generator (reproducible); a real child process, real files, real fsync.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { jsonLines } from '../helpers/txn-partition.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const RECORDS_PER_RUN = 10_000;
/** Batches per run (100 records each): a kill after 1..BATCHES_PER_RUN × 1.2 acknowledgements leaves some runs complete. */
const BATCHES_PER_RUN = RECORDS_PER_RUN / 100;
/**
 * Kill trials in one partition (LOGTOOL_TXN_KILL_TRIALS; default 6, the full run 12). Each trial reads
 * the whole log twice, so the cost grows with the square of the count; 6 already has kills by time
 * and by acknowledgement, interrupted runs with data and completed runs (the test asserts them).
 */
const TRIALS = Number(process.env.LOGTOOL_TXN_KILL_TRIALS ?? 6);

/** Mulberry32: reproducible delays. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Runs `append --transaction --json` on an input; SIGKILLs it after `killAfterMs`, or once it has
 * printed `killAfterAcks` batch acknowledgements (a point in its progress whatever the machine's load).
 */
function appendRun(dir: string, input: string, killAfterMs?: number, killAfterAcks?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, 'append', dir, '--transaction', '--lines', '--input', input, '--batch-records', '100', '--flush', 'sync', '--json'], {
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let acks = 0;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      acks += d.toString().split('\n').length - 1;
      if (killAfterAcks !== undefined && acks >= killAfterAcks) child.kill('SIGKILL');
    });
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

/** Per run, how many of its records a read at this isolation level returns. */
async function countsByRun(dir: string, level: 'read_committed' | 'read_uncommitted'): Promise<Map<string, number>> {
  if (!fs.existsSync(dir)) return new Map(); // killed before the directory was made
  const r = await cli('read', dir, '--json', '--isolation-level', level);
  // A kill can land mid-write: a read-only reader cannot repair that torn tail, so it says so once
  // and exits 3, having returned every whole entry before it. Anything else must be a clean exit 0.
  const tornTail = /^warning: \S+\.log at byte \d+: (entry of \d+ bytes runs past the end of the file \(\d+ bytes left\)|\d+ trailing bytes do not form an entry header)$/;
  const warnings = r.stderr.split('\n').filter((l) => l !== '');
  if (r.code === 3) expect(warnings.length === 1 && tornTail.test(warnings[0]!), r.stderr).toBe(true);
  else expect(r.code, r.stderr).toBe(0);
  const out = new Map<string, number>();
  for (const rec of jsonLines(r.stdout)) {
    const run = String(rec.value).split('-')[0]!;
    out.set(run, (out.get(run) ?? 0) + 1);
  }
  return out;
}

function writeInput(dir: string, run: string): string {
  const file = path.join(dir, `${run}.txt`);
  fs.writeFileSync(file, Array.from({ length: RECORDS_PER_RUN }, (_, i) => `${run}-${i}`).join('\n') + '\n');
  return file;
}

describe('append --transaction', () => {
  it('SIGKILL at random points: read_committed shows each run whole or not at all, never an interrupted one', async () => {
    const tmp = makeTempDir();
    const dir = path.join(tmp, 'tx-0');
    const rnd = random(13);
    const killed: string[] = [];
    let interruptedWithData = 0;
    for (let k = 0; k < TRIALS; k++) {
      const run = `r${k}`;
      // Every third trial by time (possibly before anything is written), the others after 1..120
      // acknowledged batches of the 100 (some therefore complete).
      const res = k % 3 === 0 ? await appendRun(dir, writeInput(tmp, run), 100 + Math.floor(rnd() * 1500)) : await appendRun(dir, writeInput(tmp, run), undefined, 1 + Math.floor(rnd() * BATCHES_PER_RUN * 1.2));
      const wasKilled = res.signal === 'SIGKILL';
      if (wasKilled) killed.push(run);
      else expect(res.code, res.stderr).toBe(0);
      // Before the next writer: an interrupted run is invisible; a completed one is whole.
      const committed = await countsByRun(dir, 'read_committed');
      const written = await countsByRun(dir, 'read_uncommitted');
      if (wasKilled && (written.get(run) ?? 0) > 0 && (committed.get(run) ?? 0) === 0) interruptedWithData++;
      for (const [r, n] of committed) expect([r, n]).toEqual([r, RECORDS_PER_RUN]);
      if (!wasKilled) expect(committed.get(run)).toBe(RECORDS_PER_RUN);
    }
    expect(killed.length).toBeGreaterThan(TRIALS / 3);
    expect(interruptedWithData).toBeGreaterThan(0);
    // A run to the end: it ends the interrupted transaction first, then is visible in full.
    const final = await appendRun(dir, writeInput(tmp, 'final'));
    expect(final.code, final.stderr).toBe(0);
    const committed = await countsByRun(dir, 'read_committed');
    expect(committed.get('final')).toBe(RECORDS_PER_RUN);
    for (const [r, n] of committed) expect([r, n]).toEqual([r, RECORDS_PER_RUN]);
    const list = jsonLines((await cli('transactions', 'list', dir, '--json')).stdout)[0]!;
    expect(list.openTransactions).toEqual([]);
    expect(list.lastStableOffset).toBe(list.logEndOffset);
  }, 600_000);

  it('recover ends a dangling logtool transaction; a bad input line aborts the run', async () => {
    const tmp = makeTempDir();
    const dir = path.join(tmp, 'tx-0');
    expect((await appendRun(dir, writeInput(tmp, 'a'))).code).toBe(0);
    const open = async () => (jsonLines((await cli('transactions', 'list', dir, '--json')).stdout)[0]!.openTransactions as unknown[]).length;
    // Killed after 20 acknowledged batches: an open transaction (durable batches, no marker).
    expect((await appendRun(dir, writeInput(tmp, 'b'), undefined, 20)).signal).toBe('SIGKILL');
    expect(await open()).toBe(1);
    const rec = await cli('recover', dir);
    expect(rec.stderr).toMatch(/ended the interrupted transaction of logtool producer 450359962737\d+/);
    const list = jsonLines((await cli('transactions', 'list', dir, '--json')).stdout)[0]!;
    expect([list.openTransactions, list.lastStableOffset]).toEqual([[], list.logEndOffset]);
    // A bad line: the lines before it went into the log, aborted.
    const bad = path.join(tmp, 'bad.ndjson');
    fs.writeFileSync(bad, '{"key":"k","value":"good-1"}\n{"key":"k","value":"good-2"}\nnot json\n');
    const r = await cli('append', dir, '--transaction', '--input', bad);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the transaction was aborted: read_committed readers see none of this input/);
    const committed = jsonLines((await cli('read', dir, '--json', '--isolation-level', 'read_committed')).stdout).map((x) => x.value);
    const all = jsonLines((await cli('read', dir, '--json')).stdout).map((x) => x.value);
    expect(all).toContain('good-2');
    expect(committed).not.toContain('good-1');
    expect(committed).not.toContain('good-2');
  }, 300_000);
});
