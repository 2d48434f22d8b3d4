/**
 * Kafka's log cleaner (LogCleaner / Cleaner / LogCleanerManager.cleanableOffsets,
 * kafka-format.md §15) for one partition:
 *
 * - cleanable range: from the first dirty offset (cleaner-offset-checkpoint, else the log start
 *   offset) to the first uncleanable offset = min(last stable offset, active segment base, base of
 *   the first dirty segment younger than min.compaction.lag.ms);
 * - offset map: MD5(key) → latest offset over the dirty range, bounded (offset-map.ts); when it
 *   fills, the round ends at the last mapped offset and another round (pass) follows;
 * - recopy: segments from the log start up to the round end, grouped up to segment.bytes, each
 *   group into one `.cleaned` segment, by Kafka's batch and record retention rules (§15.3), then
 *   the crash-safe swap (swap.ts) and the cleaner checkpoint.
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
import os from 'node:os';
import path from 'node:path';
import { realIO, removeTree, type FileIO } from '../io.js';
import { LogtoolError } from '../errors.js';
import { codecFor, compressionName, CompressionType } from '../format/compression.js';
import { Attr, RECORD_BATCH_OVERHEAD, readBatchHeader, type BatchHeader } from '../format/record-batch.js';
import { BatchReader, READ_CHUNK_BYTES, type Batch } from './batch-reader.js';
import { LogSegment, LOG_SUFFIX, TXN_INDEX_SUFFIX, segmentFileName, type AppendedBatchInfo } from '../segment/segment.js';
import type { LogConfig } from '../config.js';
import { OffsetMap, OFFSET_MAP_ENTRY_BYTES, DEFAULT_LOAD_FACTOR } from './offset-map.js';
import { controlMarker, controlType, emptyBatch, rebuildBatch, RecordRefs, walkRecords, type Allocate } from './batch-records.js';
import { CLEANED_SUFFIX, SEGMENT_FILE_ORDER, swapBegun, type RemovedFile, type StepHook } from './swap.js';
import { removeQuietly } from '../checkpoint.js';
import { ProducerStateManager, TxnMetadata, type AbortedTxn, type ProducerState } from '../partition-state/producer-state.js';
import { writeTxnIndex } from '../partition-state/transaction-index.js';

export const DEFAULT_CLEANER_MEMORY_BYTES = 128 * 1024 * 1024;
/** Kafka's producer.id.expiration.ms default: producers idle this long are no longer active. */
export const DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000;
/**
 * Fixed allowance for JavaScript objects and garbage not yet collected: V8's young generation
 * (semi-spaces of up to 16 MiB by default) fills with short-lived per-batch objects before a
 * scavenge, so measured heap can run this far above what the cleaner holds.
 */
const FIXED_OVERHEAD_BYTES = 16 * 1024 * 1024;
const WRITE_BUFFER_BYTES = 1 << 20;

export interface CleanProgress {
  pass: number;
  phase: 'scan' | 'map' | 'clean';
  bytesDone: number;
  bytesTotal: number;
}

export interface CleanerOptions {
  /** The cleaning time (delete horizons, min.compaction.lag.ms, producer expiry); default now. */
  nowMs?: number;
  /** Bound on the cleaner's memory: offset map plus I/O buffers (default 128 MiB). */
  maxMemoryBytes?: number;
  /** Size the offset map explicitly (bytes, 24 per slot); default: what the bound leaves. */
  offsetMapBytes?: number;
  /** Compute and report, change nothing in the log directory. */
  dryRun?: boolean;
  /** Ignore cleaner-offset-checkpoint: the whole log (from the log start offset) is dirty. */
  fromStart?: boolean;
  /** Keep a copy of every replaced segment file here instead of losing it. */
  keepRemovedDir?: string;
  producerIdExpirationMs?: number;
  /** Stop after this many rounds (default: until the cleanable range is done). */
  maxPasses?: number;
  onProgress?: (p: CleanProgress) => void;
  /** Called after every step of every swap (tests simulate crashes from it). */
  onStep?: StepHook;
  /** Delay before `.deleted` files are removed; 0 or undefined = at once. */
  deleteDelayMs?: number;
}

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
  segmentsBefore: number;
  segmentsAfter: number;
  groups: CleanedGroup[];
  /** Every file that left the log, with where a copy was kept. */
  removedFiles: RemovedFile[];
  offsetMap: { slots: number; memoryBytes: number; maxEntries: number; peakEntries: number };
  memory: { boundBytes: number; accountedBytes: number; peakRssBytes: number; peakHeapAndBuffersBytes: number };
  durationMs: number;
}

/** What the cleaner needs of a Log (log.ts implements it; kept structural to avoid an import cycle). */
export interface CleanableLog {
  readonly dir: string;
  readonly io: FileIO;
  readonly config: LogConfig;
  readonly segments: LogSegment[];
  readonly logStartOffset: number;
  readonly nextOffset: number;
  readCleanerCheckpoint(): number | undefined;
  writeCleanerCheckpoint(offset: number): void;
  /** Crash-safe swap of a `.cleaned` segment at `base` for `old`; returns the files removed. */
  replaceSegments(base: number, old: LogSegment[], opts: { keepRemovedDir?: string; deleteDelayMs?: number; onStep?: StepHook }): RemovedFile[];
}

// ---------------------------------------------------------------------------------------------
// Producer state and transactions: partition-state/producer-state.ts

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

// ---------------------------------------------------------------------------------------------

const enum Retention {
  Delete,
  DeleteEmpty,
  RetainEmpty,
}

interface Output {
  readonly baseOffset: number;
  size: number;
  append(buf: Buffer, len: number, infos: AppendedBatchInfo[]): void;
  finish(mtimeMs: number, txnEntries: AbortedTxn[]): void;
  discard(): void;
  /** Readable segment (scratch outputs of a dry run). */
  segment?: LogSegment;
}

export class KeylessRecordsError extends LogtoolError {
  readonly count: number;
  readonly firstOffsets: number[];
  readonly files: string[];
  constructor(count: number, firstOffsets: number[], files: string[]) {
    super(
      'unsupported',
      `${count} record(s) without a key in the range to compact (first at offset${firstOffsets.length > 1 ? 's' : ''} ${firstOffsets.join(', ')}${count > firstOffsets.length ? ', …' : ''}; in ${files.map((f) => path.basename(f)).join(', ')}). ` +
        'Compaction keeps the latest record per key, so records without a key cannot be compacted (Kafka would drop them silently). Nothing was changed.',
      { file: files[0] },
    );
    this.count = count;
    this.firstOffsets = firstOffsets;
    this.files = files;
  }
}

/** Records without a key found so far (count, the first few offsets, their files). */
class KeylessTally {
  count = 0;
  readonly firstOffsets: number[] = [];
  readonly files = new Set<string>();

  add(offset: number, file: string): void {
    this.count++;
    this.files.add(file);
    if (this.firstOffsets.length < 5) this.firstOffsets.push(offset);
  }

  throwIfAny(): void {
    if (this.count > 0) throw new KeylessRecordsError(this.count, [...this.firstOffsets].sort((a, b) => a - b), [...this.files]);
  }
}

function segmentMtime(io: FileIO, seg: LogSegment): number {
  return io.stat(seg.logPath)?.mtimeMs ?? 0;
}

/** Kafka's LogSegment.largestTimestamp: max timestamp from the time index/appends, else mtime. */
export function largestTimestamp(io: FileIO, seg: LogSegment): { timestamp: number; source: 'records' | 'mtime' } {
  const ts = seg.largestTimestamp;
  if (ts >= 0) return { timestamp: ts, source: 'records' };
  return { timestamp: segmentMtime(io, seg), source: 'mtime' };
}

export class Cleaner {
  private readonly log: CleanableLog;
  private readonly opts: CleanerOptions;
  private readonly now: number;
  private readonly refs = new RecordRefs();
  private readonly reader: BatchReader;
  private readonly headerWindow = Buffer.allocUnsafe(HEADER_WINDOW_BYTES);
  private out: Output | undefined;
  /** Space for one batch at the end of the write buffer (flushing it first if needed). */
  private readonly alloc: Allocate = (size) => {
    if (this.wlen + size > this.wbuf.length) {
      this.flushWrites(this.out!);
      if (size > this.wbuf.length) this.wbuf = Buffer.allocUnsafe(size);
    }
    return { buf: this.wbuf, pos: this.wlen };
  };
  private keep = new Int32Array(64);
  private wbuf = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private wlen = 0;
  private winfos: AppendedBatchInfo[] = [];
  private readonly report: CleanReport;
  private map: OffsetMap | undefined;
  private lastYield = performance.now();
  private changed = false;
  private scratchDir: string | undefined;
  private readonly scratchSegments: LogSegment[] = [];
  private maxDecompressedBytes = 0;
  private progressDone = 0;
  private progressTotal = 0;
  private progressPhase: CleanProgress['phase'] = 'scan';

  constructor(log: CleanableLog, opts: CleanerOptions = {}) {
    this.log = log;
    this.opts = opts;
    this.now = opts.nowMs ?? Date.now();
    this.reader = new BatchReader(log.io);
    const bound = opts.maxMemoryBytes ?? DEFAULT_CLEANER_MEMORY_BYTES;
    this.report = {
      dir: log.dir,
      dryRun: Boolean(opts.dryRun),
      cleanupPolicy: log.config.cleanupPolicy,
      nowMs: this.now,
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
      segmentsBefore: log.segments.length,
      segmentsAfter: log.segments.length,
      groups: [],
      removedFiles: [],
      offsetMap: { slots: 0, memoryBytes: 0, maxEntries: 0, peakEntries: 0 },
      memory: { boundBytes: bound, accountedBytes: 0, peakRssBytes: 0, peakHeapAndBuffersBytes: 0 },
      durationMs: 0,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Driver

  async run(): Promise<CleanReport> {
    const t0 = performance.now();
    this.sampleMemory();
    let failed = true;
    try {
      await this.runRounds();
      failed = false;
    } finally {
      for (const s of this.scratchSegments) s.closeQuietly();
      try {
        if (this.scratchDir) removeTree(this.log.io, this.scratchDir);
      } catch (e) {
        if (!failed) throw e; // otherwise the first failure is the one reported
      }
      this.report.durationMs = Math.round(performance.now() - t0);
      this.sampleMemory();
    }
    return this.report;
  }

  private async runRounds(): Promise<void> {
    const log = this.log;
    const r = this.report;
    const leo = log.nextOffset;
    const checkpoint = this.opts.fromStart ? undefined : log.readCleanerCheckpoint();
    let firstDirty = checkpoint ?? log.logStartOffset;
    if (firstDirty < log.logStartOffset || firstDirty > leo) firstDirty = log.logStartOffset;
    r.firstDirtyOffset = firstDirty;
    r.cleanedThrough = firstDirty;

    // Everything that could stop the cleaner is checked before anything changes.
    let segments = [...log.segments];
    let facts = await this.analyze(segments, firstDirty);
    const firstUncleanable = Math.max(firstDirty, this.firstUncleanableOffset(segments, facts, firstDirty));
    r.firstUncleanableOffset = firstUncleanable;
    if (firstDirty >= firstUncleanable) {
      r.nothingToClean =
        firstUncleanable === (log.segments[log.segments.length - 1]?.baseOffset ?? leo)
          ? `nothing dirty: everything before the active segment (offset ${firstUncleanable}) is already clean (cleaner-offset-checkpoint ${firstDirty})`
          : `nothing dirty below the first uncleanable offset ${firstUncleanable}`;
      return;
    }
    const inRange = segments.filter((s) => s.baseOffset < firstUncleanable);
    this.checkCleanable(inRange, facts);
    this.sizeMemory(inRange, facts);
    r.bytesBefore = inRange.reduce((n, s) => n + s.size, 0);
    // Records without a key: the clean part now, the dirty part while the first map is built.
    const keyless = new KeylessTally();
    await this.checkKeys(segments, facts, log.logStartOffset, firstDirty, keyless);

    const maxPasses = this.opts.maxPasses ?? Infinity;
    let pass = 0;
    while (firstDirty < firstUncleanable && pass < maxPasses) {
      pass++;
      if (pass > 1) facts = await this.analyze(segments, firstDirty);
      const map = this.map!;
      map.clear();
      await this.buildOffsetMap(segments, facts, firstDirty, firstUncleanable, pass, pass === 1 ? keyless : undefined);
      if (pass === 1) keyless.throwIfAny();
      r.offsetMap.peakEntries = Math.max(r.offsetMap.peakEntries, map.size);
      const endOffset = map.latestOffset + 1;
      if (endOffset <= firstDirty) {
        throw new LogtoolError(
          'usage',
          `the offset map (${map.slots} slots, ${map.maxEntries} keys) cannot hold the keys of one batch at offset ${firstDirty}; give the cleaner more memory (--max-memory / --offset-map-bytes)`,
          { file: log.dir },
        );
      }
      const finalPass = endOffset >= firstUncleanable || pass >= maxPasses;
      segments = await this.recopy(segments, facts, endOffset, firstUncleanable, pass, finalPass);
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

  /** Kafka's LogCleanerManager.cleanableOffsets (first uncleanable part). */
  private firstUncleanableOffset(segments: LogSegment[], facts: LogFacts, firstDirty: number): number {
    // No segment at all (a reader of an empty partition directory): the empty log ends at its start.
    let u = Math.min(facts.lastStableOffset, segments[segments.length - 1]?.baseOffset ?? this.log.nextOffset);
    const lag = Math.max(this.log.config.minCompactionLagMs, 0);
    if (lag > 0) {
      for (let i = 0; i < segments.length - 1; i++) {
        const s = segments[i]!;
        const next = segments[i + 1]!;
        if (next.baseOffset <= firstDirty) continue; // not dirty
        if (largestTimestamp(this.log.io, s).timestamp > this.now - lag) {
          u = Math.min(u, s.baseOffset);
          break;
        }
      }
    }
    return u;
  }

  private checkCleanable(inRange: LogSegment[], facts: LogFacts): void {
    for (const s of inRange) {
      const p = facts.segments.get(s)?.problem;
      if (p) throw new LogtoolError('unsupported', `${p.reason} (batch at offset ${p.offset}); compaction stopped before changing anything`, { file: s.logPath, position: p.position });
    }
  }

  /** Splits the memory bound between I/O buffers and the offset map. */
  private sizeMemory(inRange: LogSegment[], facts: LogFacts): void {
    const bound = this.opts.maxMemoryBytes ?? DEFAULT_CLEANER_MEMORY_BYTES;
    let maxEntry = RECORD_BATCH_OVERHEAD;
    let compressed = false;
    let dirtyRecords = 0;
    for (const s of inRange) {
      const f = facts.segments.get(s)!;
      maxEntry = Math.max(maxEntry, f.maxEntryBytes);
      compressed ||= f.compressed;
      dirtyRecords += f.dirtyRecords;
    }
    // Read buffer (a chunk plus one entry), write buffer (the same), a rebuilt batch, and — with
    // compression — the decompressed records of one batch and their recompressed form.
    this.maxDecompressedBytes = compressed ? Math.max(8 * maxEntry, Math.min(64 << 20, Math.floor(bound / 8))) : 0;
    const reserve = 2 * (READ_CHUNK_BYTES + maxEntry) + HEADER_WINDOW_BYTES + 2 * maxEntry + 2 * this.maxDecompressedBytes + FIXED_OVERHEAD_BYTES;
    let mapBytes: number;
    if (this.opts.offsetMapBytes !== undefined) mapBytes = this.opts.offsetMapBytes;
    else {
      mapBytes = bound - reserve;
      // A map larger than the dirty range could ever fill is wasted memory.
      const useful = (Math.ceil((dirtyRecords + 1) / DEFAULT_LOAD_FACTOR) + 2) * OFFSET_MAP_ENTRY_BYTES;
      mapBytes = Math.min(mapBytes, Math.max(useful, 64 * OFFSET_MAP_ENTRY_BYTES));
    }
    if (mapBytes < 2 * OFFSET_MAP_ENTRY_BYTES || (this.opts.offsetMapBytes === undefined && reserve + mapBytes > bound)) {
      throw new LogtoolError(
        'usage',
        `--max-memory ${bound} is too small: I/O buffers for batches of up to ${maxEntry} bytes need ${reserve} bytes, leaving no room for the offset map`,
      );
    }
    this.map = new OffsetMap(mapBytes);
    this.report.offsetMap = { slots: this.map.slots, memoryBytes: this.map.memoryBytes, maxEntries: this.map.maxEntries, peakEntries: 0 };
    this.report.memory.accountedBytes = this.map.memoryBytes + reserve;
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

  // -------------------------------------------------------------------------------------------
  // Keys

  /**
   * Counts records without a key in [from, to) outside aborted transactions and control batches
   * (the already-clean part of the log; the dirty part is checked while its map is built).
   */
  private async checkKeys(segments: LogSegment[], facts: LogFacts, from: number, to: number, tally: KeylessTally): Promise<void> {
    const txn = new TxnMetadata(facts.aborted);
    const refs = this.refs;
    const inRange = segments.filter((s) => s.baseOffset < to);
    this.setProgress('scan', inRange.reduce((n, s) => n + s.size, 0));
    for (const seg of inRange) {
      for (const e of this.entries(seg, 0)) {
        this.progress(e.size);
        const h = e.header!;
        if (h.baseOffset >= to) break;
        if ((h.attributes & Attr.control) !== 0) {
          this.walk(e, seg);
          txn.onControlBatchRead(h, controlType(refs));
          continue;
        }
        if (txn.onBatchRead(h) || h.recordsCount === 0) continue;
        this.walk(e, seg);
        for (let i = 0; i < refs.count; i++) {
          if (refs.keyLen[i]! >= 0) continue;
          const offset = h.baseOffset + refs.offsetDelta[i]!;
          if (offset < from || offset >= to) continue;
          tally.add(offset, seg.logPath);
        }
        await this.maybeYield();
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Offset map

  /**
   * Kafka's buildOffsetMap. With a keyless tally (the first pass) it also counts records without
   * a key, and goes on scanning (without mapping) to the end of the dirty range after the map
   * fills, so that every record of the range is checked before anything changes.
   */
  private async buildOffsetMap(segments: LogSegment[], facts: LogFacts, start: number, end: number, pass: number, keyless?: KeylessTally): Promise<void> {
    const map = this.map!;
    const txn = new TxnMetadata(facts.aborted);
    const refs = this.refs;
    // Kafka's logSegments(start, end): the segment holding start, through those below end.
    let first = 0;
    for (let i = 0; i < segments.length; i++) if (segments[i]!.baseOffset <= start) first = i;
    const dirty = segments.slice(first).filter((s) => s.baseOffset < end);
    this.setProgress('map', dirty.reduce((n, s) => n + s.size, 0), pass);
    let full = false;
    for (let i = 0; i < dirty.length; i++) {
      const seg = dirty[i]!;
      const nextStart = i + 1 < dirty.length ? dirty[i + 1]!.baseOffset : end;
      const startPos = seg.offsetIndex.lookup(start).position;
      for (const e of this.entries(seg, startPos <= seg.size ? startPos : 0)) {
        this.progress(e.size);
        this.report.bytesScanned += e.size;
        const h = e.header!;
        if (h.baseOffset >= end) break;
        const last = h.baseOffset + h.lastOffsetDelta;
        if ((h.attributes & Attr.control) !== 0) {
          this.walk(e, seg);
          txn.onControlBatchRead(h, controlType(refs));
        } else if (!txn.onBatchRead(h) && h.recordsCount > 0) {
          this.walk(e, seg);
          const data = refs.data;
          for (let r = 0; r < refs.count; r++) {
            const kl = refs.keyLen[r]!;
            const offset = h.baseOffset + refs.offsetDelta[r]!;
            if (offset < start) continue;
            if (kl < 0) {
              keyless?.add(offset, seg.logPath);
              continue;
            }
            if (full) continue;
            const ks = refs.keyStart[r]!;
            if (!map.put(data, ks, ks + kl, offset)) {
              // Full: the round ends at the last mapped offset.
              full = true;
              if (!keyless) return;
            }
          }
        }
        if (!full && last >= start) map.updateLatestOffset(last);
        await this.maybeYield();
      }
      // Offsets gap at the end of a segment: fast-forward to just before the next one.
      if (!full) map.updateLatestOffset(Math.min(nextStart, end) - 1);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Recopy

  /** Kafka's groupSegmentsBySize. */
  private groupSegments(segs: LogSegment[], firstUncleanable: number): LogSegment[][] {
    const c = this.log.config;
    const groups: LogSegment[][] = [];
    let i = 0;
    while (i < segs.length) {
      const group = [segs[i]!];
      let logSize = segs[i]!.size;
      let indexSize = segs[i]!.offsetIndex.sizeInBytes;
      let timeIndexSize = segs[i]!.timeIndex.sizeInBytes;
      i++;
      while (i < segs.length) {
        const s = segs[i]!;
        const lastOffsetOfS = i + 1 < segs.length ? segs[i + 1]!.baseOffset - 1 : firstUncleanable - 1;
        if (
          logSize + s.size <= c.segmentBytes &&
          indexSize + s.offsetIndex.sizeInBytes <= c.segmentIndexBytes &&
          timeIndexSize + s.timeIndex.sizeInBytes <= c.segmentIndexBytes &&
          (s.size === 0 || lastOffsetOfS - group[0]!.baseOffset <= 0x7fffffff)
        ) {
          group.push(s);
          logSize += s.size;
          indexSize += s.offsetIndex.sizeInBytes;
          timeIndexSize += s.timeIndex.sizeInBytes;
          i++;
        } else break;
      }
      groups.push(group);
    }
    return groups;
  }

  /** Recopies [log start, endOffset) group by group; returns the segment list afterwards. */
  private async recopy(segments: LogSegment[], facts: LogFacts, endOffset: number, firstUncleanable: number, pass: number, finalPass: boolean): Promise<LogSegment[]> {
    const toClean = segments.filter((s) => s.baseOffset < endOffset);
    const rest = segments.filter((s) => s.baseOffset >= endOffset);
    const groups = this.groupSegments(toClean, firstUncleanable);
    const txn = new TxnMetadata(facts.aborted);
    const active = this.activeProducers(facts);
    this.setProgress('clean', toClean.reduce((n, s) => n + s.size, 0), pass);
    const result: LogSegment[] = [];
    for (const group of groups) {
      const before = group.reduce((n, s) => n + s.size, 0);
      const out = this.openOutput(group[0]!.baseOffset, pass, finalPass);
      this.out = out;
      txn.cleanedIndex = [];
      let unchanged = group.length === 1;
      try {
        for (const seg of group) {
          for (const e of this.entries(seg, 0)) {
            this.progress(e.size);
            this.report.bytesScanned += e.size;
            if (!this.filterBatch(e, seg, txn, active, firstUncleanable, out)) unchanged = false;
            await this.maybeYield();
          }
        }
        this.flushWrites(out);
        const mtime = segmentMtime(this.log.io, group[group.length - 1]!);
        out.finish(mtime, txn.cleanedIndex);
      } catch (e) {
        out.discard();
        throw e;
      }
      const file = path.join(this.log.dir, segmentFileName(out.baseOffset, LOG_SUFFIX));
      const g: CleanedGroup = { pass, replaced: group.map((s) => s.baseOffset), file, bytesBefore: before, bytesAfter: out.size, unchanged };
      this.report.groups.push(g);
      if (unchanged) {
        // Every batch was copied byte for byte: leave the segment in place.
        out.discard();
        result.push(group[0]!);
        if (this.opts.dryRun && finalPass) this.report.bytesAfter += before;
        continue;
      }
      if (this.opts.dryRun) {
        if (finalPass) this.report.bytesAfter += out.size;
        else result.push(out.segment!);
        continue;
      }
      this.changed = true;
      this.opts.onStep?.({ phase: 'cleaned-written', file: out.segment!.logPath });
      let removed: RemovedFile[];
      try {
        removed = this.log.replaceSegments(out.baseOffset, group, {
          keepRemovedDir: this.opts.keepRemovedDir,
          deleteDelayMs: this.opts.deleteDelayMs,
          onStep: this.opts.onStep,
        });
      } catch (e) {
        // A swap that never began (keep dir unusable, disk full) leaves its `.cleaned` output:
        // remove it. One whose renames began is the loader's to complete or undo (swapBegun): its
        // remaining `.cleaned` files are what tells the loader to undo it.
        if (!(typeof e === 'object' && e !== null && swapBegun.has(e))) {
          try {
            out.discard();
          } catch {
            // the swap's error is the one to report
          }
        }
        throw e;
      }
      this.report.removedFiles.push(...removed);
    }
    if (this.opts.dryRun && finalPass) {
      for (const s of rest) if (s.baseOffset < firstUncleanable) this.report.bytesAfter += s.size;
      this.report.segmentsAfter = groups.length + rest.length;
      return segments;
    }
    if (!this.opts.dryRun) return [...this.log.segments];
    return [...result, ...rest];
  }

  /**
   * Kafka's MemoryRecords.filterTo with the cleaner's RecordFilter for one batch. Appends what is
   * kept to the write buffer. Returns true when the batch was copied byte for byte.
   */
  private filterBatch(e: Batch, seg: LogSegment, txn: TxnMetadata, active: Map<number, ProducerState>, upperBound: number, out: Output): boolean {
    const h = e.header!;
    const r = this.report;
    const refs = this.refs;
    const map = this.map!;
    const last = h.baseOffset + h.lastOffsetDelta;
    const control = (h.attributes & Attr.control) !== 0;
    const hasHorizon = (h.attributes & Attr.deleteHorizon) !== 0;
    this.walk(e, seg);
    const canDiscard = control ? txn.onControlBatchRead(h, controlType(refs)) : txn.onBatchRead(h);
    const discardRecords = control ? canDiscard && hasHorizon && h.baseTimestamp <= this.now : canDiscard;
    let retention: Retention;
    const p = h.producerId >= 0 ? active.get(h.producerId) : undefined;
    const lastOfProducer = p !== undefined && (p.lastDataOffset >= 0 ? last === p.lastDataOffset : control && h.producerEpoch === p.epoch);
    if (lastOfProducer) retention = Retention.RetainEmpty;
    else if (last + 1 === upperBound) retention = Retention.RetainEmpty;
    else if (discardRecords) retention = Retention.Delete;
    else retention = Retention.DeleteEmpty;
    const containsMarkerForEmptyTxn = canDiscard && control;

    if (retention === Retention.Delete) {
      r.batchesRemoved++;
      r.recordsRemoved += refs.count;
      return false;
    }
    // Records.
    const n = refs.count;
    if (this.keep.length < n) this.keep = new Int32Array(Math.max(n, this.keep.length * 2));
    const keep = this.keep;
    let kept = 0;
    let tombstones = 0;
    let tombstonesDropped = 0;
    if (!discardRecords) {
      const retainDeletes = !hasHorizon || this.now < h.baseTimestamp;
      const latest = map.latestOffset;
      const data = refs.data;
      for (let i = 0; i < n; i++) {
        const offset = h.baseOffset + refs.offsetDelta[i]!;
        const isTombstone = refs.valueLen[i]! < 0;
        let retain: boolean;
        if (control || offset > latest) retain = true;
        else {
          const kl = refs.keyLen[i]!;
          if (kl < 0) retain = false;
          else {
            const found = map.get(data, refs.keyStart[i]!, refs.keyStart[i]! + kl);
            retain = offset >= found && (!isTombstone || retainDeletes);
            if (!retain && isTombstone && offset >= found) tombstonesDropped++;
          }
        }
        if (retain) {
          keep[kept++] = i;
          if (isTombstone && !control) tombstones++;
        }
      }
    }
    r.tombstonesRemoved += tombstonesDropped;
    r.recordsRemoved += n - kept;
    r.recordsRetained += kept;
    if (kept > 0) {
      const needHorizon = (tombstones > 0 || containsMarkerForEmptyTxn) && !hasHorizon;
      if (kept === n && !needHorizon) {
        this.write(e.buf, e.bufPos, e.size, last, h.maxTimestamp);
        r.batchesCopied++;
        return true;
      }
      const horizon = needHorizon ? this.now + this.log.config.deleteRetentionMs : hasHorizon ? h.baseTimestamp : undefined;
      if (needHorizon) r.deleteHorizonsSet++;
      const rebuilt = rebuildBatch(h, refs, keep, kept, { deleteHorizonMs: horizon }, this.alloc);
      this.commit(rebuilt.length, last, readMaxTimestamp(rebuilt));
      r.batchesRewritten++;
      return false;
    }
    if (retention === Retention.RetainEmpty) {
      const empty = emptyBatch(h, this.alloc, refs.exactMaxTimestamp);
      this.commit(empty.length, last, h.maxTimestamp);
      r.batchesEmptied++;
      // An already-empty batch written again unchanged.
      return empty.equals(e.buf.subarray(e.bufPos, e.bufPos + e.size));
    }
    r.batchesRemoved++;
    return false;
  }

  /** Copies a batch as it is into the write buffer. */
  private write(buf: Buffer, pos: number, size: number, lastOffset: number, maxTimestamp: number): void {
    const region = this.alloc(size);
    buf.copy(region.buf, region.pos, pos, pos + size);
    this.commit(size, lastOffset, maxTimestamp);
  }

  /** Accounts a batch just written at the end of the write buffer. */
  private commit(size: number, lastOffset: number, maxTimestamp: number): void {
    this.wlen += size;
    this.winfos.push({ size, lastOffset, maxTimestamp });
  }

  private flushWrites(out: Output): void {
    if (this.wlen === 0) return;
    out.append(this.wbuf, this.wlen, this.winfos);
    this.wlen = 0;
    this.winfos = [];
    if (this.wbuf.length > WRITE_BUFFER_BYTES) this.wbuf = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  }

  private openOutput(base: number, pass: number, finalPass: boolean): Output {
    const log = this.log;
    const c = log.config;
    if (this.opts.dryRun && finalPass) {
      // Count only.
      const o: Output = {
        baseOffset: base,
        size: 0,
        append(_buf, len) {
          o.size += len;
        },
        finish() {},
        discard() {},
      };
      return o;
    }
    const dir = this.opts.dryRun ? this.scratch(pass) : log.dir;
    const suffix = this.opts.dryRun ? '' : CLEANED_SUFFIX;
    let seg: LogSegment;
    try {
      seg = new LogSegment({
        io: log.io,
        dir,
        baseOffset: base,
        indexIntervalBytes: c.indexIntervalBytes,
        maxIndexBytes: c.segmentIndexBytes,
        writable: true,
        create: true,
        fileSuffix: suffix,
      });
    } catch (e) {
      // A segment half created (its .log made, an index not: a full disk) leaves no empty file.
      for (const s of SEGMENT_FILE_ORDER) removeQuietly(log.io, path.join(dir, segmentFileName(base, s) + suffix));
      throw e;
    }
    const io = log.io;
    const scratchSegments = this.scratchSegments;
    const txnPath = path.join(dir, segmentFileName(base, TXN_INDEX_SUFFIX) + (this.opts.dryRun ? '' : CLEANED_SUFFIX));
    io.unlink(txnPath);
    const o: Output = {
      baseOffset: base,
      size: 0,
      segment: seg,
      append(buf, len, infos) {
        seg.append(buf, 0, len, infos);
        o.size = seg.size;
      },
      finish(mtimeMs, txnEntries) {
        seg.onBecomeInactive();
        seg.flush();
        const files = [seg.logPath, seg.indexPath, seg.timeIndexPath];
        if (txnEntries.length > 0) {
          writeTxnIndex(io, txnPath, txnEntries);
          files.push(txnPath);
        }
        // Kafka keeps the last input segment's modification time on the cleaned files.
        for (const f of files) io.utimes(f, mtimeMs);
        // Scratch outputs of a dry run stay open: the next pass reads them.
        if (dir === log.dir) seg.close();
        else scratchSegments.push(seg);
      },
      discard() {
        const files = [seg.logPath, seg.indexPath, seg.timeIndexPath, txnPath];
        seg.closeQuietly();
        for (const f of files) io.unlink(f);
      },
    };
    return o;
  }

  private scratch(pass: number): string {
    const io = this.log.io;
    const prefix = path.join(os.tmpdir(), 'logtool-compact-dry-run-');
    this.scratchDir ??= io.mkdtemp ? io.mkdtemp(prefix) : realIO.mkdtemp(prefix);
    const d = path.join(this.scratchDir, `pass-${pass}`);
    io.mkdirp(d);
    return d;
  }

  // -------------------------------------------------------------------------------------------
  // Helpers

  /** Entries of a segment with CRC verification; corruption stops the cleaner. */
  private *entries(seg: LogSegment, startPosition: number): Generator<Batch> {
    try {
      yield* this.reader.batches(seg, startPosition);
    } catch (e) {
      if (!(e instanceof LogtoolError) || e.kind !== 'corrupt') throw e;
      throw new LogtoolError(
        'corrupt',
        `${e.message}; compaction stopped${this.changed ? ' (groups already swapped in are complete and consistent)' : ' before changing anything'} — run \`logtool recover\` first`,
        { file: e.file, position: e.position },
        { cause: e },
      );
    }
  }

  private walk(e: Batch, seg: LogSegment): void {
    walkRecords(e.buf, e.bufPos, e.header!, this.refs, {
      file: seg.logPath,
      filePosition: e.position,
      maxDecompressedBytes: this.maxDecompressedBytes || undefined,
    });
  }

  private setProgress(phase: CleanProgress['phase'], total: number, pass = 0): void {
    this.progressPhase = phase;
    this.progressDone = 0;
    this.progressTotal = total;
    this.progressPass = pass;
  }

  private progressPass = 0;

  private progress(bytes: number): void {
    this.progressDone += bytes;
  }

  /** Lets timers (spinner, other work) run every 25 ms, and samples memory then. */
  private async maybeYield(): Promise<void> {
    const now = performance.now();
    if (now - this.lastYield < 25) return;
    this.lastYield = now;
    this.sampleMemory();
    this.opts.onProgress?.({ pass: this.progressPass, phase: this.progressPhase, bytesDone: this.progressDone, bytesTotal: this.progressTotal });
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private sampleMemory(): void {
    const m = process.memoryUsage();
    const mem = this.report.memory;
    mem.peakRssBytes = Math.max(mem.peakRssBytes, m.rss);
    mem.peakHeapAndBuffersBytes = Math.max(mem.peakHeapAndBuffersBytes, m.heapUsed + m.external);
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
 * batches, larger batches are skipped over. Stops quietly at anything that is not a whole entry
 * (the map-building and recopying scans verify every batch and report corruption).
 */
function* batchHeaders(io: FileIO, seg: LogSegment, win: Buffer): Generator<HeaderEntry> {
  const size = seg.size;
  const fd = seg.fd;
  let winStart = 0;
  let winLen = 0;
  let pos = 0;
  const load = (at: number, need: number): boolean => {
    if (at >= winStart && at + need <= winStart + winLen) return true;
    const want = Math.min(HEADER_WINDOW_BYTES, size - at);
    if (want < need) return false;
    winLen = io.read(fd, win, 0, want, at);
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
        io.read(fd, buf, 0, entrySize, at);
        return { buf, pos: 0 };
      },
    };
    pos += entrySize;
  }
}

function readMaxTimestamp(batch: Buffer): number {
  return batch.readInt32BE(35) * 4294967296 + batch.readUInt32BE(39);
}

/** Compacts a log (see Cleaner). */
export function cleanLog(log: CleanableLog, opts: CleanerOptions = {}): Promise<CleanReport> {
  return new Cleaner(log, opts).run();
}
