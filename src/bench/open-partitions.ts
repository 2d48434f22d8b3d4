/**
 * Opening a log directory of many partitions (Kafka's LogManager.loadLogs with
 * num.recovery.threads.per.data.dir threads; engine/logdir/log-manager.ts, pooled-load.ts):
 * LogManager.open of 1,000 small partitions (50 with --quick) after a clean shutdown and after an
 * unclean one (no marker, every recovery point 0: every segment validated, its indexes rebuilt),
 * with 1 and with 2 threads. The 1-thread runs are judged against the baseline, a raw read of the
 * same `.log` bytes with every batch's CRC-32C checked (the least a recovery reads and checks, on
 * one thread); the 2-thread runs against the 1-thread run of the same shutdown, so their ratio is
 * the speedup. Only the open is timed (close is reported as closeMs); the page cache is warm.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LogManager } from '../engine/logdir/log-manager.js';
import { CLEAN_SHUTDOWN_FILE, RECOVERY_POINT_CHECKPOINT } from '../engine/checkpoint.js';
import { buildLog, measureRawReadCrc } from './recovery.js';
import { singleRunResult, type BenchContext, type BenchScenario, type ScenarioResult } from './types.js';

interface PartitionsDataset {
  /** The cleanly closed log directory, copied before every measured open. */
  logDir: string;
  partitions: number;
  records: number;
}

const partitionsOf = (ctx: BenchContext): number => (ctx.quick ? 50 : 1000);

/** Builds (once per bench run, in ctx.dataDir) the log directory: copies of one 2-segment partition, closed by a LogManager. */
async function sharedPartitions(ctx: BenchContext): Promise<PartitionsDataset> {
  const n = partitionsOf(ctx);
  const meta = path.join(ctx.dataDir, `open-partitions-${n}.json`);
  if (fs.existsSync(meta)) return JSON.parse(fs.readFileSync(meta, 'utf8')) as PartitionsDataset;
  const logDir = path.join(ctx.dataDir, `open-partitions-${n}`, 'data');
  const first = path.join(logDir, 'bench-0');
  fs.mkdirSync(logDir, { recursive: true });
  const built = await buildLog(first, { totalBytes: 48 * 1024, segments: 2 });
  const files = fs.readdirSync(first);
  for (let i = 1; i < n; i++) {
    const dir = path.join(logDir, `bench-${i}`);
    fs.mkdirSync(dir);
    for (const f of files) fs.copyFileSync(path.join(first, f), path.join(dir, f));
    ctx.progress(i / n / 2);
  }
  // A manager's open and close checkpoints every partition and writes the marker: a clean shutdown.
  await (await LogManager.open([logDir], { recoveryThreadsPerDataDir: 1 })).close();
  const dataset = { logDir, partitions: n, records: built.records * n };
  fs.writeFileSync(meta, JSON.stringify(dataset));
  return dataset;
}

/** The shared directory copied to a scratch one; unclean: no marker, every recovery point 0. */
function scratchCopy(ctx: BenchContext, d: PartitionsDataset, shutdown: 'clean' | 'unclean'): string {
  const logDir = path.join(ctx.dir, 'data');
  fs.cpSync(d.logDir, logDir, { recursive: true });
  if (shutdown === 'unclean') {
    fs.rmSync(path.join(logDir, CLEAN_SHUTDOWN_FILE));
    const entries = Array.from({ length: d.partitions }, (_, i) => `bench ${i} 0\n`);
    fs.writeFileSync(path.join(logDir, RECOVERY_POINT_CHECKPOINT), `0\n${entries.length}\n${entries.join('')}`);
  }
  return logDir;
}

/** The baseline over every partition: `.log` bytes read in 1 MiB chunks, each batch's CRC checked. */
function rawReadAll(logDir: string): { bytes: number; seconds: number; batches: number } {
  let bytes = 0;
  let seconds = 0;
  let batches = 0;
  for (const name of fs.readdirSync(logDir)) {
    if (!name.startsWith('bench-')) continue;
    const t = measureRawReadCrc(path.join(logDir, name));
    bytes += t.bytes;
    seconds += t.seconds;
    batches += t.batches;
  }
  return { bytes, seconds, batches };
}

async function openPartitions(ctx: BenchContext, shutdown: 'clean' | 'unclean', threads: number): Promise<ScenarioResult> {
  const d = await sharedPartitions(ctx);
  const logDir = scratchCopy(ctx, d, shutdown);
  const { bytes } = rawReadAll(logDir); // warms the page cache; the bytes the open covers
  let scanned = 0;
  const t0 = performance.now();
  const m = await LogManager.open([logDir], { recoveryThreadsPerDataDir: threads, onProgress: (p) => ctx.progress(p.done / p.total) });
  const seconds = (performance.now() - t0) / 1000;
  for (const log of m.allLogs()) scanned += log.loadReport.segmentsScanned;
  const t1 = performance.now();
  await m.close();
  const closeMs = Math.round(performance.now() - t1);
  return singleRunResult({ records: d.records, bytes, seconds }, 'open of the log directory', { partitions: d.partitions, threads, segmentsScanned: scanned, closeMs });
}

const NAME = (rest: string): string => `open-1000-partitions-${rest}`;

export const openPartitionsScenarios: BenchScenario[] = [
  {
    name: 'raw-read-crc-1000-partitions',
    description: 'the .log files of 1,000 small partitions read in 1 MiB chunks, every batch CRC-32C checked, one thread (baseline of the opens)',
    baseline: true,
    run: async (ctx) => {
      const d = await sharedPartitions(ctx);
      rawReadAll(d.logDir); // warm the page cache
      const t = rawReadAll(d.logDir);
      return singleRunResult({ records: d.records, bytes: t.bytes, seconds: t.seconds }, 'whole log directory', { partitions: d.partitions, batches: t.batches });
    },
  },
  ...(['clean', 'unclean'] as const).flatMap((shutdown): BenchScenario[] => [
    {
      name: NAME(`${shutdown}-1-thread`),
      description: `LogManager.open of 1,000 partitions after ${shutdown === 'clean' ? 'a clean shutdown' : 'an unclean shutdown (every segment recovered)'}, 1 thread`,
      baselineName: 'raw-read-crc-1000-partitions',
      ratioMetric: 'mbPerSec',
      run: (ctx) => openPartitions(ctx, shutdown, 1),
    },
    {
      name: NAME(`${shutdown}-2-threads`),
      description: `the same open with 2 threads (ratio: speedup over 1 thread)`,
      baselineName: NAME(`${shutdown}-1-thread`),
      ratioMetric: 'mbPerSec',
      run: (ctx) => openPartitions(ctx, shutdown, 2),
    },
  ]),
];
