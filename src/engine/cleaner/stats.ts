/**
 * The cleaner's report and progress (Kafka's CleanerStats, LogCleaner's statistics logging): what
 * every pass removed, retained and scanned, the memory the cleaner accounted for and measured, and
 * progress callbacks for a spinner.
 */
import type { RemovedFile } from './swap.js';
import type { CleanableLog, CleanerOptions, CleanProgress } from './types.js';

export interface CleanedGroup {
  pass: number;
  /** Base offsets of the segments the group replaced. */
  replaced: number[];
  /** The segment that replaced them (its final name), or what it would be in a dry run. */
  file: string;
  bytesBefore: number;
  bytesAfter: number;
  /** Nothing changed in a single segment: the group was left in place. */
  unchanged: boolean;
}

export interface CleanReport {
  dir: string;
  dryRun: boolean;
  /** The log's cleanup.policy (compaction runs when asked, whatever it says). */
  cleanupPolicy: string;
  nowMs: number;
  passes: number;
  firstDirtyOffset: number;
  firstUncleanableOffset: number;
  /** Offset written to cleaner-offset-checkpoint (would be, in a dry run). */
  cleanedThrough: number;
  /** Why nothing was cleaned, when nothing was. */
  nothingToClean?: string;
  recordsRemoved: number;
  recordsRetained: number;
  tombstonesRemoved: number;
  /** Batches newly stamped with a delete horizon. */
  deleteHorizonsSet: number;
  batchesCopied: number;
  batchesRewritten: number;
  batchesEmptied: number;
  batchesRemoved: number;
  /** Bytes of the segments in the cleaned range before and after. */
  bytesBefore: number;
  bytesAfter: number;
  bytesRemoved: number;
  /** Bytes read by all passes (map building and recopying). */
  bytesScanned: number;
  /** Bytes whose CRC-32C was computed: each batch is verified once per run, however often read. */
  bytesCrcChecked: number;
  segmentsBefore: number;
  segmentsAfter: number;
  groups: CleanedGroup[];
  /** Every file that left the log, with where a copy was kept. */
  removedFiles: RemovedFile[];
  /** markBytes: the marks of latest offsets (offset-map.ts); keysHashed: MD5s of keys, all passes. */
  offsetMap: { slots: number; memoryBytes: number; markBytes: number; maxEntries: number; peakEntries: number; keysHashed: number };
  memory: { boundBytes: number; accountedBytes: number; peakRssBytes: number; peakHeapAndBuffersBytes: number };
  durationMs: number;
}

/** The report before the first pass: nothing cleaned, the whole log before and after. */
export function newCleanReport(log: CleanableLog, opts: CleanerOptions, nowMs: number, boundBytes: number): CleanReport {
  return {
    dir: log.dir,
    dryRun: Boolean(opts.dryRun),
    cleanupPolicy: log.config.cleanupPolicy,
    nowMs,
    passes: 0,
    firstDirtyOffset: log.logStartOffset,
    firstUncleanableOffset: log.logStartOffset,
    cleanedThrough: log.logStartOffset,
    recordsRemoved: 0,
    recordsRetained: 0,
    tombstonesRemoved: 0,
    deleteHorizonsSet: 0,
    batchesCopied: 0,
    batchesRewritten: 0,
    batchesEmptied: 0,
    batchesRemoved: 0,
    bytesBefore: 0,
    bytesAfter: 0,
    bytesRemoved: 0,
    bytesScanned: 0,
    bytesCrcChecked: 0,
    segmentsBefore: log.segments.length,
    segmentsAfter: log.segments.length,
    groups: [],
    removedFiles: [],
    offsetMap: { slots: 0, memoryBytes: 0, markBytes: 0, maxEntries: 0, peakEntries: 0, keysHashed: 0 },
    memory: { boundBytes, accountedBytes: 0, peakRssBytes: 0, peakHeapAndBuffersBytes: 0 },
    durationMs: 0,
  };
}

/** Memory is sampled at most this often (process.memoryUsage costs ~0.5 ms on a busy machine). */
const MEMORY_SAMPLE_INTERVAL_MS = 100;

/** Progress of the current phase, reported at most every 25 ms, memory sampled every 100 ms. */
export class CleanerProgress {
  private readonly memory: CleanReport['memory'];
  private readonly onProgress: ((p: CleanProgress) => void) | undefined;
  private lastYield = performance.now();
  private lastSample = 0;
  private phase: CleanProgress['phase'] = 'scan';
  private pass = 0;
  private done = 0;
  private total = 0;

  constructor(memory: CleanReport['memory'], onProgress?: (p: CleanProgress) => void) {
    this.memory = memory;
    this.onProgress = onProgress;
  }

  start(phase: CleanProgress['phase'], totalBytes: number, pass = 0): void {
    this.phase = phase;
    this.done = 0;
    this.total = totalBytes;
    this.pass = pass;
  }

  add(bytes: number): void {
    this.done += bytes;
  }

  /** Lets timers (spinner, other work) run every 25 ms, sampling memory every fourth time. */
  async maybeYield(): Promise<void> {
    const now = performance.now();
    if (now - this.lastYield < 25) return;
    this.lastYield = now;
    if (now - this.lastSample >= MEMORY_SAMPLE_INTERVAL_MS) {
      this.lastSample = now;
      this.sampleMemory();
    }
    this.onProgress?.({ pass: this.pass, phase: this.phase, bytesDone: this.done, bytesTotal: this.total });
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  sampleMemory(): void {
    const m = process.memoryUsage();
    const mem = this.memory;
    mem.peakRssBytes = Math.max(mem.peakRssBytes, m.rss);
    mem.peakHeapAndBuffersBytes = Math.max(mem.peakHeapAndBuffersBytes, m.heapUsed + m.external);
  }
}
