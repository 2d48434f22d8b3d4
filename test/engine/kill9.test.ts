/**
 * Acknowledgement semantics against real crashes: a child process (the built engine) appends in a
 * loop and prints every acknowledgement; the parent SIGKILLs it at a random moment, reopens the
 * log for writing (so recovery runs), and checks what docs/durability.md promises for the mode:
 *
 * - every record is intact (content derived from its offset; batches are uncompressed, gzip,
 *   snappy, lz4 or zstd at random) and offsets run 0..n−1 without a
 *   gap, whatever the mode: what survives is always a prefix of what was appended;
 * - sync: every record acknowledged `flushed` is there;
 * - async: every record acknowledged `committed` is there (write(2) returned: the page cache
 *   survives the death of the process);
 * - buffered: acknowledgements (`written`) promise nothing across a crash; every record below the
 *   committed position the child reported (positions().committed) is there.
 *
 * SIGKILL does not lose the page cache, so this tests the process side (ordering, acknowledging
 * too early, torn tails, recovery); power loss is the crash-state tests' business.
 * 15 trials by default (30 or more for a longer run); LOGTOOL_KILL_TRIALS=N runs N (split over the three modes). The
 * seed is printed (and named in every failure); LOGTOOL_KILL_SEED=N sets it.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { cliPath, engineEntry, ensureBuilt } from '../helpers/build.js';

// Each trial is an independent random kill (the seed comes from the clock): 15 keep the suite's
// share small while every run still explores new ones; the codec checks below hold for each mode.
const TOTAL_TRIALS = Math.max(3, Number(process.env.LOGTOOL_KILL_TRIALS ?? 15) || 15);
const MODES = ['sync', 'async', 'buffered'] as const;
type Mode = (typeof MODES)[number];
const trialsFor = (i: number): number => Math.floor(TOTAL_TRIALS / 3) + (i < TOTAL_TRIALS % 3 ? 1 : 0);

/** Shared by the child (as source text) and the parent: a record's bytes follow from its offset. */
const RECORD_SOURCE = `
function recordFor(offset) {
  let x = (offset * 2654435761) >>> 0;
  const len = 1 + (x % 300);
  const v = Buffer.allocUnsafe(len);
  for (let i = 0; i < len; i++) { x = (x * 1103515245 + 12345) >>> 0; v[i] = x >>> 24; }
  return { key: Buffer.from('k' + offset), value: v };
}
function rng(seed) {
  let x = (seed >>> 0) || 1;
  return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 4294967296; };
}
`;
const { recordFor, rng } = new Function(`${RECORD_SOURCE}; return { recordFor, rng };`)() as {
  recordFor(offset: number): { key: Buffer; value: Buffer };
  rng(seed: number): () => number;
};

const CHILD_SOURCE = (engineUrl: string): string => `
import { Log, encodeBatch } from ${JSON.stringify(engineUrl)};
${RECORD_SOURCE}
// The codecs' native add-ons load on the first batch that needs them; load them before the log
// opens, so that the kill moments (counted from the open) fall among appends, not add-on loading.
for (let c = 1; c <= 4; c++) encodeBatch([{ value: Buffer.from('warm-up') }], { baseOffset: 0, compression: c });
const [dir, mode, seedText, preallocateText] = process.argv.slice(2);
const rnd = rng(Number(seedText));
const out = (line) => process.stdout.write(line + '\\n'); // a pipe: synchronous on Linux
// The default preallocation writes zeros from a segment's second group on, up to segment.bytes: its
// trials get segments of 64 KiB and more, so that a kill can land over them (with 4-16 KB segments,
// about 3 appends each, 1 kill in 10 did); the others roll every few appends.
const config = { flushMode: mode, segmentBytes: (preallocateText === 'default' ? 65536 : 4096) + Math.floor(rnd() * 12000), indexIntervalBytes: 256 };
if (preallocateText !== 'default') config.preallocateBytes = Number(preallocateText);
if (mode === 'async') config.flushMs = 5 + Math.floor(rnd() * 50);
if (mode === 'buffered') Object.assign(config, { commitIntervalMs: 1 + Math.floor(rnd() * 30), commitBytes: 512 + Math.floor(rnd() * 8192), flushMs: 5 + Math.floor(rnd() * 50) });
const log = Log.open(dir, { config, rememberConfig: false });
out('O ' + log.nextOffset);
const report = () => { const p = log.positions(); out('C ' + p.committed.offset + ' ' + p.flushed.offset); };
setInterval(report, 1);
const producers = 1 + Math.floor(rnd() * 6);
for (let p = 0; p < producers; p++) {
  void (async () => {
    for (;;) {
      const n = 1 + Math.floor(rnd() * 12);
      const base = log.nextOffset;
      const records = [];
      for (let k = 0; k < n; k++) records.push(recordFor(base + k));
      const opts = mode === 'sync' && rnd() < 0.1 ? { ackBeforeSync: true } : {};
      opts.compression = Math.floor(rnd() * 5); // none, gzip, snappy, lz4, zstd
      const r = await log.append(records, opts);
      if (r.baseOffset !== base) throw new Error('offset ' + r.baseOffset + ' != ' + base);
      out('A ' + r.baseOffset + ' ' + r.lastOffset + ' ' + r.status);
      // Let timers (committer, flusher, reporter) run now and then, as a real producer would.
      if (rnd() < 0.3) await new Promise((res) => setImmediate(res));
      else if (rnd() < 0.05) await new Promise((res) => setTimeout(res, 1));
    }
  })();
}
`;

let childScript: string;

beforeAll(() => {
  ensureBuilt();
  const dir = makeTempDir('logtool-kill9-child-');
  childScript = path.join(dir, 'child.mjs');
  fs.writeFileSync(childScript, CHILD_SOURCE(pathToFileURL(engineEntry).href));
});
afterAll(removeTempDirs);

interface Ack {
  base: number;
  last: number;
  status: string;
}

interface CycleOutput {
  startOffset: number;
  acks: Ack[];
  /** Largest committed offset the child reported. */
  committed: number;
  lines: number;
}

/** Runs the child on dir, SIGKILLs it `delayMs` after it opened the log; returns its complete output lines. */
function runAndKill(dir: string, mode: Mode, seed: number, delayMs: number, preallocateBytes: number | 'default'): Promise<CycleOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, dir, mode, String(seed), String(preallocateBytes)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    let stderr = '';
    let opened = false;
    let timer: NodeJS.Timeout | undefined;
    const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      buf += d;
      if (!opened && /^O \d+$/m.test(buf)) {
        opened = true;
        timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      if (timer) clearTimeout(timer);
      if (signal !== 'SIGKILL') {
        reject(new Error(`child ended by itself (code ${code}, signal ${signal}): ${stderr}`));
        return;
      }
      // Only complete lines count: the last one may have been cut by the kill.
      const lines = buf.split('\n').slice(0, -1);
      const o: CycleOutput = { startOffset: -1, acks: [], committed: 0, lines: lines.length };
      for (const line of lines) {
        const f = line.split(' ');
        if (f[0] === 'O') o.startOffset = Number(f[1]);
        else if (f[0] === 'A') o.acks.push({ base: Number(f[1]), last: Number(f[2]), status: f[3]! });
        else if (f[0] === 'C') o.committed = Math.max(o.committed, Number(f[1]));
      }
      if (o.startOffset < 0) {
        reject(new Error(`child was killed before it opened the log: ${stderr}`));
        return;
      }
      resolve(o);
    });
  });
}

/** What must survive: the offset below which every record must be present. */
function mustSurvive(mode: Mode, o: CycleOutput): number {
  let need = o.startOffset;
  for (const a of o.acks) {
    if (mode === 'sync' && (a.status === 'flushed' || a.status === 'committed')) need = Math.max(need, a.last + 1);
    if (mode === 'async') {
      expect(a.status).toBe('committed');
      need = Math.max(need, a.last + 1);
    }
    if (mode === 'buffered') expect(a.status).toBe('written');
    if (mode === 'sync') expect(['flushed', 'committed']).toContain(a.status);
  }
  return Math.max(need, o.committed);
}

/** Whether the partition's last `.log` ends in 64 zero bytes (preallocated space; data never does in practice). */
function zeroTail(dir: string): boolean {
  const logs = fs.readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
  if (logs.length === 0) return false;
  const bytes = fs.readFileSync(path.join(dir, logs[logs.length - 1]!));
  return bytes.length >= 64 && bytes.subarray(bytes.length - 64).every((b) => b === 0);
}

async function trial(mode: Mode, seed: number): Promise<{ acked: number; survived: number; codecs: Set<number>; preallocated: boolean; defaultZeros: boolean }> {
  const rnd = rng(seed);
  // A third of the trials keep an explicit size of zeros written ahead of the active segment, a
  // third none (explicit 0), a third the default (zeros ahead in sync mode, none otherwise): after
  // the kill the zero tail must read as the log's end, silently.
  const preallocateBytes = seed % 3 === 0 ? 512 + (seed % 40_000) : seed % 3 === 1 ? 0 : 'default';
  const preallocated = preallocateBytes === 'default' ? mode === 'sync' : preallocateBytes > 0;
  const dir = path.join(makeTempDir('logtool-kill9-'), 't-0');
  const cycles = rnd() < 0.35 ? 2 : 1;
  let expectedStart = 0;
  let acked = 0;
  let survived = 0;
  const codecs = new Set<number>();
  let defaultZeros = false;
  for (let c = 0; c < cycles; c++) {
    const delayMs = rnd() < 0.1 ? 0 : Math.floor(5 + rnd() * 250);
    const o = await runAndKill(dir, mode, seed * 31 + c, delayMs, preallocateBytes);
    expect(o.startOffset).toBe(expectedStart);
    if (preallocateBytes === 'default' && zeroTail(dir)) defaultZeros = true;
    const need = mustSurvive(mode, o);
    const warnings: string[] = [];
    const log = Log.open(dir, { onWarning: (w) => warnings.push(w.message) });
    try {
      expect(log.loadReport.cleanShutdown).toBe(false);
      // The zero tail is no damage: nothing cut, no warning about the .log's bytes (a kill between
      // a roll's .log and its index files is warned about as a missing index, with or without).
      if (preallocated) {
        expect(log.loadReport.truncated, `preallocated ${preallocateBytes} bytes (seed ${seed})`).toEqual([]);
        expect(warnings.filter((w) => !/^missing; the segment is recovered/.test(w)), `preallocated ${preallocateBytes} bytes (seed ${seed})`).toEqual([]);
      }
      let n = 0;
      for (const r of log.read()) {
        expect(r.offset).toBe(n);
        const want = recordFor(n);
        if (!r.key!.equals(want.key) || !r.value!.equals(want.value)) throw new Error(`record ${n} is not intact after the crash (${mode}, seed ${seed})`);
        n++;
      }
      expect(log.nextOffset).toBe(n);
      for (const b of log.reader().batches()) codecs.add(b.entry.compression);
      if (n < need) throw new Error(`${mode}: records up to ${need - 1} were acknowledged (or committed) but only ${n} survived (seed ${seed}, kill after ${delayMs} ms, warnings: ${warnings.join('; ')})`);
      expectedStart = n;
      acked += need - o.startOffset;
      survived = n;
    } finally {
      await log.close();
    }
  }
  return { acked, survived, codecs, preallocated, defaultZeros };
}

describe.each(MODES.map((m, i) => [m, trialsFor(i)] as const))('kill -9 while appending in %s mode', (mode, trials) => {
  it(`${trials} trials: every acknowledged record the mode promises survives, intact, as a prefix`, async () => {
    // Kill moments come from the clock anyway, so each run explores new seeds; every one is
    // printed, and LOGTOOL_KILL_SEED=<base> replays the child's choices of a failed run.
    const base = Number(process.env.LOGTOOL_KILL_SEED ?? Date.now() % 100_000);
    console.log(`kill -9 ${mode}: ${trials} trials, LOGTOOL_KILL_SEED=${base}`);
    let acked = 0;
    let preallocated = 0;
    let defaultZeros = 0;
    const codecs = new Set<number>();
    // On a loaded machine a kill may land before the child acknowledged much: past the planned
    // trials, more run (at most 3× as many) until the coverage checks below have something to see.
    // In sync mode, some kill must land on the default preallocation's zeros.
    const covered = (): boolean => acked > 0 && [2, 3, 4].every((c) => codecs.has(c)) && (mode !== 'sync' || defaultZeros > 0);
    let t = 0;
    for (; t < trials || (!covered() && t < trials * 4); t++) {
      const seed = base + t * 7919 + MODES.indexOf(mode);
      try {
        const r = await trial(mode, seed);
        acked += r.acked;
        if (r.preallocated) preallocated++;
        if (r.defaultZeros) defaultZeros++;
        for (const c of r.codecs) codecs.add(c);
      } catch (e) {
        throw new Error(`kill -9 ${mode} trial ${t} (LOGTOOL_KILL_SEED=${base}, trial seed ${seed}): ${(e as Error).message}`, { cause: e });
      }
    }
    // The trials did exercise something: some appends were acknowledged before the kills.
    expect(acked).toBeGreaterThan(0);
    console.log(`kill -9 ${mode}: ${preallocated} of ${t} trials with preallocation, ${defaultZeros} killed over the default's zeros`);
    if (mode === 'sync') expect(defaultZeros, 'no sync trial with the default preallocation was killed over its zeros').toBeGreaterThan(0);
    else expect(defaultZeros).toBe(0);
    // … and they were killed amid snappy, lz4 and zstd batches too (written through the library).
    for (const c of [2, 3, 4]) expect(codecs, `no batch with codec ${c} survived any trial`).toContain(c);
  }, Math.max(240_000, trials * 4 * 20_000));
});

describe('kill -9 of `logtool append` writing compressed batches', () => {
  it.each(['snappy', 'lz4', 'zstd'])('%s: every batch the CLI acknowledged survives, intact, as a prefix', async (codec) => {
    const dir = path.join(makeTempDir('logtool-kill9-cli-'), 't-0');
    const child = spawn(process.execPath, [cliPath, 'append', dir, '--lines', '--json', '--flush', 'sync', '--compression', codec, '--batch-records', '20', '--segment-bytes', '4096'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const closed = new Promise<string | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
    child.stdin.on('error', () => {}); // the pipe breaks when the child dies
    // Feed lines until a few batches are acknowledged, then keep feeding and kill mid-stream.
    const acked = new Promise<void>((resolve) => {
      child.stdout.on('data', (d: string) => {
        out += d;
        if (out.split('\n').length > 6) resolve();
      });
    });
    let next = 0;
    const feeder = setInterval(() => {
      if (!child.stdin.writable) return;
      child.stdin.write(Array.from({ length: 15 }, () => `line-${next++}-${'y'.repeat(next % 97)}`).join('\n') + '\n');
    }, 2);
    try {
      await Promise.race([acked, closed.then(() => Promise.reject(new Error(`append ended early: ${stderr}`)))]);
      await new Promise((r) => setTimeout(r, 20));
      child.kill('SIGKILL');
      expect(await closed).toBe('SIGKILL');
    } finally {
      clearInterval(feeder);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    // Only complete lines are acknowledgements.
    const acks = out.split('\n').slice(0, -1).map((l) => JSON.parse(l) as { lastOffset: number; status: string });
    expect(acks.length).toBeGreaterThan(3);
    for (const a of acks) expect(a.status).toBe('flushed');
    const need = Math.max(...acks.map((a) => a.lastOffset)) + 1;
    const log = Log.open(dir);
    try {
      let n = 0;
      for (const r of log.read()) {
        expect(r.offset).toBe(n);
        expect(r.value?.toString()).toBe(`line-${n}-${'y'.repeat((n + 1) % 97)}`);
        n++;
      }
      expect(n).toBeGreaterThanOrEqual(need);
      const codecs = new Set([...log.reader().batches()].map((b) => b.entry.compression));
      expect([...codecs]).toEqual([{ snappy: 2, lz4: 3, zstd: 4 }[codec]]);
      console.log(`kill -9 append --compression ${codec}: ${acks.length} acknowledged batches (${need} records) all survived; ${n} records after recovery`);
    } finally {
      await log.close();
    }
  });
});
