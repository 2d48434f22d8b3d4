/**
 * Compaction benchmark: builds a log of ~1 KiB records whose keys are drawn uniformly from a set
 * of distinctKeyRatio × records keys (10% by default) in a scratch directory, compacts it once
 * with the configured memory bound, and reports MB/s of input cleaned (target ≥ 100 MB/s) and the
 * peak memory seen during compaction against that bound.
 *
 * Memory is sampled by the cleaner every 25 ms (process.memoryUsage): `peakHeapAndBuffersBytes`
 * is the JavaScript heap plus Buffers/ArrayBuffers (what the cleaner allocates), `peakRssBytes`
 * the whole process; both are also given as the growth over the moment compaction started.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Log } from '../engine/log/log.js';
import { DEFAULT_CLEANER_MEMORY_BYTES } from '../engine/cleaner/cleaner.js';

export interface CompactionBenchOptions {
  /** Parent of the scratch directory (default the OS temp dir). */
  scratchParent?: string;
  /** Size of the log to build (default 256 MiB). */
  totalBytes?: number;
  /** Value bytes per record (default 1000: ~1 KiB per record with key and framing). */
  valueBytes?: number;
  /** Distinct keys as a fraction of records (default 0.1). */
  distinctKeyRatio?: number;
  recordsPerBatch?: number;
  /** Cleaner memory bound (default 128 MiB). */
  maxMemoryBytes?: number;
  /** segment.bytes of the built log (default 64 MiB). */
  segmentBytes?: number;
  /**
   * Size of a log of the same shape built and compacted first, untimed (default 0: none): the
   * cleaner's modules loaded, its code compiled and its memory touched, as raw-read-crc warms up
   * with a whole untimed pass.
   */
  warmUpBytes?: number;
  /** Keep the scratch directory (default: removed). */
  keep?: boolean;
  /** Called while building and cleaning (phase and fraction done). */
  onProgress?: (phase: 'build' | 'compact', fraction: number) => void;
}

export interface CompactionBenchResult {
  inputBytes: number;
  inputRecords: number;
  distinctKeys: number;
  recordBytes: number;
  outputBytes: number;
  recordsRemoved: number;
  recordsRetained: number;
  passes: number;
  seconds: number;
  /** CPU time (user + system) the compaction used: less sensitive to a busy machine than `seconds`. */
  cpuSeconds: number;
  /** Input bytes of the cleaned range per second, in MB (10^6 bytes). */
  mbPerSecond: number;
  mbPerCpuSecond: number;
  targetMbPerSecond: number;
  meetsTarget: boolean;
  memoryBoundBytes: number;
  /** Offset map plus I/O buffers the cleaner sized itself to. */
  accountedBytes: number;
  offsetMapBytes: number;
  heapAndBuffersBeforeBytes: number;
  peakHeapAndBuffersBytes: number;
  peakHeapAndBuffersGrowthBytes: number;
  rssBeforeBytes: number;
  peakRssBytes: number;
  peakRssGrowthBytes: number;
  /** Growth of heap + buffers during compaction stayed under the bound. */
  withinBound: boolean;
  scratchDir: string;
}

const TARGET_MB_PER_S = 100;

export async function benchCompaction(opts: CompactionBenchOptions = {}): Promise<CompactionBenchResult> {
  const totalBytes = opts.totalBytes ?? 256 * 1024 * 1024;
  const valueBytes = opts.valueBytes ?? 1000;
  const ratio = opts.distinctKeyRatio ?? 0.1;
  const perBatch = opts.recordsPerBatch ?? 100;
  const bound = opts.maxMemoryBytes ?? DEFAULT_CLEANER_MEMORY_BYTES;
  const scratch = fs.mkdtempSync(path.join(opts.scratchParent ?? os.tmpdir(), 'logtool-bench-compaction-'));
  const dir = path.join(scratch, 'bench-0');
  try {
    // ~1 KiB per record: value + key (~12 bytes) + record framing (~10) and batch overhead.
    const recordBytes = valueBytes + 24;
    const warmUpBytes = opts.warmUpBytes ?? 0;
    if (warmUpBytes > 0) {
      const warmDir = path.join(scratch, 'warm-0');
      const warmRecords = Math.max(perBatch, Math.floor(warmUpBytes / recordBytes));
      await buildKeyedLog(warmDir, warmRecords, Math.max(1, Math.floor(warmRecords * ratio)), opts);
      const warmLog = Log.open(warmDir);
      try {
        await warmLog.compact({ maxMemoryBytes: bound, deleteDelayMs: 0 });
      } finally {
        await warmLog.close();
      }
      fs.rmSync(warmDir, { recursive: true, force: true });
    }
    const records = Math.max(perBatch, Math.floor(totalBytes / recordBytes));
    const distinct = Math.max(1, Math.floor(records * ratio));
    const appended = await buildKeyedLog(dir, records, distinct, opts, (f) => opts.onProgress?.('build', f));

    const cleanLog = Log.open(dir);
    try {
      const before = process.memoryUsage();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const report = await cleanLog.compact({
        maxMemoryBytes: bound,
        deleteDelayMs: 0,
        onProgress: (p) => opts.onProgress?.('compact', p.bytesTotal > 0 ? p.bytesDone / p.bytesTotal : 0),
      });
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const cpuSeconds = (cpu.user + cpu.system) / 1e6;
      const heapBefore = before.heapUsed + before.external;
      const growth = report.memory.peakHeapAndBuffersBytes - heapBefore;
      const mbPerSecond = report.bytesBefore / 1e6 / seconds;
      return {
        inputBytes: report.bytesBefore,
        inputRecords: appended,
        distinctKeys: distinct,
        recordBytes: Math.round(report.bytesBefore / appended),
        outputBytes: report.bytesAfter,
        recordsRemoved: report.recordsRemoved,
        recordsRetained: report.recordsRetained,
        passes: report.passes,
        seconds,
        cpuSeconds,
        mbPerSecond,
        mbPerCpuSecond: report.bytesBefore / 1e6 / cpuSeconds,
        targetMbPerSecond: TARGET_MB_PER_S,
        meetsTarget: mbPerSecond >= TARGET_MB_PER_S,
        memoryBoundBytes: bound,
        accountedBytes: report.memory.accountedBytes,
        offsetMapBytes: report.offsetMap.memoryBytes,
        heapAndBuffersBeforeBytes: heapBefore,
        peakHeapAndBuffersBytes: report.memory.peakHeapAndBuffersBytes,
        peakHeapAndBuffersGrowthBytes: Math.max(0, growth),
        rssBeforeBytes: before.rss,
        peakRssBytes: report.memory.peakRssBytes,
        peakRssGrowthBytes: Math.max(0, report.memory.peakRssBytes - before.rss),
        withinBound: growth <= bound,
        scratchDir: scratch,
      };
    } finally {
      await cleanLog.close();
    }
  } finally {
    if (!opts.keep) fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Builds the bench's log in `dir`: `records` records of opts.valueBytes-byte values whose keys are
 * drawn uniformly from `distinct` keys, in batches of opts.recordsPerBatch, then one more batch in a
 * new segment so that every record above is cleanable. Returns the records appended.
 */
async function buildKeyedLog(dir: string, records: number, distinct: number, opts: CompactionBenchOptions, onProgress?: (fraction: number) => void): Promise<number> {
  const valueBytes = opts.valueBytes ?? 1000;
  const perBatch = opts.recordsPerBatch ?? 100;
  const log = Log.open(dir, { config: { segmentBytes: opts.segmentBytes ?? 64 * 1024 * 1024, flushMode: 'async', cleanupPolicy: 'compact' } });
  let appended = 0;
  try {
    const pool = Buffer.alloc(valueBytes + 4096);
    let seed = 0x2545f491;
    const rand = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 4294967296;
    };
    for (let i = 0; i < pool.length; i++) pool[i] = Math.floor(rand() * 256);
    const t = Date.now();
    while (appended < records) {
      const n = Math.min(perBatch, records - appended);
      const batch = [];
      for (let i = 0; i < n; i++) {
        const k = Math.floor(rand() * distinct);
        const at = Math.floor(rand() * 4096);
        batch.push({ key: Buffer.from(`key-${k}`), value: pool.subarray(at, at + valueBytes), timestamp: t + appended + i });
      }
      await log.append(batch);
      appended += n;
      if (appended % (perBatch * 200) === 0) onProgress?.(appended / records);
    }
    // An extra batch rolls a new active segment so everything appended above is cleanable.
    log.roll();
    await log.append([{ key: Buffer.from('end'), value: Buffer.from('end') }]);
    await log.flush();
  } finally {
    await log.close();
  }
  return appended;
}

/** The result as lines for a human (what `logtool bench` can print). */
export function describeCompactionBench(r: CompactionBenchResult): string[] {
  const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
  return [
    `compaction: ${mib(r.inputBytes)} of ${r.recordBytes}-byte records, ${r.distinctKeys} distinct keys (${r.inputRecords} records) → ${mib(r.outputBytes)} in ${r.passes} pass(es)`,
    `  ${r.mbPerSecond.toFixed(1)} MB/s of input cleaned (${r.seconds.toFixed(2)} s; ${r.mbPerCpuSecond.toFixed(1)} MB per CPU second), target ≥ ${r.targetMbPerSecond} MB/s: ${r.meetsTarget ? 'met' : 'NOT met'}`,
    `  memory bound ${mib(r.memoryBoundBytes)}: cleaner sized itself to ${mib(r.accountedBytes)} (offset map ${mib(r.offsetMapBytes)}); measured growth heap+buffers ${mib(r.peakHeapAndBuffersGrowthBytes)}, RSS ${mib(r.peakRssGrowthBytes)} — ${r.withinBound ? 'within the bound' : 'OVER the bound'}`,
  ];
}
