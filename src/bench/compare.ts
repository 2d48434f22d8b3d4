/**
 * `bench --compare old.json`: a saved `bench --json` run beside this one, scenario by scenario, on
 * the metric each is judged by (its ratio metric; records/s for baselines), with the ratio to the
 * baseline before and after — so every performance change shows its effect (issue 15).
 */
import { readSmallFile } from '../engine/checkpoint.js';
import { LogtoolError } from '../engine/errors.js';
import type { FileIO } from '../engine/io.js';
import type { BenchReport } from './runner.js';
import type { RatioMetric, ScenarioReport } from './types.js';

/** A saved run is a few KiB; anything past this is not one. */
const MAX_SAVED_REPORT_BYTES = 16 << 20;

export interface ComparisonRow {
  name: string;
  metric: RatioMetric;
  /** The metric in the saved run; null when the scenario was not in it. */
  before: number | null;
  after: number | null;
  /** after ÷ before; null when either is missing or before is 0. */
  change: number | null;
  /** True when the change is for the better (higher throughput, lower latency or memory). */
  better: boolean | null;
  ratioBefore: number | null;
  ratioAfter: number | null;
}

/** Reads a saved `bench --json` output; a file that is not one is a usage error naming it. */
export function readSavedReport(io: FileIO, file: string): BenchReport {
  const bytes = readSmallFile(io, file, MAX_SAVED_REPORT_BYTES);
  if (!bytes) throw new LogtoolError('io', 'no such file (give a saved `bench --json` output)', { file });
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    const at = /position (\d+)/.exec((e as Error).message);
    throw new LogtoolError('usage', `not a saved bench run: not valid JSON (${(e as Error).message})`, { file, ...(at ? { position: Number(at[1]) } : {}) });
  }
  const r = parsed as Partial<BenchReport> | null;
  if (!r || !Array.isArray(r.scenarios) || r.scenarios.some((s) => typeof s?.name !== 'string' || typeof s.recordsPerSec !== 'number')) {
    throw new LogtoolError('usage', 'not a saved bench run: expected {"scenarios":[{"name","recordsPerSec",…}],"machine":{…}} as `bench --json` prints', { file });
  }
  return r as BenchReport;
}

const lowerIsBetter = (m: RatioMetric): boolean => m === 'p50Ms' || m === 'p99Ms' || m === 'peakRssMB';

/** The value of a report row on a metric. */
export function metricValue(s: Pick<ScenarioReport, RatioMetric>, m: RatioMetric): number {
  return s[m];
}

/** A baseline's metric: the one the first scenario judged against it uses. */
function judgedOn(report: BenchReport, baseline: string): RatioMetric | undefined {
  return report.scenarios.find((s) => s.baseline === baseline && s.ratioMetric)?.ratioMetric ?? undefined;
}

/** One row per scenario of this run (in its order), then those only the saved run had. */
export function compareReports(before: BenchReport, after: BenchReport): ComparisonRow[] {
  const old = new Map(before.scenarios.map((s) => [s.name, s]));
  const names = [...after.scenarios.map((s) => s.name), ...before.scenarios.map((s) => s.name).filter((n) => !after.scenarios.some((s) => s.name === n))];
  const now = new Map(after.scenarios.map((s) => [s.name, s]));
  return names.map((name) => {
    const a = now.get(name);
    const b = old.get(name);
    const metric = a?.ratioMetric ?? b?.ratioMetric ?? judgedOn(after, name) ?? judgedOn(before, name) ?? 'recordsPerSec';
    const va = a ? metricValue(a, metric) : null;
    const vb = b ? (metricValue(b, metric) ?? null) : null;
    const change = va !== null && vb !== null && vb > 0 ? va / vb : null;
    return {
      name,
      metric,
      before: vb,
      after: va,
      change,
      better: change === null || change === 1 ? null : lowerIsBetter(metric) ? change < 1 : change > 1,
      ratioBefore: b?.ratioToBaseline ?? null,
      ratioAfter: a?.ratioToBaseline ?? null,
    };
  });
}
