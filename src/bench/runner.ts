/**
 * Runs bench scenarios and turns their raw results into the report: records/s, MB/s, latency
 * percentiles, peak RSS, ratio to the baseline, target met or not.
 *
 * Each scenario runs in its own Node.js process (worker.ts) by default: the peak RSS is then that
 * scenario's own (process.resourceUsage().maxRSS), one scenario's garbage and JIT state do not
 * slow the next, and the parent's event loop stays free for the spinner. `isolate: false` runs
 * them in this process (debugging; peak RSS is then the whole run's).
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchScenarios } from './scenarios.js';
import { median, type BenchContext, type BenchScenario, type BenchTarget, type RatioMetric, type ScenarioReport, type ScenarioResult } from './types.js';

export { median };
import { nativeCrc32c } from '../engine/format/crc32c.js';

export interface BenchOptions {
  /** Parent of the scratch directory (default the OS temp dir); a fresh subdirectory is used. */
  dir?: string;
  quick?: boolean;
  /** Records per throughput scenario (default 2 000 000; 10 000 with quick). */
  records?: number;
  /** Cap on each scenario's measured phase, ms (default 3000; 250 with quick). */
  durationMs?: number;
  /** Only these scenarios (and the baselines they need). */
  only?: string[];
  /**
   * Rounds over the whole list (default 3; 1 with quick). Rounds alternate scenarios and
   * baselines, so a scenario and its baseline run side by side in each round. A scenario's ratio
   * is the median over rounds of its ratio to the baseline *in the same round*, and its rates and
   * latencies are the median round's: a burst of load from elsewhere on the machine, or one fast
   * round of a baseline, does not decide a ratio.
   */
  repeat?: number;
  /** Run each scenario in its own process (default: true, except with quick). */
  isolate?: boolean;
  /** Keep the scratch directory. */
  keep?: boolean;
  /** Progress text for a spinner. */
  onProgress?: (text: string) => void;
  signal?: AbortSignal;
  /** The scenario list (default: every scenario of scenarios.ts). */
  scenarios?: BenchScenario[];
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGB: number;
  platform: string;
  arch: string;
  kernel: string;
  node: string;
  scratchDir: string;
  /** File system of the scratch directory (fsync cost depends on it: tmpfs makes it free). */
  fsType: string;
  /** The add-on CRC-32C of batches above the JS threshold goes to (without sse4_crc32 built, a slower one). */
  crc32c: string;
  isolated: boolean;
  quick: boolean;
  repeat: number;
  records: number;
  durationMs: number;
}

export interface BenchReport {
  scenarios: ScenarioReport[];
  machine: MachineInfo;
}

/** What a worker sends back: the result reduced to numbers. */
export interface ScenarioSummary {
  records: number;
  bytes: number;
  seconds: number;
  ops: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  opUnit: string;
  peakRssMB: number;
  /** Latencies in log2 buckets (LatencyRecorder.histogram), for the HTML report. */
  latencyHistogram: { fromMs: number; counts: number[] };
  extra: Record<string, number | string | boolean>;
}

export interface WorkerRequest {
  type: 'run';
  name: string;
  ctx: { dir: string; dataDir: string; quick: boolean; records: number; durationMs: number };
}

export type WorkerMessage = { type: 'progress'; fraction: number } | { type: 'result'; summary: ScenarioSummary } | { type: 'error'; message: string; stack?: string };

export const DEFAULT_RECORDS = 2_000_000;
export const QUICK_RECORDS = 10_000;
export const DEFAULT_DURATION_MS = 3000;
export const QUICK_DURATION_MS = 250;
export const DEFAULT_REPEAT = 3;

export function summarize(r: ScenarioResult, peakRssMB: number): ScenarioSummary {
  const [p50, p99, p999] = r.latenciesMs.percentiles([0.5, 0.99, 0.999]);
  return {
    records: r.records,
    bytes: r.bytes,
    seconds: r.seconds,
    ops: r.latenciesMs.count,
    p50Ms: p50!,
    p99Ms: p99!,
    p999Ms: p999!,
    opUnit: r.opUnit,
    peakRssMB: r.peakRssMB ?? peakRssMB,
    latencyHistogram: r.latenciesMs.histogram(),
    extra: r.extra ?? {},
  };
}

export function makeContext(init: WorkerRequest['ctx'], onProgress: (fraction: number) => void): BenchContext {
  let last = 0;
  return {
    ...init,
    progress(fraction) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      onProgress(Math.max(0, Math.min(1, fraction)));
    },
    partitionDir(name = 'bench-0') {
      return path.join(init.dir, name);
    },
  };
}

/** The selected scenarios in run order, with every baseline they name and what they are shown with (transitively). */
export function selectScenarios(all: BenchScenario[], only: string[] | undefined): BenchScenario[] {
  if (!only || only.length === 0) return all;
  const byName = new Map(all.map((s) => [s.name, s]));
  const wanted = new Set<string>();
  const add = (name: string): void => {
    const s = byName.get(name);
    if (!s) throw new Error(`unknown scenario "${name}" (see bench --list)`);
    if (wanted.has(name)) return;
    wanted.add(name);
    if (s.baselineName) add(s.baselineName);
    for (const other of s.shownWith ?? []) add(other);
  };
  for (const n of only) add(n);
  return all.filter((s) => wanted.has(s.name));
}

const workerPath = fileURLToPath(new URL('./worker.js', import.meta.url));

function runIsolated(s: BenchScenario, req: WorkerRequest, onProgress: (f: number) => void, signal: AbortSignal | undefined): Promise<ScenarioSummary> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = fork(workerPath, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    } catch (e) {
      reject(e);
      return;
    }
    let settled = false;
    const abort = (): void => {
      child.kill('SIGKILL');
    };
    signal?.addEventListener('abort', abort, { once: true });
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', abort);
      fn();
    };
    child.on('message', (m: WorkerMessage) => {
      if (m.type === 'progress') onProgress(m.fraction);
      else if (m.type === 'result') finish(() => resolve(m.summary));
      else if (m.type === 'error') finish(() => reject(Object.assign(new Error(`${s.name}: ${m.message}`), { stack: m.stack })));
    });
    child.on('error', (e) => finish(() => reject(e)));
    child.on('exit', (code, sig) => {
      finish(() => reject(new Error(signal?.aborted ? 'interrupted' : `${s.name}: worker exited (${sig ?? `code ${code}`}) without a result`)));
    });
    child.send(req);
  });
}

async function runInProcess(s: BenchScenario, req: WorkerRequest, onProgress: (f: number) => void): Promise<ScenarioSummary> {
  const result = await s.run(makeContext(req.ctx, onProgress));
  return summarize(result, process.resourceUsage().maxRSS / 1024);
}

const metricOf = (s: ScenarioSummary, m: RatioMetric): number => (m === 'p99Ms' ? s.p99Ms : m === 'p50Ms' ? s.p50Ms : m === 'peakRssMB' ? s.peakRssMB : m === 'mbPerSec' ? s.bytes / 1e6 / s.seconds : s.records / s.seconds);

function meets(t: BenchTarget | undefined, ratio: number | null, recordsPerSec: number, peakRssMB: number): boolean | null {
  if (!t) return null;
  if ((t.ratioAtLeast !== undefined || t.ratioAtMost !== undefined) && ratio === null) return null;
  if (t.ratioAtLeast !== undefined && ratio! < t.ratioAtLeast) return false;
  if (t.ratioAtMost !== undefined && ratio! > t.ratioAtMost) return false;
  if (t.recordsPerSecAtLeast !== undefined && recordsPerSec < t.recordsPerSecAtLeast) return false;
  if (t.peakRssMBAtMost !== undefined && peakRssMB > t.peakRssMBAtMost) return false;
  return true;
}

function fsTypeOf(dir: string): string {
  try {
    const t = fs.statfsSync(dir).type;
    const names: Record<number, string> = {
      0xef53: 'ext4',
      0x58465342: 'xfs',
      0x9123683e: 'btrfs',
      0x01021994: 'tmpfs',
      0x794c7630: 'overlayfs',
      0x2fc12fc1: 'zfs',
      0x6969: 'nfs',
      0x65735546: 'fuse',
      0xf2f52010: 'f2fs',
    };
    return names[t] ?? `0x${t.toString(16)}`;
  } catch {
    return 'unknown';
  }
}

export async function runBench(opts: BenchOptions = {}): Promise<BenchReport> {
  const quick = opts.quick ?? false;
  const records = opts.records ?? (quick ? QUICK_RECORDS : DEFAULT_RECORDS);
  const durationMs = opts.durationMs ?? (quick ? QUICK_DURATION_MS : DEFAULT_DURATION_MS);
  // A quick run is a smoke test: one process saves a Node.js start per scenario.
  const isolate = opts.isolate ?? !quick;
  const scenarios = selectScenarios(opts.scenarios ?? benchScenarios, opts.only);
  const parent = path.resolve(opts.dir ?? os.tmpdir());
  fs.mkdirSync(parent, { recursive: true });
  const root = fs.mkdtempSync(path.join(parent, 'logtool-bench-'));
  const dataDir = path.join(root, 'data');
  fs.mkdirSync(dataDir);
  const repeat = Math.max(1, opts.repeat ?? (quick ? 1 : DEFAULT_REPEAT));
  const runs = new Map<string, ScenarioSummary[]>();
  try {
    for (let round = 0; round < repeat; round++) {
      for (let i = 0; i < scenarios.length; i++) {
        if (opts.signal?.aborted) throw new Error('interrupted');
        const s = scenarios[i]!;
        const dir = path.join(root, `r${round}-s${String(i).padStart(2, '0')}-${s.name}`);
        fs.mkdirSync(dir);
        const label = `${s.name} (${i + 1}/${scenarios.length}${repeat > 1 ? `, round ${round + 1}/${repeat}` : ''})`;
        opts.onProgress?.(label);
        const onProgress = (f: number): void => opts.onProgress?.(`${label} ${Math.round(f * 100)}%`);
        const req: WorkerRequest = { type: 'run', name: s.name, ctx: { dir, dataDir, quick, records, durationMs } };
        const summary = isolate && (opts.scenarios === undefined || benchScenarios.includes(s)) ? await runIsolated(s, req, onProgress, opts.signal) : await runInProcess(s, req, onProgress);
        runs.set(s.name, [...(runs.get(s.name) ?? []), summary]);
        if (!opts.keep) fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    if (!opts.keep) fs.rmSync(root, { recursive: true, force: true });
  }
  const summaries = new Map<string, ScenarioSummary>([...runs].map(([name, rs]) => [name, medianRound(rs)]));
  const reports: ScenarioReport[] = scenarios.map((s) => {
    const r = summaries.get(s.name)!;
    const rounds = runs.get(s.name)!;
    const recordsPerSec = r.seconds > 0 ? r.records / r.seconds : 0;
    const mbPerSec = r.seconds > 0 ? r.bytes / 1e6 / r.seconds : 0;
    const metric = s.baseline ? null : (s.ratioMetric ?? 'recordsPerSec');
    const baseRounds = s.baselineName ? runs.get(s.baselineName) : undefined;
    const paired = metric && baseRounds ? pairedRatio(rounds, baseRounds, metric) : null;
    const ratio = paired ? paired.median : null;
    // The same metric against what it is shown with (async per-record appends against one write(2) each).
    const shownWith = (s.shownWith ?? []).map((n) => [n, runs.get(n) && metric ? pairedRatio(rounds, runs.get(n)!, metric) : null] as const).filter(([, x]) => x !== null);
    const ratiosToShownWith = shownWith.length > 0 ? Object.fromEntries(shownWith.map(([n, x]) => [n, x!.median])) : undefined;
    return {
      name: s.name,
      kind: s.baseline ? 'baseline' : 'scenario',
      recordsPerSec,
      mbPerSec,
      p50Ms: r.p50Ms,
      p99Ms: r.p99Ms,
      p999Ms: r.p999Ms,
      baseline: s.baselineName ?? null,
      ratioToBaseline: ratio,
      ratioMetric: metric,
      peakRssMB: r.peakRssMB,
      records: r.records,
      seconds: r.seconds,
      ops: r.ops,
      opUnit: r.opUnit,
      target: s.target ?? null,
      meetsTarget: meets(s.target, ratio, recordsPerSec, r.peakRssMB),
      rounds: rounds.length,
      recordsPerSecRounds: rounds.map((x) => Math.round(x.seconds > 0 ? x.records / x.seconds : 0)),
      ...(paired ? { ratioRounds: paired.rounds.map((x) => Number(x.toFixed(4))) } : {}),
      description: s.description ?? '',
      latencyHistogram: r.latencyHistogram,
      ...(ratiosToShownWith ? { ratiosToShownWith } : {}),
      ...r.extra,
    };
  });
  const cpus = os.cpus();
  return {
    scenarios: reports,
    machine: {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model.trim() ?? 'unknown',
      memoryGB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
      platform: process.platform,
      arch: process.arch,
      kernel: os.release(),
      node: process.version,
      scratchDir: parent,
      fsType: fsTypeOf(parent),
      crc32c: nativeCrc32c().addOn,
      isolated: isolate,
      quick,
      repeat,
      records,
      durationMs,
    },
  };
}

/**
 * Several rounds of one scenario as one row: the round of median records/s (its records, bytes,
 * seconds; the lower middle one for an even count), each latency percentile and each numeric extra
 * (a codec's readDecodeToLibrary, fsyncs per append…) the median over rounds, peak RSS the highest
 * (a memory bound must hold in every round).
 */
function medianRound(rounds: ScenarioSummary[]): ScenarioSummary {
  const rate = (x: ScenarioSummary): number => (x.seconds > 0 ? x.records / x.seconds : 0);
  const byRate = [...rounds].sort((a, b) => rate(a) - rate(b));
  const mid = byRate[(byRate.length - 1) >> 1]!;
  const extra: ScenarioSummary['extra'] = { ...mid.extra };
  for (const [k, x] of Object.entries(mid.extra)) {
    if (typeof x !== 'number') continue;
    const xs = rounds.map((r) => r.extra[k]).filter((y): y is number => typeof y === 'number');
    extra[k] = xs.length === rounds.length ? median(xs) : x;
  }
  return {
    ...mid,
    extra,
    p50Ms: median(rounds.map((x) => x.p50Ms)),
    p99Ms: median(rounds.map((x) => x.p99Ms)),
    p999Ms: median(rounds.map((x) => x.p999Ms)),
    peakRssMB: Math.max(...rounds.map((x) => x.peakRssMB)),
  };
}

/**
 * A scenario against its baseline, round by round: round i of the scenario over round i of the
 * baseline (they ran side by side), and the median of those ratios. Rounds whose baseline metric
 * is zero or not finite are left out; null when none is left.
 */
export function pairedRatio(rounds: readonly ScenarioSummary[], baseRounds: readonly ScenarioSummary[], metric: RatioMetric): { median: number; rounds: number[] } | null {
  const ratios: number[] = [];
  for (let i = 0; i < Math.min(rounds.length, baseRounds.length); i++) {
    const denom = metricOf(baseRounds[i]!, metric);
    if (denom > 0 && Number.isFinite(denom)) ratios.push(metricOf(rounds[i]!, metric) / denom);
  }
  return ratios.length === 0 ? null : { median: median(ratios), rounds: ratios };
}

/** "≥ 0.35×, ≥ 2.5M rec/s" */
export function describeTarget(t: BenchTarget | null): string {
  if (!t) return '';
  const parts: string[] = [];
  if (t.ratioAtLeast !== undefined) parts.push(`≥ ${t.ratioAtLeast}×`);
  if (t.ratioAtMost !== undefined) parts.push(`≤ ${t.ratioAtMost}×`);
  if (t.recordsPerSecAtLeast !== undefined) parts.push(`≥ ${t.recordsPerSecAtLeast / 1e6}M rec/s`);
  if (t.peakRssMBAtMost !== undefined) parts.push(`peak RSS < ${t.peakRssMBAtMost} MiB`);
  return parts.join(', ');
}
