/**
 * Adapters that put the codec and compaction measurements (codecs.ts, compaction.ts — plain
 * functions that measure several things at once) into the runner's scenario list.
 */
import { benchCodecs, type CodecBenchResult } from './codecs.js';
import { benchCompaction } from './compaction.js';
import { singleRunResult, type BenchContext, type BenchScenario, type ScenarioResult } from './types.js';
import type { CompressionName } from '../engine/format/compression.js';

const CODECS: readonly CompressionName[] = ['gzip', 'snappy', 'lz4', 'zstd'];

/** All codecs are written and read in one go (interleaved passes); later scenarios reuse it. */
const codecRuns = new Map<string, Promise<CodecBenchResult[]>>();

function codecResults(ctx: BenchContext): Promise<CodecBenchResult[]> {
  let run = codecRuns.get(ctx.dataDir);
  if (!run) {
    const records = Math.min(ctx.records, ctx.quick ? 4_000 : 100_000);
    run = benchCodecs(ctx.dir, records, { repeats: ctx.quick ? 1 : 3, progress: (f) => ctx.progress(f) });
    codecRuns.set(ctx.dataDir, run);
  }
  return run;
}


async function codecScenario(ctx: BenchContext, codec: CompressionName | 'none'): Promise<ScenarioResult> {
  const r = (await codecResults(ctx)).find((x) => x.codec === codec);
  if (!r) throw new Error(`codec bench produced no result for ${codec}`);
  const calls: Record<string, number> = {};
  // Per codec: logtool's codec call alone, and the whole read-decode, over the library's own speed.
  // Each the median over passes of the ratio within a pass (codecs.ts).
  if (r.library && r.readDecodeToLibrary !== undefined && r.codecCallToLibrary !== undefined) {
    calls.libraryMbPerSec = Number(r.library.mbPerSec.toFixed(1));
    calls.codecCallToLibrary = Number(r.codecCallToLibrary.toFixed(3));
    calls.readDecodeToLibrary = Number(r.readDecodeToLibrary.toFixed(3));
  }
  return singleRunResult(r, 'whole log', { fileBytes: r.fileBytes, compressionRatio: Number(r.compressionRatio.toFixed(2)), ...calls });
}

export const codecScenarios: BenchScenario[] = [
  {
    name: 'read-decode-codec-none',
    description: 'Log.read of 1 KiB JSON-like records, uncompressed (reference for the codecs)',
    baseline: true,
    run: (ctx) => codecScenario(ctx, 'none'),
  },
  ...CODECS.map(
    (codec): BenchScenario => ({
      name: `read-decode-${codec}`,
      description: `Log.read of the same records compressed with ${codec}, MB/s of decompressed data (extra: readDecodeToLibrary, the ratio to the ${codec} library's own decompression of the same payloads; target ≥ 0.83, within 1.2×)`,
      baselineName: 'read-decode-codec-none',
      ratioMetric: 'mbPerSec',
      run: (ctx) => codecScenario(ctx, codec),
    }),
  ),
];

export const compactionScenario: BenchScenario = {
  name: 'compaction-1KiB-10pct-keys',
  description: 'compact of 1 KiB records with 10% distinct keys under the 128 MiB memory bound',
  baselineName: 'raw-read-crc',
  ratioMetric: 'mbPerSec',
  target: { ratioAtLeast: 0.25 },
  run: async (ctx) => {
    const r = await benchCompaction({
      scratchParent: ctx.dir,
      totalBytes: ctx.quick ? 8 << 20 : 256 << 20,
      // A 32 MiB compaction first, untimed: the timed one runs warm, as raw-read-crc's second pass does.
      warmUpBytes: ctx.quick ? 0 : 32 << 20,
      onProgress: (phase, f) => ctx.progress(phase === 'build' ? f / 2 : 0.5 + f / 2),
    });
    return singleRunResult({ records: r.inputRecords, bytes: r.inputBytes, seconds: r.seconds }, 'whole compaction', {
      passes: r.passes,
      mbPerCpuSecond: Number(r.mbPerCpuSecond.toFixed(1)),
      memoryBoundBytes: r.memoryBoundBytes,
      peakHeapAndBuffersGrowthBytes: r.peakHeapAndBuffersGrowthBytes,
      withinMemoryBound: r.withinBound,
    });
  },
};
