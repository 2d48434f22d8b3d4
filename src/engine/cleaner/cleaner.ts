/**
 * Kafka's log cleaner (LogCleaner / Cleaner, kafka-format.md §15) for one partition — the
 * orchestrator of its parts:
 *
 * - cleanable range (cleanable-range.ts, LogCleanerManager.cleanableOffsets): from the first dirty
 *   offset to the first uncleanable offset;
 * - memory sizing (memory.ts): the offset map and I/O buffers under `maxMemoryBytes`;
 * - offset map (offset-map-builder.ts, buildOffsetMap): MD5(key) → latest offset over the dirty
 *   range, bounded (offset-map.ts); when it fills, the round ends at the last mapped offset and
 *   another round (pass) follows; records without a key are refused;
 * - recopy (clean-segments.ts, cleaned-output.ts, record-filter.ts): segments from the log start
 *   up to the round end, grouped up to segment.bytes, each group into one `.cleaned` segment, by
 *   Kafka's batch and record retention rules (§15.3), then the crash-safe swap (swap.ts) and the
 *   cleaner checkpoint; report and progress in stats.ts.
 *
 * Before anything changes, one header scan of the whole log rebuilds what Kafka keeps in memory or
 * in side files (producer state: each producer's last data batch and epoch; aborted transactions;
 * the last stable offset), and refuses what cannot be cleaned correctly: legacy v0/v1 entries,
 * batches whose codec is not available, corrupt batches, and keyed-compaction violations —
 * records without a key, which Kafka's cleaner would silently drop.
 *
 * Memory: the offset map plus I/O buffers stay under `maxMemoryBytes`; nothing else grows with
 * the size of the log (per-producer state grows with the number of producer ids).
 */
import { InvalidArgumentError, LogtoolError } from '../errors.js';
import { codecFor, compressionName, CompressionType } from '../format/compression.js';
import { Attr, readBatchHeader, RECORD_BATCH_OVERHEAD, type BatchHeader } from '../format/record-batch.js';
import { DEFAULT_PRODUCER_ID_EXPIRATION_MS, ProducerStateManager, TxnMetadata, type AbortedTxn, type ProducerState } from '../partition-state/producer-state.js';
import type { FileIO } from '../io.js';
import type { LogSegment } from '../segment/segment.js';
import { BatchReader } from './batch-reader.js';
import { controlMarker, RecordRefs, walkRecords } from './batch-records.js';
import { firstDirtyOffset, firstUncleanableOffset, nothingToCleanReason } from './cleanable-range.js';
import { SegmentsCleaner } from './clean-segments.js';
import { DEFAULT_CLEANER_MEMORY_BYTES, sizeCleanerMemory } from './memory.js';
import { buildOffsetMap, checkKeys, KeylessTally } from './offset-map-builder.js';
import type { OffsetMap } from './offset-map.js';
import { CleanerScan, type CleanRun } from './scan.js';
import { CleanerProgress, newCleanReport, type CleanReport } from './stats.js';
import type { CleanableLog, CleanerOptions } from './types.js';

export { DEFAULT_CLEANER_MEMORY_BYTES } from './memory.js';
export { KeylessRecordsError } from './offset-map-builder.js';
export { largestTimestamp } from './cleanable-range.js';
export type { CleanedGroup, CleanReport } from './stats.js';
export type { CleanableLog, CleanerOptions, CleanProgress } from './types.js';

export { DEFAULT_PRODUCER_ID_EXPIRATION_MS };

// ---------------------------------------------------------------------------------------------
// Producer state and transactions: partition-state/producer-state.ts (Kafka's ProducerStateManager)

interface SegmentFacts {
  /** First entry the cleaner cannot handle (legacy format or codec not available). */
  problem?: { position: number; offset: number; reason: string };
  /** Records in non-control batches at or after the first dirty offset. */
  dirtyRecords: number;
  maxEntryBytes: number;
  compressed: boolean;
}

interface LogFacts {
  producers: ProducerStateManager;
  aborted: AbortedTxn[];
  lastStableOffset: number;
  segments: Map<LogSegment, SegmentFacts>;
}

export class Cleaner {
  private readonly log: CleanableLog;
  private readonly opts: CleanerOptions;
  private readonly now: number;
  private readonly headerWindow = Buffer.allocUnsafe(HEADER_WINDOW_BYTES);
  private readonly ctx: CleanRun;
  private readonly segmentsCleaner: SegmentsCleaner;
  readonly report: CleanReport;
  private map: OffsetMap | undefined;

  constructor(log: CleanableLog, opts: CleanerOptions = {}) {
    this.log = log;
    this.opts = opts;
    this.now = opts.nowMs ?? Date.now();
    this.report = newCleanReport(log, opts, this.now, opts.maxMemoryBytes ?? DEFAULT_CLEANER_MEMORY_BYTES);
    const progress = new CleanerProgress(this.report.memory, opts.onProgress);
    this.ctx = { log, opts, nowMs: this.now, report: this.report, progress, scan: new CleanerScan(new BatchReader(log.io)) };
    this.segmentsCleaner = new SegmentsCleaner(this.ctx);
  }

  // -------------------------------------------------------------------------------------------
  // Driver

  async run(): Promise<CleanReport> {
    const t0 = performance.now();
    this.ctx.progress.sampleMemory();
    let failed = true;
    try {
      await this.runRounds();
      failed = false;
    } finally {
      try {
        this.segmentsCleaner.scratch.remove();
      } catch (e) {
        if (!failed) throw e; // otherwise the first failure is the one reported
      }
      this.report.durationMs = Math.round(performance.now() - t0);
      this.report.bytesCrcChecked = this.ctx.scan.bytesCrcChecked;
      this.ctx.progress.sampleMemory();
    }
    return this.report;
  }

  private async runRounds(): Promise<void> {
    const log = this.log;
    const r = this.report;
    let firstDirty = firstDirtyOffset(log, this.opts.fromStart);
    r.firstDirtyOffset = firstDirty;
    r.cleanedThrough = firstDirty;

    // Everything that could stop the cleaner is checked before anything changes.
    let segments = [...log.segments];
    let facts = await this.analyze(segments, firstDirty);
    const firstUncleanable = firstUncleanableOffset(log, segments, firstDirty, this.now, facts.lastStableOffset);
    r.firstUncleanableOffset = firstUncleanable;
    if (firstDirty >= firstUncleanable) {
      r.nothingToClean = nothingToCleanReason(log, firstDirty, firstUncleanable);
      return;
    }
    const inRange = segments.filter((s) => s.baseOffset < firstUncleanable);
    this.checkCleanable(inRange, facts);
    this.sizeMemory(inRange, facts, firstUncleanable - firstDirty);
    r.bytesBefore = inRange.reduce((n, s) => n + s.size, 0);
    // Records without a key: the clean part now, the dirty part while the first map is built.
    const keyless = new KeylessTally();
    await checkKeys(this.ctx, segments, new TxnMetadata(facts.aborted), log.logStartOffset, firstDirty, keyless);

    const maxPasses = this.opts.maxPasses ?? Infinity;
    let pass = 0;
    while (firstDirty < firstUncleanable && pass < maxPasses) {
      pass++;
      if (pass > 1) facts = await this.analyze(segments, firstDirty);
      const map = this.map!;
      map.clear(firstDirty);
      const range = { start: firstDirty, end: firstUncleanable, pass };
      await buildOffsetMap(this.ctx, map, segments, new TxnMetadata(facts.aborted), range, pass === 1 ? keyless : undefined);
      if (pass === 1) keyless.throwIfAny();
      r.offsetMap.peakEntries = Math.max(r.offsetMap.peakEntries, map.size);
      const endOffset = map.latestOffset + 1;
      if (endOffset <= firstDirty) {
        throw new InvalidArgumentError(
          ['maxMemoryBytes', 'offsetMapBytes'],
          `the offset map (${map.slots} slots, ${map.maxEntries} keys) cannot hold the keys of one batch at offset ${firstDirty}; give the cleaner more memory (maxMemoryBytes / offsetMapBytes)`,
          { file: log.dir },
        );
      }
      const finalPass = endOffset >= firstUncleanable || pass >= maxPasses;
      const round = { endOffset, firstUncleanable, pass, finalPass };
      segments = await this.segmentsCleaner.clean(segments, map, new TxnMetadata(facts.aborted), this.activeProducers(facts), round);
      r.offsetMap.keysHashed += map.lookups;
      firstDirty = endOffset;
      r.cleanedThrough = endOffset;
      r.passes = pass;
      if (!this.opts.dryRun) {
        log.writeCleanerCheckpoint(endOffset);
        this.opts.onStep?.({ phase: 'checkpointed' });
      }
    }
    const after = segments.filter((s) => s.baseOffset < firstUncleanable);
    r.bytesAfter = this.opts.dryRun ? r.bytesAfter : after.reduce((n, s) => n + s.size, 0);
    r.bytesRemoved = r.bytesBefore - r.bytesAfter;
    if (!this.opts.dryRun) r.segmentsAfter = log.segments.length;
  }

  private checkCleanable(inRange: LogSegment[], facts: LogFacts): void {
    for (const s of inRange) {
      const p = facts.segments.get(s)?.problem;
      if (p) throw new LogtoolError('unsupported', `${p.reason} (batch at offset ${p.offset}); compaction stopped before changing anything`, { file: s.logPath, position: p.position });
    }
  }

  /** Splits the memory bound between I/O buffers and the offset map (memory.ts). */
  private sizeMemory(inRange: LogSegment[], facts: LogFacts, dirtyOffsets: number): void {
    const sized = sizeCleanerMemory(
      inRange.map((s) => facts.segments.get(s)!),
      { maxMemoryBytes: this.opts.maxMemoryBytes, offsetMapBytes: this.opts.offsetMapBytes, headerWindowBytes: HEADER_WINDOW_BYTES, dirtyOffsets },
    );
    this.map = sized.map;
    this.ctx.scan.deadRuns = sized.deadRuns;
    this.ctx.scan.maxDecompressedBytes = sized.maxDecompressedBytes;
    const m = sized.map;
    this.report.offsetMap = { slots: m.slots, memoryBytes: m.memoryBytes, markBytes: m.markBytes, maxEntries: m.maxEntries, peakEntries: 0, keysHashed: 0 };
    this.report.memory.accountedBytes = sized.accountedBytes;
  }

  // Progress of the header scan (stats.ts).
  private setProgress(phase: 'scan', total: number): void {
    this.ctx.progress.start(phase, total);
  }

  private progress(bytes: number): void {
    this.ctx.progress.add(bytes);
  }

  private maybeYield(): Promise<void> {
    return this.ctx.progress.maybeYield();
  }

  // -------------------------------------------------------------------------------------------
  // Header scan

  /** One pass over every batch header: producer state, aborted transactions, LSO, problems. */
  private async analyze(segments: LogSegment[], firstDirty: number): Promise<LogFacts> {
    const producers = new ProducerStateManager();
    const segFacts = new Map<LogSegment, SegmentFacts>();
    const refs = new RecordRefs();
    this.setProgress('scan', segments.reduce((n, s) => n + s.size, 0));
    for (const seg of segments) {
      const f: SegmentFacts = { dirtyRecords: 0, maxEntryBytes: 0, compressed: false };
      segFacts.set(seg, f);
      for (const e of batchHeaders(this.log.io, seg, this.headerWindow)) {
        this.progress(e.size);
        if (e.size > f.maxEntryBytes) f.maxEntryBytes = e.size;
        const h = e.header;
        if (!h) {
          f.problem ??= { position: e.position, offset: e.offset, reason: `v${e.magic} (legacy) message sets cannot be compacted by logtool` };
          continue;
        }
        const codec = h.attributes & Attr.compressionMask;
        if (codec !== CompressionType.none) {
          f.compressed = true;
          if (!codecFor(codec)) f.problem ??= { position: e.position, offset: h.baseOffset, reason: `batch compressed with ${compressionName(codec)}, a codec logtool cannot read and rewrite yet` };
        }
        const last = h.baseOffset + h.lastOffsetDelta;
        const control = (h.attributes & Attr.control) !== 0;
        if (!control && last >= firstDirty) f.dirtyRecords += h.recordsCount;
        producers.update(h, () => {
          try {
            const b = e.batch();
            walkRecords(b.buf, b.pos, h, refs, { file: seg.logPath, filePosition: e.position });
            return controlMarker(refs);
          } catch {
            return undefined;
          }
        });
        await this.maybeYield();
      }
    }
    return { producers, aborted: producers.abortedByFirstOffset(), lastStableOffset: producers.lastStableOffset(this.log.nextOffset), segments: segFacts };
  }

  /** Kafka's lastRecordsOfActiveProducers: producers not expired (or with an open transaction). */
  private activeProducers(facts: LogFacts): Map<number, ProducerState> {
    return facts.producers.activeProducers(this.now, this.opts.producerIdExpirationMs ?? DEFAULT_PRODUCER_ID_EXPIRATION_MS);
  }
}

const HEADER_WINDOW_BYTES = 64 * 1024;

interface HeaderEntry {
  position: number;
  size: number;
  magic: number;
  offset: number;
  header: BatchHeader | undefined;
  /** The whole batch's bytes (read on demand). */
  batch(): { buf: Buffer; pos: number };
}

/**
 * Batch headers of a segment without reading the records: a 64 KiB window serves runs of small
 * batches; after a batch larger than the window only the next header is read (batches that large
 * tend to follow each other), so a segment of large batches costs a few bytes per batch, not a
 * window each. Stops quietly at anything that is not a whole entry
 * (the map-building and recopying scans verify every batch and report corruption).
 */
function* batchHeaders(io: FileIO, seg: LogSegment, win: Buffer): Generator<HeaderEntry> {
  const size = seg.size;
  const file = seg.file;
  let winStart = 0;
  let winLen = 0;
  let pos = 0;
  let afterLargeBatch = false;
  const load = (at: number, need: number): boolean => {
    if (at >= winStart && at + need <= winStart + winLen) return true;
    const want = Math.min(afterLargeBatch ? RECORD_BATCH_OVERHEAD : HEADER_WINDOW_BYTES, size - at);
    if (want < need) return false;
    winLen = file.read(win, 0, want, at);
    winStart = at;
    return winLen >= need;
  };
  while (pos + 17 <= size) {
    if (!load(pos, Math.min(RECORD_BATCH_OVERHEAD, size - pos))) return;
    const p = pos - winStart;
    const entrySize = win.readInt32BE(p + 8) + 12;
    const magic = win.readInt8(p + 16);
    if (entrySize < 26 || pos + entrySize > size) return;
    let header: BatchHeader | undefined;
    if (magic >= 2) {
      if (entrySize < RECORD_BATCH_OVERHEAD || pos + RECORD_BATCH_OVERHEAD > winStart + winLen) return;
      header = readBatchHeader(win, p);
    }
    const at = pos;
    const offset = header ? header.baseOffset : win.readInt32BE(p) * 4294967296 + win.readUInt32BE(p + 4);
    yield {
      position: at,
      size: entrySize,
      magic,
      offset,
      header,
      batch: () => {
        if (at >= winStart && at + entrySize <= winStart + winLen) return { buf: win, pos: at - winStart };
        const buf = Buffer.allocUnsafe(entrySize);
        file.read(buf, 0, entrySize, at);
        return { buf, pos: 0 };
      },
    };
    pos += entrySize;
    afterLargeBatch = entrySize > HEADER_WINDOW_BYTES;
  }
}

/** Compacts a log (see Cleaner). */
export function cleanLog(log: CleanableLog, opts: CleanerOptions = {}): Promise<CleanReport> {
  return new Cleaner(log, opts).run();
}
