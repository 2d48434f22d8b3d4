/**
 * Peak memory of whole CLI processes (issue 15): `append` of a large input from a pipe, `read
 * --json` of that log and `verify --deep` of it, each beside the peak RSS of `node -e 0` (what
 * Node.js itself takes). Target: under 100 MiB each for 1 GiB of input. The input size is
 * LOGTOOL_BENCH_MEMORY_BYTES (default 1 GiB; 4 MiB with --quick), in 1,000-byte lines.
 */
import fs from 'node:fs';
import path from 'node:path';
import { payload } from './datasets.js';
import { cliPath, runNode } from './processes.js';
import { singleRunResult, type BenchContext, type BenchScenario, type ScenarioResult } from './types.js';

export const MEMORY_BYTES_ENV = 'LOGTOOL_BENCH_MEMORY_BYTES';
const LINE_BYTES = 1000;
const TARGET_PEAK_RSS_MB = 100;

function inputBytes(ctx: BenchContext): number {
  const fromEnv = Number(process.env[MEMORY_BYTES_ENV]);
  if (Number.isSafeInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return ctx.quick ? 4 << 20 : 1 << 30;
}

/** The input: 1,000-byte lines (999 printable bytes and a newline), written once per run. */
function memoryInput(ctx: BenchContext): { file: string; records: number; bytes: number } {
  const records = Math.max(1, Math.floor(inputBytes(ctx) / LINE_BYTES));
  const file = path.join(ctx.dataDir, `memory-lines-${records}.txt`);
  if (!fs.existsSync(file)) {
    const block = Buffer.concat(Array.from({ length: 64 }, (_, i) => Buffer.concat([payload(LINE_BYTES - 1, i + 1), Buffer.from('\n')])));
    const fd = fs.openSync(`${file}.tmp`, 'w');
    try {
      for (let done = 0; done < records; done += 64) fs.writeSync(fd, block, 0, Math.min(64, records - done) * LINE_BYTES);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(`${file}.tmp`, file);
  }
  return { file, records, bytes: records * LINE_BYTES };
}

const appendArgs = (dir: string): string[] => [cliPath, 'append', dir, '--lines', '--flush', 'async'];

/** The log the read and verify scenarios measure: made by the first append scenario, or here. */
async function memoryLog(ctx: BenchContext): Promise<{ dir: string; records: number; bytes: number }> {
  const input = memoryInput(ctx);
  const dir = path.join(ctx.dataDir, `memory-${input.records}-0`);
  if (!fs.existsSync(dir)) await runNode(appendArgs(dir), { inputFile: input.file });
  return { dir, records: input.records, bytes: input.bytes };
}

async function peakOf(ctx: BenchContext, args: string[], records: number, bytes: number, inputFile?: string): Promise<ScenarioResult> {
  const run = await runNode(args, { peakRssIn: ctx.dir, ...(inputFile ? { inputFile } : {}) });
  ctx.progress(1);
  if (run.peakRssMB === undefined) throw new Error(`no peak RSS reported by ${args.join(' ')}`);
  return { ...singleRunResult({ records, bytes, seconds: run.ms / 1000 }, 'whole process'), peakRssMB: run.peakRssMB };
}

const target = { peakRssMBAtMost: TARGET_PEAK_RSS_MB };

/** The peak RSS of a CLI command (`args` after the CLI, given the log's directory) over the shared log. */
function overMemoryLog(name: string, description: string, args: (dir: string) => string[]): BenchScenario {
  return {
    name,
    description,
    baselineName: 'memory-node',
    ratioMetric: 'peakRssMB',
    target,
    run: async (ctx) => {
      const log = await memoryLog(ctx);
      return peakOf(ctx, [cliPath, ...args(log.dir)], log.records, log.bytes);
    },
  };
}

export const memoryScenarios: BenchScenario[] = [
  {
    name: 'memory-node',
    description: 'peak RSS of `node -e 0` (what Node.js itself takes)',
    baseline: true,
    run: (ctx) => peakOf(ctx, ['-e', '0'], 1, 0),
  },
  {
    name: 'memory-append-pipe',
    description: `peak RSS of \`append --lines --flush async\` of ${MEMORY_BYTES_ENV} (1 GiB) from a pipe`,
    baselineName: 'memory-node',
    ratioMetric: 'peakRssMB',
    target,
    run: async (ctx) => {
      const input = memoryInput(ctx);
      // The first round's log is the one the read and verify scenarios use.
      const shared = path.join(ctx.dataDir, `memory-${input.records}-0`);
      const dir = fs.existsSync(shared) ? ctx.partitionDir() : shared;
      return peakOf(ctx, appendArgs(dir), input.records, input.bytes, input.file);
    },
  },
  overMemoryLog('memory-read-json', 'peak RSS of `read --json` of that log into a pipe', (dir) => ['read', dir, '--json']),
  overMemoryLog('memory-verify-deep', 'peak RSS of `verify --deep` of that log', (dir) => ['verify', dir, '--deep']),
];
