/**
 * Recovery benchmarks (plain async functions; `logtool bench` wires them in):
 *
 *  - full recovery: open of a log with no clean-shutdown marker and every segment to validate
 *    (CRC-32C of every batch, offsets, indexes rebuilt), in MB/s of `.log` bytes;
 *  - rebuild-index: both indexes of every segment rebuilt to temporary files and renamed, MB/s;
 *  - the baseline both are judged against, measured in the same run on the same files: the
 *    `.log` files read in 1 MiB chunks with each batch's CRC-32C checked (target: recovery and
 *    rebuild-index ≥ 60% of it);
 *  - open after a clean shutdown of a 10-segment log vs a full recovery of the same log
 *    (target ≤ 10%).
 *
 * Every measurement runs on a warm page cache (the files were just written or read), so what is
 * compared is CPU and syscall cost, not the disk. Sizes are in bytes; MB is 10^6 bytes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Log } from '../engine/log/log.js';
import { realIO } from '../engine/io.js';
import { DirectoryLock } from '../engine/log/lock.js';
import { CLEAN_SHUTDOWN_FILE } from '../engine/checkpoint.js';
import { crc32c } from '../engine/format/crc32c.js';
import { encodeBatch, RECORD_BATCH_OVERHEAD } from '../engine/format/record-batch.js';
import { rebuildSegmentIndexes } from '../engine/recovery/index-rebuilder.js';
import { defaultLogConfig } from '../engine/config.js';
import { LOG_SUFFIX } from '../engine/segment/segment.js';
import { singleRunResult, type BenchContext, type BenchScenario, type ScenarioResult } from './types.js';

const READ_CHUNK_BYTES = 1 << 20;
export const TARGET_RECOVERY_RATIO = 0.6;
export const TARGET_CLEAN_OPEN_RATIO = 0.1;

export interface BuiltLog {
  /** Partition directory. */
  dir: string;
  bytes: number;
  segments: number;
  records: number;
  batches: number;
}

export interface BuildLogOptions {
  /** Bytes of `.log` data to write (approximately: whole batches). */
  totalBytes: number;
  segmentBytes?: number;
  /** Exactly this many full segments instead (overrides segmentBytes; totalBytes rounds down to fit). */
  segments?: number;
  /** Value bytes per record (default 100). */
  valueBytes?: number;
  /** Records per batch (default 100: ~12 KiB batches, a typical producer batch). */
  recordsPerBatch?: number;
  onProgress?: (fraction: number) => void;
}

export interface Throughput {
  bytes: number;
  seconds: number;
  mbPerSec: number;
}

const throughput = (bytes: number, seconds: number): Throughput => ({ bytes, seconds, mbPerSec: seconds > 0 ? bytes / 1e6 / seconds : 0 });

function logFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((n) => /^\d{20}\.log$/.test(n))
    .sort()
    .map((n) => path.join(dir, n));
}

/**
 * Writes a log of about totalBytes through the engine (async mode: no fsync per append) and
 * closes it cleanly. One batch is encoded once and appended again and again (appendEncoded
 * rewrites its base offset, which the CRC does not cover), so building costs little CPU.
 */
export async function buildLog(dir: string, opts: BuildLogOptions): Promise<BuiltLog> {
  fs.rmSync(dir, { recursive: true, force: true });
  const valueBytes = opts.valueBytes ?? 100;
  const recordsPerBatch = opts.recordsPerBatch ?? 100;
  const value = Buffer.alloc(valueBytes, 0x61);
  const template = encodeBatch(
    Array.from({ length: recordsPerBatch }, (_, i) => ({ key: null, value, timestamp: 1_700_000_000_000 + i })),
    { baseOffset: 0 },
  );
  let totalBytes = opts.totalBytes;
  let segmentBytes = opts.segmentBytes ?? defaultLogConfig.segmentBytes;
  if (opts.segments) {
    // A segment rolls when the next batch would not fit: k batches of the same size fill one exactly.
    const perSegment = Math.max(1, Math.floor(Math.floor(totalBytes / template.length) / opts.segments));
    segmentBytes = perSegment * template.length;
    totalBytes = segmentBytes * opts.segments;
  }
  const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes, flushBytes: 64 << 20, flushMs: 60_000 }, rememberConfig: true });
  let bytes = 0;
  let batches = 0;
  try {
    while (bytes + template.length <= totalBytes) {
      await log.appendEncoded(Buffer.from(template));
      bytes += template.length;
      batches++;
      if ((batches & 1023) === 0) opts.onProgress?.(bytes / totalBytes);
    }
  } finally {
    await log.close();
  }
  return { dir, bytes, segments: logFiles(dir).length, records: batches * recordsPerBatch, batches };
}

/**
 * The baseline: every `.log` read in 1 MiB chunks and each batch's CRC-32C checked, with no
 * other work. A batch straddling two chunks is carried into the next read.
 */
export function measureRawReadCrc(dir: string): Throughput & { batches: number; badCrcs: number } {
  const buf = Buffer.allocUnsafe(READ_CHUNK_BYTES * 2);
  let bytes = 0;
  let batches = 0;
  let badCrcs = 0;
  const t0 = performance.now();
  for (const file of logFiles(dir)) {
    const fd = fs.openSync(file, 'r');
    try {
      let filePos = 0;
      let have = 0; // bytes in buf not yet consumed, starting at 0
      for (;;) {
        const n = fs.readSync(fd, buf, have, Math.min(READ_CHUNK_BYTES, buf.length - have), filePos);
        filePos += n;
        have += n;
        let p = 0;
        while (have - p >= RECORD_BATCH_OVERHEAD) {
          const size = buf.readInt32BE(p + 8) + 12;
          if (size > buf.length) throw new Error(`${file}: batch of ${size} bytes is larger than the baseline's buffer`);
          if (have - p < size) break;
          if (crc32c(buf, p + 21, p + size) !== buf.readUInt32BE(p + 17)) badCrcs++;
          batches++;
          p += size;
        }
        bytes += p;
        buf.copy(buf, 0, p, have);
        have -= p;
        if (n === 0) break;
      }
    } finally {
      fs.closeSync(fd);
    }
  }
  return { ...throughput(bytes, (performance.now() - t0) / 1000), batches, badCrcs };
}

function removeMarker(dir: string): void {
  fs.rmSync(path.join(path.dirname(dir), CLEAN_SHUTDOWN_FILE), { force: true });
}

/**
 * Full recovery: the marker removed and every segment validated (forceRecoverAll), timed from
 * open to open returning. The log is then closed (cleanly, untimed) for the next measurement.
 */
export async function measureFullRecovery(dir: string): Promise<Throughput & { batches: number; segments: number }> {
  removeMarker(dir);
  const t0 = performance.now();
  const log = Log.open(dir, { recovery: { forceRecoverAll: true } });
  const seconds = (performance.now() - t0) / 1000;
  const r = log.loadReport;
  await log.close();
  if (r.repaired) throw new Error(`the bench log needed repair: ${JSON.stringify(r.truncated)}`);
  return { ...throughput(r.bytesValidated, seconds), batches: r.batchesValidated, segments: r.segmentsScanned };
}

/** rebuild-index of every segment (under the writer lock, as the command runs it). */
export function measureRebuildIndex(dir: string): Throughput & { segments: number } {
  const lock = DirectoryLock.acquire(dir, 'rebuild the indexes of');
  try {
    const bases = logFiles(dir).map((f) => Number(path.basename(f, LOG_SUFFIX)));
    let bytes = 0;
    const t0 = performance.now();
    for (const base of bases) bytes += rebuildSegmentIndexes(realIO, dir, base, { indexIntervalBytes: defaultLogConfig.indexIntervalBytes }).scan.validBytes;
    return { ...throughput(bytes, (performance.now() - t0) / 1000), segments: bases.length };
  } finally {
    lock.release();
  }
}

/** Open after a clean shutdown (the marker trusted), median of `repeats` opens. */
export async function measureCleanOpen(dir: string, repeats = 5): Promise<{ seconds: number; segmentsScanned: number }> {
  const times: number[] = [];
  let scanned = 0;
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    const log = Log.open(dir);
    times.push((performance.now() - t0) / 1000);
    scanned = Math.max(scanned, log.loadReport.segmentsScanned);
    if (!log.loadReport.cleanShutdown) throw new Error('the bench log was not shut down cleanly');
    await log.close();
  }
  times.sort((a, b) => a - b);
  return { seconds: times[Math.floor(times.length / 2)]!, segmentsScanned: scanned };
}

export interface RecoveryBenchOptions {
  /** A scratch directory (created; removed afterwards unless keep). */
  scratchDir: string;
  /** Size of the log for the throughput measurements (default 2 GiB). */
  totalBytes?: number;
  /** Size of the 10-segment log for the clean-open comparison (default totalBytes / 4). */
  cleanOpenBytes?: number;
  keep?: boolean;
  onProgress?: (phase: string, fraction: number) => void;
}

export interface RecoveryBenchResult {
  log: BuiltLog;
  baseline: Throughput & { batches: number };
  fullRecovery: Throughput & { batches: number; ratioToBaseline: number; meetsTarget: boolean };
  rebuildIndex: Throughput & { ratioToBaseline: number; meetsTarget: boolean };
  cleanOpen: {
    segments: number;
    bytes: number;
    cleanOpenSeconds: number;
    fullRecoverySeconds: number;
    /** cleanOpenSeconds / fullRecoverySeconds. */
    ratio: number;
    meetsTarget: boolean;
  };
  targets: { recoveryRatioAtLeast: number; cleanOpenRatioAtMost: number };
}

/**
 * Everything at once: builds the logs in scratchDir/logs/, measures the baseline right before
 * each scenario it bounds (so both see the same machine state), and returns the ratios.
 */
export async function benchRecovery(opts: RecoveryBenchOptions): Promise<RecoveryBenchResult> {
  const totalBytes = opts.totalBytes ?? 2 * 1024 ** 3;
  const cleanOpenBytes = opts.cleanOpenBytes ?? Math.max(10 * 1024 * 1024, Math.floor(totalBytes / 4));
  const progress = opts.onProgress ?? (() => {});
  const logsDir = path.join(opts.scratchDir, 'logs');
  fs.mkdirSync(logsDir, { recursive: true });
  try {
    const big = await buildLog(path.join(logsDir, 'recovery-0'), { totalBytes, onProgress: (f) => progress('build', f) });
    progress('baseline', 0);
    measureRawReadCrc(big.dir); // warm-up: page cache and JIT
    const baseline = measureRawReadCrc(big.dir);
    progress('full recovery', 0);
    const full = await measureFullRecovery(big.dir);
    const baseline2 = measureRawReadCrc(big.dir);
    progress('rebuild-index', 0);
    const rebuild = measureRebuildIndex(big.dir);
    const base = Math.max(baseline.mbPerSec, baseline2.mbPerSec);

    // Clean open vs full recovery of a 10-segment log (its own directory: a marker is per log dir).
    const tenDir = path.join(opts.scratchDir, 'ten', 'open-0');
    fs.mkdirSync(path.dirname(tenDir), { recursive: true });
    const ten = await buildLog(tenDir, { totalBytes: cleanOpenBytes, segments: 10, onProgress: (f) => progress('build 10 segments', f) });
    progress('clean open', 0);
    const tenFull = await measureFullRecovery(tenDir);
    const open = await measureCleanOpen(tenDir);
    const ratio = tenFull.seconds > 0 ? open.seconds / tenFull.seconds : 0;
    return {
      log: big,
      baseline: { ...baseline, mbPerSec: base },
      fullRecovery: { ...full, ratioToBaseline: full.mbPerSec / base, meetsTarget: full.mbPerSec / base >= TARGET_RECOVERY_RATIO },
      rebuildIndex: { ...rebuild, ratioToBaseline: rebuild.mbPerSec / base, meetsTarget: rebuild.mbPerSec / base >= TARGET_RECOVERY_RATIO },
      cleanOpen: { segments: ten.segments, bytes: ten.bytes, cleanOpenSeconds: open.seconds, fullRecoverySeconds: tenFull.seconds, ratio, meetsTarget: ratio <= TARGET_CLEAN_OPEN_RATIO },
      targets: { recoveryRatioAtLeast: TARGET_RECOVERY_RATIO, cleanOpenRatioAtMost: TARGET_CLEAN_OPEN_RATIO },
    };
  } finally {
    if (!opts.keep) fs.rmSync(opts.scratchDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// The same measurements as `logtool bench` scenarios (one line each in scenarios.ts):
//   ...recoveryScenarios,
// Each runs in its own process; the logs are built once per run in ctx.dataDir and reused.

/** Size of the recovery log: multi-GiB by default, small with --quick; LOGTOOL_BENCH_RECOVERY_BYTES overrides. */
export function recoveryLogBytes(ctx: Pick<BenchContext, 'quick'>): number {
  const env = Number(process.env.LOGTOOL_BENCH_RECOVERY_BYTES);
  if (Number.isFinite(env) && env > 0) return env;
  return ctx.quick ? 32 * 1024 * 1024 : 2 * 1024 ** 3;
}

/** Builds (once per bench run) a log in ctx.dataDir; returns its partition directory. */
async function sharedLog(ctx: BenchContext, name: string, totalBytes: number, segments?: number): Promise<string> {
  const dir = path.join(ctx.dataDir, name, `${name}-0`); // own log dir: a marker is per log dir
  const meta = path.join(ctx.dataDir, `${name}.json`);
  if (fs.existsSync(meta)) return dir;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const built = await buildLog(dir, { totalBytes, segments, onProgress: (f) => ctx.progress(f / 2) });
  fs.writeFileSync(meta, JSON.stringify(built));
  return dir;
}

function asResult(t: Throughput, records: number, opUnit: string, extra: Record<string, number | string | boolean> = {}): ScenarioResult {
  return singleRunResult({ records, bytes: t.bytes, seconds: t.seconds }, opUnit, extra);
}

const recordsOf = (ctx: BenchContext, name: string): number => {
  const meta = path.join(ctx.dataDir, `${name}.json`);
  return fs.existsSync(meta) ? (JSON.parse(fs.readFileSync(meta, 'utf8')) as BuiltLog).records : 0;
};

export const recoveryScenarios: BenchScenario[] = [
  {
    name: 'raw-read-crc-recovery-log',
    description: 'the recovery log read in 1 MiB chunks, every batch CRC-32C checked (baseline of recovery and rebuild-index)',
    baseline: true,
    run: async (ctx) => {
      const dir = await sharedLog(ctx, 'recovery', recoveryLogBytes(ctx));
      measureRawReadCrc(dir); // warm the page cache
      const t = measureRawReadCrc(dir);
      return asResult(t, recordsOf(ctx, 'recovery'), 'whole log', { batches: t.batches });
    },
  },
  {
    name: 'recovery-full',
    description: 'open without a clean-shutdown marker, every segment validated and its indexes rebuilt',
    baselineName: 'raw-read-crc-recovery-log',
    ratioMetric: 'mbPerSec',
    target: { ratioAtLeast: TARGET_RECOVERY_RATIO },
    run: async (ctx) => {
      const dir = await sharedLog(ctx, 'recovery', recoveryLogBytes(ctx));
      measureRawReadCrc(dir);
      const t = await measureFullRecovery(dir);
      return asResult(t, recordsOf(ctx, 'recovery'), 'whole log', { batches: t.batches, segments: t.segments });
    },
  },
  {
    name: 'rebuild-index',
    description: 'rebuild-index of every segment (.tmp files, fsync, rename)',
    baselineName: 'raw-read-crc-recovery-log',
    ratioMetric: 'mbPerSec',
    target: { ratioAtLeast: TARGET_RECOVERY_RATIO },
    run: async (ctx) => {
      const dir = await sharedLog(ctx, 'recovery', recoveryLogBytes(ctx));
      measureRawReadCrc(dir);
      const t = measureRebuildIndex(dir);
      return asResult(t, recordsOf(ctx, 'recovery'), 'whole log', { segments: t.segments });
    },
  },
  {
    name: 'recovery-full-10-segments',
    description: 'full recovery of a 10-segment log (reference for the clean open)',
    baselineName: 'raw-read-crc-recovery-log',
    ratioMetric: 'mbPerSec',
    run: async (ctx) => {
      const dir = await sharedLog(ctx, 'recovery10', Math.floor(recoveryLogBytes(ctx) / 4), 10);
      measureRawReadCrc(dir);
      const t = await measureFullRecovery(dir);
      return asResult(t, recordsOf(ctx, 'recovery10'), 'open with full recovery', { segments: t.segments });
    },
  },
  {
    name: 'clean-open-10-segments',
    description: 'open of the same 10-segment log after a clean shutdown (time vs its full recovery)',
    baselineName: 'recovery-full-10-segments',
    ratioMetric: 'p99Ms',
    target: { ratioAtMost: TARGET_CLEAN_OPEN_RATIO },
    run: async (ctx) => {
      const dir = await sharedLog(ctx, 'recovery10', Math.floor(recoveryLogBytes(ctx) / 4), 10);
      const open = await measureCleanOpen(dir);
      const bytes = fs.readdirSync(dir).filter((n) => n.endsWith(LOG_SUFFIX)).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
      return asResult({ bytes, seconds: open.seconds, mbPerSec: bytes / 1e6 / open.seconds }, recordsOf(ctx, 'recovery10'), 'clean open', { segmentsScanned: open.segmentsScanned });
    },
  },
];
