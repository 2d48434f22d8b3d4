/**
 * `logtool bench [dir]`: the engine's scenarios and the raw baselines that bound them, measured
 * in one run on a scratch directory; a table (or --json) with records/s, MB/s, latency
 * percentiles, peak RSS and each scenario's ratio to its baseline. Ratios are what to judge.
 */
import { Command } from 'commander';
import { LogtoolError, realIO } from '../api/format.js';
import { benchScenarios } from '../bench/scenarios.js';
import { describeTarget, runBench, DEFAULT_DURATION_MS, DEFAULT_RECORDS, type BenchReport } from '../bench/runner.js';
import { compareReports, readSavedReport, type ComparisonRow } from '../bench/compare.js';
import { renderReportHtml } from '../bench/report-html.js';
import { writeFileAtomic } from '../inspect/log.js';
import { Output } from '../render/output.js';
import { startProgress } from '../render/progress.js';
import { renderTable } from '../render/table.js';
import { parseInteger } from './shared.js';

interface BenchOpts {
  quick?: boolean;
  records?: number;
  duration?: number;
  repeat?: number;
  json?: boolean;
  scenarios?: string;
  list?: boolean;
  keep?: boolean;
  isolate?: boolean;
  compare?: string;
  report?: string;
}

export function benchCommand(): Command {
  const cmd = new Command('bench')
    .description('measure append, flush and read scenarios against raw baselines on this machine')
    .argument('[dir]', 'where to create the scratch directory (default: the OS temp dir); its file system is what gets measured')
    .option('--quick', 'a smoke run of a few seconds (checks that bench works; numbers mean little)')
    .option('--records <n>', `records per throughput scenario (default ${DEFAULT_RECORDS})`, parseInteger('--records', 1000))
    .option('--duration <ms>', `cap on each scenario's measured phase (default ${DEFAULT_DURATION_MS})`, parseInteger('--duration', 10))
    .option('--repeat <n>', 'rounds over all scenarios; each reports its median round and the median of its per-round ratios (default 3, 1 with --quick)', parseInteger('--repeat', 1))
    .option('--scenarios <names>', 'comma-separated scenarios to run (their baselines are added)')
    .option('--list', 'list the scenarios and exit')
    .option('--keep', 'keep the scratch directory')
    .option('--isolate', 'run each scenario in its own child process (the default, except with --quick)')
    .option('--no-isolate', 'run every scenario in this process')
    .option('--json', 'print {"scenarios":[…],"machine":{…}} instead of a table (with "comparison":[…] under --compare)')
    .option('--compare <file>', 'a saved `bench --json` run: print a before/after table of it and this run')
    .option('--report <file>', 'also write one self-contained HTML page of this run: bars, percentiles, histograms, memory')
    .addHelpText(
      'after',
      `
Each scenario is judged by its ratio to the baseline measured in the same run (the "ratio" column:
scenario ÷ baseline on the metric shown; for latency, lower is better). Absolute numbers depend on
the disk, the file system (tmpfs makes fsync free) and whatever else the machine is doing.

Examples:
  logtool bench
  logtool bench /mnt/nvme --records 5000000
  logtool bench --quick --json
  logtool bench --json > before.json; …; logtool bench --compare before.json --report bench.html
  logtool bench --scenarios sync-group-256,sync-1-producer`,
    );
  cmd.action(async (dir: string | undefined, opts: BenchOpts) => {
    const out = new Output();
    if (opts.list) {
      for (const s of benchScenarios) await out.line(`${s.name}\t${s.baseline ? 'baseline' : `vs ${s.baselineName ?? '-'}`}\t${s.description ?? ''}`);
      await out.flush();
      return;
    }
    const only = opts.scenarios?.split(',').map((s) => s.trim()).filter(Boolean);
    if (only) for (const n of only) if (!benchScenarios.some((s) => s.name === n)) throw new LogtoolError('usage', `unknown scenario "${n}" (see bench --list)`);
    // A saved run that cannot be read fails before minutes of measuring.
    const saved = opts.compare === undefined ? undefined : readSavedReport(realIO, opts.compare);
    const progress = startProgress('bench: starting');
    const controller = new AbortController();
    const onSigint = (): void => controller.abort();
    process.once('SIGINT', onSigint);
    let report: BenchReport;
    try {
      report = await runBench({
        dir,
        quick: opts.quick,
        records: opts.records,
        durationMs: opts.duration,
        repeat: opts.repeat,
        only,
        isolate: opts.isolate,
        keep: opts.keep,
        signal: controller.signal,
        onProgress: (text) => progress.update(`bench: ${text}`),
      });
    } catch (e) {
      progress.stop();
      if (controller.signal.aborted) {
        process.exitCode = 130;
        return;
      }
      throw new LogtoolError('io', `bench failed: ${(e as Error).message}`);
    } finally {
      process.off('SIGINT', onSigint);
    }
    progress.succeed(`bench: ${report.scenarios.length} scenarios`);
    const comparison = saved ? compareReports(saved, report) : undefined;
    if (opts.report !== undefined) writeFileAtomic(realIO, opts.report, renderReportHtml(report, comparison), { durable: false });
    if (opts.json) {
      await out.json(comparison ? { ...report, comparison } : report);
      await out.flush();
      return;
    }
    const n = (x: number, d = 0): string => (Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : '-');
    const ms = (x: number): string => (x >= 10 ? n(x, 1) : x >= 0.1 ? n(x, 3) : n(x, 4));
    const rows = report.scenarios.map((s) => [
      s.name,
      n(s.recordsPerSec),
      n(s.mbPerSec, 1),
      ms(s.p50Ms),
      ms(s.p99Ms),
      ms(s.p999Ms),
      n(s.peakRssMB),
      s.baseline ?? '',
      s.ratioToBaseline === null ? '' : `${n(s.ratioToBaseline, s.ratioToBaseline >= 10 ? 1 : 2)} (${s.ratioMetric === 'p99Ms' ? 'p99' : s.ratioMetric === 'p50Ms' ? 'p50' : s.ratioMetric === 'peakRssMB' ? 'RSS' : s.ratioMetric === 'mbPerSec' ? 'MB/s' : 'rec/s'})`,
      describeTarget(s.target),
      s.meetsTarget === null ? '' : s.meetsTarget ? 'yes' : 'NO',
    ]);
    await out.line(renderTable(['scenario', 'records/s', 'MB/s', 'p50 ms', 'p99 ms', 'p999 ms', 'peak RSS MB', 'baseline', 'ratio', 'target', 'met'], rows, out.isTTY));
    const m = report.machine;
    await out.line(
      `machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGB} GB, ${m.platform} ${m.kernel}, Node ${m.node}; scratch ${m.scratchDir} (${m.fsType}); ` +
        `${m.quick ? 'quick, ' : ''}${m.records} records, ≤ ${m.durationMs} ms per scenario, median of ${m.repeat} round${m.repeat === 1 ? '' : 's'}, ratios paired per round`,
    );
    if (comparison) await out.line(`\n${renderComparison(comparison, out.isTTY)}`);
    if (opts.report !== undefined) await out.line(`report: ${opts.report}`);
    await out.flush();
  });
  return cmd;
}

const METRIC_LABEL = { recordsPerSec: 'records/s', mbPerSec: 'MB/s', p50Ms: 'p50 ms', p99Ms: 'p99 ms', peakRssMB: 'peak RSS MB' } as const;

/** The before/after table of --compare. */
function renderComparison(rows: ComparisonRow[], tty: boolean): string {
  const num = (x: number | null): string => (x === null || !Number.isFinite(x) ? '-' : Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en-US') : x.toPrecision(3));
  const body = rows.map((r) => [
    r.name,
    METRIC_LABEL[r.metric],
    num(r.before),
    num(r.after),
    r.change === null ? '' : `${r.change.toFixed(2)}×${r.better === null ? '' : r.better ? ' better' : ' worse'}`,
    num(r.ratioBefore),
    num(r.ratioAfter),
  ]);
  return renderTable(['scenario', 'metric', 'before', 'after', 'after/before', 'ratio before', 'ratio after'], body, tty);
}
