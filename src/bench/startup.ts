/**
 * Start-up as a user meets it (issue 15): `logtool --help` and a one-record `read` as whole
 * processes against `node -e 0`, the least a Node.js process costs. Each scenario alternates its
 * command with `node -e 0` so both see the same load, and reports medians; the ratio column is the
 * median against the `startup-node` baseline, `interleavedRatio` the one against its own runs.
 */
import { Log } from '../engine/log/log.js';
import { cliPath, median, runNode } from './processes.js';
import { LatencyRecorder, type BenchContext, type BenchScenario, type ScenarioResult } from './types.js';

const NODE_ONLY = ['-e', '0'];

function processes(ctx: BenchContext): number {
  return ctx.quick ? 3 : 21;
}

/** Runs `args` (and, with `alternate`, `node -e 0` before each) `processes(ctx)` times. */
async function timeProcesses(ctx: BenchContext, args: readonly string[], alternate: boolean): Promise<ScenarioResult> {
  const n = processes(ctx);
  await runNode(args); // warm the page cache, not measured
  const lat = new LatencyRecorder();
  const nodeMs: number[] = [];
  const ms: number[] = [];
  let seconds = 0;
  for (let i = 0; i < n; i++) {
    if (alternate) nodeMs.push((await runNode(NODE_ONLY)).ms);
    const r = await runNode(args);
    ms.push(r.ms);
    lat.record(r.ms);
    seconds += r.ms / 1000;
    ctx.progress((i + 1) / n);
  }
  const extra: Record<string, number> = { medianMs: round(median(ms)) };
  if (alternate) {
    extra.nodeMedianMs = round(median(nodeMs));
    extra.interleavedRatio = round(median(ms) / median(nodeMs));
  }
  return { records: n, bytes: 0, seconds, latenciesMs: lat, opUnit: 'whole process', extra };
}

const round = (x: number): number => Math.round(x * 100) / 100;

/** A partition with one record, for the one-record read. */
async function oneRecordLog(ctx: BenchContext): Promise<string> {
  const dir = ctx.partitionDir('startup-0');
  const log = Log.open(dir, { rememberConfig: false });
  try {
    await log.append([{ key: null, value: Buffer.from('hello') }]);
  } finally {
    await log.close();
  }
  return dir;
}

export const startupScenarios: BenchScenario[] = [
  {
    name: 'startup-node',
    description: '`node -e 0` as a whole process, median of several (the least a Node.js command costs)',
    baseline: true,
    run: (ctx) => timeProcesses(ctx, NODE_ONLY, false),
  },
  {
    name: 'startup-help',
    description: '`logtool --help` as a whole process, median (ratio: median wall time vs node -e 0)',
    baselineName: 'startup-node',
    ratioMetric: 'p50Ms',
    target: { ratioAtMost: 2 },
    run: (ctx) => timeProcesses(ctx, [cliPath, '--help'], true),
  },
  {
    name: 'startup-read-1',
    description: '`logtool read` of a one-record partition as a whole process, median',
    baselineName: 'startup-node',
    ratioMetric: 'p50Ms',
    target: { ratioAtMost: 2 },
    run: async (ctx) => timeProcesses(ctx, [cliPath, 'read', await oneRecordLog(ctx)], true),
  },
];
