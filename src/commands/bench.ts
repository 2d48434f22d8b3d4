/**
 * `logtool bench [dir]`: the engine's scenarios and the raw baselines that bound them, measured
 * in one run on a scratch directory; a table (or --json) with records/s, MB/s, latency
 * percentiles, peak RSS and each scenario's ratio to its baseline. Ratios are what to judge.
 */
import { Command } from 'commander';
import { LogtoolError } from '../engine/errors.js';
import { benchScenarios } from '../bench/scenarios.js';
import { describeTarget, runBench, DEFAULT_DURATION_MS, DEFAULT_RECORDS, type BenchReport } from '../bench/runner.js';
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
}

export function benchCommand(): Command {
  const cmd = new Command('bench')
    .description('measure append, flush and read scenarios against raw baselines on this machine')
    .argument('[dir]', 'where to create the scratch directory (default: the OS temp dir); its file system is what gets measured')
    .option('--quick', 'a smoke run of a few seconds (checks that bench works; numbers mean little)')
    .option('--records <n>', `records per throughput scenario (default ${DEFAULT_RECORDS})`, parseInteger('--records', 1000))
    .option('--duration <ms>', `cap on each scenario's measured phase (default ${DEFAULT_DURATION_MS})`, parseInteger('--duration', 10))
    .option('--repeat <n>', 'rounds over all scenarios; each reports its best round (default 3, 1 with --quick)', parseInteger('--repeat', 1))
    .option('--scenarios <names>', 'comma-separated scenarios to run (their baselines are added)')
    .option('--list', 'list the scenarios and exit')
    .option('--keep', 'keep the scratch directory')
    .option('--isolate', 'run each scenario in its own child process (the default, except with --quick)')
    .option('--no-isolate', 'run every scenario in this process')
    .option('--json', 'print {"scenarios":[…],"machine":{…}} instead of a table')
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
    if (opts.json) {
      await out.json(report);
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
        `${m.quick ? 'quick, ' : ''}${m.records} records, ≤ ${m.durationMs} ms per scenario, best of ${m.repeat} round${m.repeat === 1 ? '' : 's'}`,
    );
    await out.flush();
  });
  return cmd;
}
