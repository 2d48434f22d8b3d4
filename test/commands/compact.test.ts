/**
 * `logtool compact`, `logtool retention` and `logtool delete-records` as a user runs them (the
 * built CLI, `node dist/cli.js`), plus what needs real processes:
 *
 *  - --dry-run changes nothing and predicts the real run; --json prints one report object;
 *    --keep-removed keeps every replaced file; records without a key exit 3 with nothing changed;
 *  - retention and delete-records delete what they report; reads below the log start offset
 *    exit 1 naming it; every command's --help has examples;
 *  - a compacting process SIGKILLed right after each kind of swap step leaves a log that the next
 *    open completes or rolls back (old-or-new, never broken);
 *  - another process reading in a loop while compaction swaps segments (many passes) only ever
 *    sees a consistent log: offsets in order, nothing invented, nothing of the final result lost.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { cliSync } from '../helpers/cli.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { realIO, type FileIO } from '../../src/engine/io.js';
import { engineEntry, ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { makeKeyedLog, readRecordLines } from '../helpers/compact-logs.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const T0 = 1_700_000_000_000;

const cli = cliSync;

function hashTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of fs.readdirSync(root).sort()) {
    const p = path.join(root, n);
    if (fs.statSync(p).isFile()) out[n] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
  }
  return out;
}

const makeLog = makeKeyedLog;
const readLines = readRecordLines;

/** Latest record per key below `upTo`, plus everything from `upTo` on. */
function model(lines: string[], upTo: number): string[] {
  const latest = new Map<string, string>();
  for (const l of lines) if (Number(l.split('|')[0]) < upTo) latest.set(l.split('|')[1]!, l);
  return lines.filter((l) => Number(l.split('|')[0]) >= upTo || latest.get(l.split('|')[1]!) === l);
}

async function compactInProcess(dir: string): Promise<void> {
  const log = Log.open(dir);
  try {
    await log.compact({ deleteDelayMs: 0 });
  } finally {
    await log.close();
  }
}

describe('logtool compact', () => {
  it('--dry-run changes nothing and predicts the real run; --json reports records, bytes and files', async () => {
    const dir = await makeLog('users-0', 40, 4);
    const before = hashTree(dir);
    const dry = cli('compact', dir, '--dry-run', '--json');
    expect(dry.code).toBe(0);
    expect(hashTree(dir)).toEqual(before);
    const d = JSON.parse(dry.stdout);
    expect(d).toMatchObject({ ok: true, dryRun: true });
    expect(d.recordsRemoved).toBeGreaterThan(0);
    const real = cli('compact', dir, '--json');
    expect(real.code).toBe(0);
    const r = JSON.parse(real.stdout);
    expect(r.recordsRemoved).toBe(d.recordsRemoved);
    expect(r.bytesAfter).toBe(d.bytesAfter);
    expect(r.removedFiles.length).toBeGreaterThan(0);
    expect(fs.readdirSync(dir).filter((n) => /\.(deleted|cleaned|swap)$/.test(n))).toEqual([]);
    // Below the active segment only the latest record per key is left.
    const kept = readLines(dir).filter((l) => Number(l.split('|')[0]) < r.firstUncleanableOffset).map((l) => l.split('|')[1]);
    expect(new Set(kept).size).toBe(kept.length);
    expect(kept.length).toBe(4);
  });

  it('refuses records without a key: exit 3, the offsets listed, nothing changed', async () => {
    const dir = await makeLog('nokey-0', 20, 3, { keyless: [4, 9] });
    const before = hashTree(dir);
    const r = cli('compact', dir);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/2 record\(s\) without a key .*offsets 4, 9.*Nothing was changed/);
    const j = cli('compact', dir, '--json');
    expect(j.code).toBe(3);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, keylessRecords: 2, firstOffsets: [4, 9] });
    const after = hashTree(dir);
    for (const [f, h] of Object.entries(before)) if (f.endsWith('.log')) expect(after[f]).toBe(h);
  });

  it('--keep-removed keeps every replaced segment file aside; the report lists each one and where it went', async () => {
    const dir = await makeLog('keep-0', 30, 2);
    const keep = path.join(makeTempDir(), 'removed');
    const r = cli('compact', dir, '--keep-removed', keep);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Compacted .*keep-0/);
    expect(r.stdout).toMatch(/records removed\s+\d+ \(2 kept/);
    const listed = [...r.stdout.matchAll(/^\s+(\d{20}\.\w+) → (\S+)$/gm)];
    expect(listed.length).toBeGreaterThan(0);
    for (const [, name, keptAt] of listed) {
      expect(path.basename(keptAt!).startsWith(name!)).toBe(true);
      expect(path.relative(keep, keptAt!).startsWith('keep-0')).toBe(true);
      expect(fs.existsSync(keptAt!)).toBe(true);
    }
  });

  it('a memory bound too small is a usage error (exit 2) naming the flag, as text and as JSON', async () => {
    const dir = await makeLog('mem-0', 20, 2);
    const before = hashTree(dir);
    const r = cli('compact', dir, '--max-memory', '1048576');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --max-memory 1048576 is too small: /);
    expect(r.stderr).not.toMatch(/maxMemoryBytes/);
    const j = cli('compact', dir, '--max-memory', '1048576', '--json');
    expect(j.code).toBe(2);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, error: { kind: 'usage' } });
    expect(hashTree(dir)).toEqual(before);
  });

  it('has --help with examples for compact, retention and delete-records', () => {
    const help: Record<string, string> = {};
    for (const c of ['compact', 'retention', 'delete-records']) {
      const r = cli(c, '--help');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Examples:\n\s+logtool /);
      expect(r.stdout).toMatch(/--json[\s\S]*--dry-run|--dry-run[\s\S]*--json/);
      help[c] = r.stdout;
    }
    expect(help.compact).toMatch(/--keep-removed[\s\S]*--max-memory|--max-memory[\s\S]*--keep-removed/);
    expect(help.retention).toMatch(/--retention-ms[\s\S]*--retention-bytes/);
    expect(help['delete-records']).toMatch(/--before-offset/);
  });
});

describe('logtool retention and delete-records', () => {
  it('retention deletes exactly the expired segments it reports; reads below the new log start offset exit 1 naming it', async () => {
    const dir = await makeLog('events-0', 30, 30, { segmentBytes: 300, ts: (i) => T0 + i * 60_000 });
    const segs = fs.readdirSync(dir).filter((n) => n.endsWith('.log')).sort();
    const now = T0 + 30 * 60_000;
    const dry = JSON.parse(cli('retention', dir, '--retention-ms', String(15 * 60_000), '--now', String(now), '--dry-run', '--json').stdout);
    expect(dry.deleted.length).toBeGreaterThan(0);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.log')).sort()).toEqual(segs);
    const real = cli('retention', dir, '--retention-ms', String(15 * 60_000), '--now', String(now), '--json');
    expect(real.code).toBe(0);
    const r = JSON.parse(real.stdout);
    expect(r.deleted.map((d: { baseOffset: number }) => d.baseOffset)).toEqual(dry.deleted.map((d: { baseOffset: number }) => d.baseOffset));
    for (const d of r.deleted) {
      expect(now - d.largestTimestamp).toBeGreaterThan(15 * 60_000);
      expect(fs.existsSync(d.file)).toBe(false);
    }
    const lso = r.logStartOffsetAfter;
    expect(lso).toBeGreaterThan(0);
    const below = cli('read', dir, '--from-offset', '0');
    expect(below.code).toBe(2);
    expect(below.stderr).toMatch(new RegExp(`below the log start offset ${lso}`));
    expect(Number(readLines(dir)[0]!.split('|')[0])).toBe(lso);
    const text = cli('retention', dir, '--retention-ms', '-1', '--retention-bytes', '-1');
    expect(text.stdout).toMatch(/no segment is due for deletion/);
  });

  it('delete-records advances the log start offset, deletes the segments below it, and reads honour it', async () => {
    const dir = await makeLog('orders-0', 30, 30, { segmentBytes: 300 });
    expect(cli('delete-records', dir).code).toBe(2);
    const beyond = cli('delete-records', dir, '--before-offset', '31');
    expect(beyond.code).toBe(1);
    expect(beyond.stderr).toMatch(/beyond the log end offset 30/);
    const r = cli('delete-records', dir, '--before-offset', '17', '--json');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.logStartOffsetAfter).toBe(17);
    for (const d of j.deleted) expect(d.upperBound).toBeLessThanOrEqual(17);
    const cp = fs.readFileSync(path.join(path.dirname(dir), 'log-start-offset-checkpoint'), 'utf8');
    expect(cp).toMatch(/orders 0 17/);
    expect(Number(readLines(dir)[0]!.split('|')[0])).toBe(17);
    const below = cli('read', dir, '--from-offset', '16');
    expect(below.code).toBe(2); // a range outside [start, end) is a usage error (issue 14)
    expect(below.stderr).toMatch(/offset 16 is below the log start offset 17/);
  });
});

describe('compaction and other processes', () => {
  it('a compacting process killed (SIGKILL) right after each kind of swap step leaves a log that reopens old-or-new', async () => {
    const template = await makeLog('kill-0', 40, 5, { segmentBytes: 300 });
    const original = new Set(readLines(template));
    const full = path.join(makeTempDir(), 'kill-0');
    fs.cpSync(template, full, { recursive: true });
    await compactInProcess(full);
    const compacted = readLines(full);
    const script = path.join(makeTempDir(), 'kill-at.mjs');
    fs.writeFileSync(
      script,
      `import { Log } from ${JSON.stringify(engineEntry)};
const [dir, phase, nth] = [process.argv[2], process.argv[3], Number(process.argv[4])];
let seen = 0;
const log = Log.open(dir);
await log.compact({ deleteDelayMs: 0, onStep: (s) => { if (s.phase === phase && seen++ === nth) process.kill(process.pid, 'SIGKILL'); } });
await log.close();
console.log('completed');
`,
    );
    // One kill per phase that matters to the loader (every single step is covered in-process by
    // test/engine/cleaner/swap-crash.test.ts).
    const kills: [string, number][] = [
      ['cleaned-to-swap', 1],
      ['swap-durable', 0],
      ['old-to-deleted', 2],
      ['swap-to-final', 0],
      ['final-durable', 1],
    ];
    for (const [phase, nth] of kills) {
      const dir = path.join(makeTempDir(), 'kill-0');
      fs.cpSync(template, dir, { recursive: true });
      const r = spawnSync(process.execPath, [script, dir, phase, String(nth)], { encoding: 'utf8' });
      expect(r.signal, `${phase} ${r.stderr}`).toBe('SIGKILL');
      await Log.open(dir).close(); // the loader completes or undoes the swap
      expect(fs.readdirSync(dir).filter((n) => /\.(cleaned|swap|deleted)$/.test(n)), phase).toEqual([]);
      const after = readLines(dir);
      for (const l of after) expect(original.has(l), `${phase}: ${l}`).toBe(true);
      const set = new Set(after);
      for (const l of compacted) expect(set.has(l), `${phase}: lost ${l}`).toBe(true);
      await compactInProcess(dir);
      expect(readLines(dir), phase).toEqual(compacted);
    }
  });

  it('a reader process looping over the log while compaction swaps segments always sees a consistent log', async () => {
    const dir = await makeLog('live-0', 200, 24, { segmentBytes: 600 });
    const all = readLines(dir);
    // What every state of a multi-pass compaction still holds: the latest record of each key.
    const latest = new Map<string, string>();
    for (const l of all) latest.set(l.split('|')[1]!, l);
    const work = makeTempDir();
    const expectedFile = path.join(work, 'expected.json');
    const stopFile = path.join(work, 'stop');
    const startedFile = path.join(work, 'started');
    const progressFile = path.join(work, 'progress');
    fs.writeFileSync(expectedFile, JSON.stringify({ all, final: [...latest.values()] }));
    const script = path.join(work, 'reader.mjs');
    fs.writeFileSync(
      script,
      `import fs from 'node:fs';
import { Log } from ${JSON.stringify(engineEntry)};
const [dir, expectedFile, stopFile, startedFile, progressFile] = process.argv.slice(2);
const { all, final } = JSON.parse(fs.readFileSync(expectedFile, 'utf8'));
const allSet = new Set(all);
const generation = () => { try { return fs.readFileSync(dir + '/logtool.generation', 'utf8').trim(); } catch { return '0'; } };
let reads = 0;
const generations = [];
const errors = [];
while (!fs.existsSync(stopFile) || reads < 3) {
  let log;
  try {
    const before = generation();
    log = await Log.openStable(dir);
    const recs = [...log.read()].map((r) => r.offset + '|' + r.key + '|' + r.value);
    let prev = -1;
    for (const r of recs) {
      const o = Number(r.split('|')[0]);
      if (o <= prev) errors.push('out of order at ' + o);
      prev = o;
      if (!allSet.has(r)) errors.push('never written: ' + r);
    }
    const got = new Set(recs);
    for (const f of final) if (!got.has(f)) errors.push('lost: ' + f);
    reads++;
    // A whole read of one state: its generation, for the parent to see it (and to prove overlap).
    const after = generation();
    if (before === after && Number(after) % 2 === 0 && generations.at(-1) !== after) {
      generations.push(after);
      fs.writeFileSync(progressFile + '.tmp', after);
      fs.renameSync(progressFile + '.tmp', progressFile);
    }
    if (reads === 1) fs.writeFileSync(startedFile, '');
  } catch (e) {
    errors.push('error: ' + e.message);
  } finally {
    await log?.close();
  }
}
console.log(JSON.stringify({ reads, generations, errorCount: errors.length, errors: errors.slice(0, 5) }));
`,
    );
    const child = spawn(process.execPath, [script, dir, expectedFile, stopFile, startedFile, progressFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const deadline = Date.now() + 20_000;
    while (!fs.existsSync(startedFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    // Overlap by construction, not by luck of timing: each time a swap ends (the generation file
    // gets an even value) the compaction waits (up to 20 s) until the reader has read that state.
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    const generationsWaitedFor: string[] = [];
    const io: FileIO = {
      ...realIO,
      rename(from, to) {
        realIO.rename(from, to);
        if (path.basename(to) !== 'logtool.generation') return;
        const g = fs.readFileSync(to, 'utf8').trim();
        if (Number(g) % 2 !== 0) return;
        generationsWaitedFor.push(g);
        for (const until = Date.now() + 20_000; Date.now() < until; Atomics.wait(sleeper, 0, 0, 5)) {
          if (fs.existsSync(progressFile) && fs.readFileSync(progressFile, 'utf8') === g) return;
        }
      },
    };
    // Several passes (a map of 5 keys for 24 keys), each swapping several groups.
    const log = Log.open(dir, { io });
    const report = await log.compact({ offsetMapBytes: 24 * 6, deleteDelayMs: 0 });
    await log.close();
    fs.writeFileSync(stopFile, '');
    expect(await exited).toBe(0);
    const result = JSON.parse(out);
    expect(report.passes).toBeGreaterThan(3);
    // The reader did read while compaction ran: it saw the state after every swap.
    expect(generationsWaitedFor.length).toBeGreaterThan(3);
    for (const g of generationsWaitedFor) expect(result.generations, `reader never read generation ${g}`).toContain(g);
    expect(result.errors).toEqual([]);
    expect(result.errorCount).toBe(0);
    expect(result.reads).toBeGreaterThanOrEqual(3);
    expect(readLines(dir)).toEqual(model(all, report.firstUncleanableOffset));
  });
});
