/**
 * What a bench scenario is and what it returns. A scenario is `{ name, baselineName, run(ctx) }`;
 * the runner (runner.ts) turns its raw result into records/s, MB/s, latency percentiles, peak RSS
 * and the ratio to its baseline. Baselines (baselines.ts) are scenarios too: raw Node.js loops
 * that bound what the engine can reach on this machine, measured in the same run.
 *
 * Adding a scenario written elsewhere (for example `export async function benchRecovery(ctx)` in
 * recovery.ts) is one line in the list of scenarios.ts:
 *   { name: 'recovery', baselineName: 'raw-read-crc', ratioMetric: 'mbPerSec', run: benchRecovery },
 */

export interface BenchContext {
  /** A fresh scratch directory for this scenario, removed after it. */
  readonly dir: string;
  /** Shared by all scenarios of one run (datasets built once, reused by later scenarios). */
  readonly dataDir: string;
  /** `--quick`: a smoke run of a few seconds (CI checks that bench works, never its speed). */
  readonly quick: boolean;
  /** Records per throughput scenario (`--records`); scenarios scale their work from it. */
  readonly records: number;
  /** Upper bound on one scenario's measured phase in ms (`--duration`). */
  readonly durationMs: number;
  /** Reports progress of the measured phase, 0..1 (drives the spinner; cheap to call often). */
  progress(fraction: number): void;
  /** A partition directory path (`<name>`, default `bench-0`) inside `dir`, not yet created. */
  partitionDir(name?: string): string;
}

/** What a scenario measured. Only the measured phase counts (not setup or warm-up). */
export interface ScenarioResult {
  /** Records processed in the measured phase. */
  records: number;
  /** Payload bytes (keys + values) processed in the measured phase; the MB/s numerator. */
  bytes: number;
  /** Duration of the measured phase. */
  seconds: number;
  /** Latency of each operation in ms (an append, a lookup, a chunk of records — see opUnit). */
  latenciesMs: LatencyRecorder;
  /** What one latency sample is ("append of 1 record", "1000 records", …). */
  opUnit: string;
  /** Scenario-specific numbers (fsyncs, group sizes, batch size …), copied into the report. */
  extra?: Record<string, number | string | boolean>;
  /** Peak RSS in MiB of the process measured when that is a child (whole-process scenarios); default the runner's own. */
  peakRssMB?: number;
}

export type RatioMetric = 'recordsPerSec' | 'mbPerSec' | 'p50Ms' | 'p99Ms' | 'peakRssMB';

/** A target from the issue, judged on one bench run (never by tests). */
export interface BenchTarget {
  /** ratioToBaseline must be at least this … */
  ratioAtLeast?: number;
  /** … or at most this (latency ratios). */
  ratioAtMost?: number;
  /** Absolute floor on records/s. */
  recordsPerSecAtLeast?: number;
  /** Absolute ceiling on peak RSS in MiB. */
  peakRssMBAtMost?: number;
}

export interface BenchScenario {
  name: string;
  /** One line for `bench --list` and the docs. */
  description?: string;
  /** True for raw baselines (they have no baseline of their own). */
  baseline?: boolean;
  /** Name of the baseline (or earlier scenario) this one is judged against. */
  baselineName?: string;
  /**
   * Scenarios read beside this one, run with it when `--scenarios` selects it (the thread-pool
   * fdatasync baseline beside a sync scenario, so the report shows what the hop costs).
   */
  shownWith?: string[];
  /** Which metric the ratio compares (scenario / baseline). Default recordsPerSec. */
  ratioMetric?: RatioMetric;
  target?: BenchTarget;
  run(ctx: BenchContext): Promise<ScenarioResult>;
}

/** One row of the report (and of `bench --json`). */
export interface ScenarioReport {
  name: string;
  kind: 'baseline' | 'scenario';
  recordsPerSec: number;
  mbPerSec: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  /** The baseline's name; null for baselines. */
  baseline: string | null;
  /** scenario / baseline on ratioMetric; null for baselines or when the baseline did not run. */
  ratioToBaseline: number | null;
  ratioMetric: RatioMetric | null;
  /** Peak resident set of the process that ran the scenario (MB). */
  peakRssMB: number;
  records: number;
  seconds: number;
  ops: number;
  opUnit: string;
  target: BenchTarget | null;
  /** Whether the target is met in this run; null without a target. */
  meetsTarget: boolean | null;
  [extra: string]: unknown;
}

/** Growable Float64Array of latency samples (ms); percentiles by sorting a copy once. */
export class LatencyRecorder {
  private data = new Float64Array(1024);
  private n = 0;

  record(ms: number): void {
    if (this.n === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.n++] = ms;
  }

  get count(): number {
    return this.n;
  }

  /**
   * Counts in `buckets` log2 buckets: bucket i holds samples in (fromMs·2^i, fromMs·2^(i+1)], the
   * first also everything below, the last everything above (the report's latency histogram).
   */
  histogram(fromMs = 1 / 64, buckets = 20): { fromMs: number; counts: number[] } {
    const counts = new Array<number>(buckets).fill(0);
    for (let i = 0; i < this.n; i++) {
      const ms = this.data[i]!;
      const b = Math.ceil(Math.log2(ms / fromMs)) - 1;
      counts[Math.max(0, Math.min(buckets - 1, b))]!++;
    }
    return { fromMs, counts };
  }

  /** p in [0, 1]; nearest-rank. 0 when empty. */
  percentiles(ps: readonly number[]): number[] {
    if (this.n === 0) return ps.map(() => 0);
    const sorted = this.data.slice(0, this.n).sort();
    return ps.map((p) => sorted[Math.min(this.n - 1, Math.max(0, Math.ceil(p * this.n) - 1))]!);
  }
}

/** Milliseconds from a monotonic clock. */
export const nowMs = (): number => performance.now();

/**
 * The result of a scenario measured as one run (a whole recovery, a whole compaction, a whole
 * read of a log): its single latency sample is the run itself.
 */
export function singleRunResult(
  run: { records: number; bytes: number; seconds: number },
  opUnit: string,
  extra: Record<string, number | string | boolean> = {},
): ScenarioResult {
  const latenciesMs = new LatencyRecorder();
  latenciesMs.record(run.seconds * 1000);
  return { records: run.records, bytes: run.bytes, seconds: run.seconds, latenciesMs, opUnit, extra };
}

/**
 * Times `one()` op by op: `warmupOps` untimed calls, then up to `maxOps` timed ones or until
 * ctx.durationMs has passed, each latency recorded. `afterWarmup` resets the caller's counters.
 */
export function timeOps(
  ctx: Pick<BenchContext, 'durationMs' | 'progress'>,
  maxOps: number,
  one: () => void,
  opts: { warmupOps?: number; afterWarmup?: () => void; progressEvery?: number } = {},
): { ops: number; seconds: number; latenciesMs: LatencyRecorder } {
  const lat = new LatencyRecorder();
  for (let i = 0; i < Math.min(opts.warmupOps ?? 100, maxOps); i++) one();
  opts.afterWarmup?.();
  const every = opts.progressEvery ?? 256;
  const t0 = nowMs();
  const deadline = t0 + ctx.durationMs;
  let ops = 0;
  while (ops < maxOps) {
    const a = nowMs();
    one();
    const b = nowMs();
    lat.record(b - a);
    ops++;
    if (ops % every === 0) {
      ctx.progress(Math.max(ops / maxOps, (b - t0) / ctx.durationMs));
      if (b > deadline) break;
    }
  }
  return { ops, seconds: (nowMs() - t0) / 1000, latenciesMs: lat };
}

/** The median of `xs` (the mean of the middle two for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
