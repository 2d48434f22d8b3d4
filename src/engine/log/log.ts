/**
 * One partition directory (Kafka's UnifiedLog/LocalLog): segments in offset order, append with
 * roll, read by offset or time, the three positions (written, committed, flushed), and close with
 * Kafka's clean-shutdown protocol. Opening runs the loader (loader.ts).
 */
import path from 'node:path';
import { realIO, type FileIO } from '../io.js';
import { LogtoolError, assert } from '../errors.js';
import { resolveConfig, type FlushMode, type LogConfig } from '../config.js';
import { requireCanonicalNameToCreate, requireTopicPartition, parseTopicPartition, type TopicPartition } from './topic-partition.js';
import { DirectoryLock } from './lock.js';
import { LogSegment, type AppendedBatchInfo } from '../segment/segment.js';
import { encodeBatch, setBaseOffset, LOG_OVERHEAD, type EncodeBatchOptions, type LogRecord, type RecordInput } from '../format/record-batch.js';
import { validateClientBatch } from '../format/batch-validator.js';
import { loadLog, type LoadOptions, type LoadReport } from '../recovery/loader.js';
import { emptyFlushStats, FlushPipeline, type AckStatus, type FlushOutcome, type FlushStats } from '../flush/group-commit.js';
import { LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, tpKey } from '../checkpoint.js';
import { readDirCheckpoint, requireWritableCheckpoints, updateDirCheckpoint, updateDirCheckpointAsync } from '../logdir/dir-checkpoints.js';
import { closeWriterAndMaybeMark, markerSeenByProcess, noteWriterGone, noteWriterOpened } from '../logdir/clean-shutdown.js';
import { loadRememberedConfig, rememberConfig } from './log-properties.js';
import { LogReader, type ReadOptions } from './log-reader.js';
// Retention and compaction
import { CLEANER_OFFSET_CHECKPOINT } from '../checkpoint.js';
import { segmentFileName } from '../segment/segment.js';
import { cleanLog, type CleanReport, type CleanerOptions } from '../cleaner/cleaner.js';
import { planRetention, retireSegmentFiles, segmentView, type RetentionPlan, type RetentionRules } from '../cleaner/retention.js';
import { swapSegments, type RemovedFile, type StepHook } from '../cleaner/swap.js';
import { beginChange, endChange, readGeneration, sleepSync } from '../cleaner/generation.js';
import type { RetentionOptions, RetentionReport } from '../cleaner/types.js';
import { compactionSchedule, type CompactionSchedule } from '../cleaner/schedule.js';
import type { LogWarning, SegmentInfo } from './log-types.js';

export type { LogWarning, SegmentInfo } from './log-types.js';

export interface LogOptions {
  /** Topic configs for this open; merged over `logtool.properties` and the defaults. */
  config?: Partial<LogConfig>;
  /** Persist `config` into `logtool.properties` so later opens use it (default true when writable). */
  rememberConfig?: boolean;
  /** Open without taking the writer lock and without changing anything on disk. */
  readOnly?: boolean;
  /** Create the directory when missing (writable opens only; default true). */
  create?: boolean;
  /** The file-I/O layer (tests substitute a recording or faulty one). */
  io?: FileIO;
  /** Called for every warning (torn tails, index problems). */
  onWarning?: (w: LogWarning) => void;
  /** Keep what recovery cuts off in `lost+found/` (default) or delete it. */
  discardLost?: boolean;
  /**
   * How often the thorough flush (active indexes, then the recovery-point checkpoint) runs in the
   * background; default 60 000 ms (Kafka's log.flush.offset.checkpoint.interval.ms).
   */
  thoroughFlushIntervalMs?: number;
  /** Loader knobs for `logtool recover`: full recovery whatever the marker says, progress. */
  recovery?: Pick<LoadOptions, 'forceRecoverAll' | 'onProgress'>;
  /** Apply retention in the background this often (writable opens; off when absent). See startRetention. */
  retentionCheckIntervalMs?: number;
  /**
   * Check this often whether the log needs compaction (min.cleanable.dirty.ratio,
   * max.compaction.lag.ms) and compact it when it does (writable opens with a cleanup.policy
   * containing compact; off when absent). See startCleaner.
   */
  cleanerCheckIntervalMs?: number;
}

export interface AppendOptions {
  /** Override the log's flush mode for this append. */
  flushMode?: FlushMode;
  /** Sync mode: resolve once committed; the data still rides the next group fsync. */
  ackBeforeSync?: boolean;
  compression?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  transactional?: boolean;
  control?: boolean;
  logAppendTime?: boolean;
}

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  count: number;
  /**
   * What is guaranteed when the promise resolves:
   * - `flushed`: on disk (fdatasync returned), survives power loss;
   * - `committed`: handed to the OS (write returned), survives a crash of the process, not power loss;
   * - `written`: in the process's write buffer, lost if the process dies before the committer runs;
   * - `timed-out`: sync mode only — not flushed within syncTimeoutMs; it may or may not become durable.
   */
  status: AckStatus;
}

export interface LogPosition {
  /** Next offset after the data at this position. */
  offset: number;
  /** Base offset of the segment the position is in. */
  segment: number;
  /** Byte position in that segment's `.log`. */
  position: number;
}

/** The three positions of a log (docs/durability.md), plus the recovery point. */
export interface LogPositions {
  /** Accepted by the process: includes the write buffer (its byte position assumes no roll). */
  written: LogPosition;
  /** Handed to the OS with write(2): survives a crash of the process. */
  committed: LogPosition;
  /** Made durable with fdatasync(2): survives power loss. */
  flushed: LogPosition;
  /** Offset below which recovery may skip segments (in memory; ≤ flushed). */
  recoveryPoint: number;
  /** The recovery point last persisted in recovery-point-offset-checkpoint. */
  checkpointedRecoveryPoint: number;
  /** The same three positions as byte totals since this open (monotonic across segments). */
  bytes: { written: number; committed: number; flushed: number };
}

interface PendingBatch {
  buf: Buffer;
  info: AppendedBatchInfo;
  baseOffset: number;
  records: number;
}

const NOTHING_COMMITTED: { bytes: number; records: number } = Object.freeze({ bytes: 0, records: 0 });
/** A run of small batches up to this size is joined into one write when committed together. */
const JOIN_WRITES_UP_TO_BYTES = 256 * 1024;
/** A sync batch this large is committed when appended instead of waiting for its group's write. */
const COMMIT_AT_ONCE_BYTES = 64 * 1024;
/** Largest write-buffer arena of buffered mode (commit.bytes plus room for the batch that crosses it). */
const MAX_ARENA_BYTES = 64 * 1024 * 1024;
/** Largest reused encoding buffer of append() (larger batches get their own). */
const MAX_ENCODE_SCRATCH_BYTES = 4 * 1024 * 1024;

export class Log {
  readonly dir: string;
  readonly logDir: string;
  readonly topicPartition: TopicPartition | undefined;
  readonly config: LogConfig;
  readonly io: FileIO;
  readonly readOnly: boolean;
  /** Ascending by base offset; the last one is active. */
  segments: LogSegment[];
  logStartOffset: number;
  /** Offset the next appended record gets (includes the write buffer). */
  private nextOffsetValue: number;
  private committedNextOffset: number;
  private committedTotal = 0;
  /** Bytes accepted since open (committed + write buffer). */
  private writtenTotal = 0;
  /** Committed bytes made durable by the last successful flush. */
  private flushedTotal = 0;
  private writeBufferBytes = 0;
  /** What the active segment's indexes held when last fsynced (thorough flush). */
  private indexesFlushed: { segment: LogSegment | undefined; entries: number } = { segment: undefined, entries: -1 };
  private flushedPos: LogPosition;
  private recoveryPoint: number;
  private lastCheckpointedRecoveryPoint: number;
  private dirDirty = false;
  /** Segments rolled since the last flush whose indexes still need fsync. */
  private sealedUnflushed: LogSegment[] = [];
  private readonly lock: DirectoryLock | undefined;
  private readonly pipeline: FlushPipeline | undefined;
  private writeBuffer: PendingBatch[] = [];
  /** Reused by append() for batches that are committed before it returns (async, ackBeforeSync). */
  private encodeScratch: Buffer | undefined;
  /** Buffered mode: append() encodes into this arena at arenaPos; reset once the buffer is committed. */
  private arena: Buffer | undefined;
  private arenaPos = 0;
  private backgroundError: unknown;
  private closed = false;
  private readonly onWarning: (w: LogWarning) => void;
  readonly loadReport: LoadReport;

  private constructor(init: {
    dir: string;
    tp: TopicPartition | undefined;
    config: LogConfig;
    io: FileIO;
    readOnly: boolean;
    lock: DirectoryLock | undefined;
    segments: LogSegment[];
    logStartOffset: number;
    nextOffset: number;
    recoveryPoint: number;
    onWarning: (w: LogWarning) => void;
    loadReport: LoadReport;
    thoroughFlushIntervalMs?: number;
    retentionCheckIntervalMs?: number;
    cleanerCheckIntervalMs?: number;
  }) {
    this.dir = init.dir;
    this.logDir = path.dirname(init.dir);
    this.topicPartition = init.tp;
    this.config = init.config;
    this.io = init.io;
    this.readOnly = init.readOnly;
    this.lock = init.lock;
    this.segments = init.segments;
    this.logStartOffset = init.logStartOffset;
    this.nextOffsetValue = init.nextOffset;
    this.committedNextOffset = init.nextOffset;
    this.recoveryPoint = init.recoveryPoint;
    this.lastCheckpointedRecoveryPoint = init.recoveryPoint;
    this.onWarning = init.onWarning;
    this.loadReport = init.loadReport;
    const active = this.segments[this.segments.length - 1];
    this.flushedPos = { offset: init.nextOffset, segment: active?.baseOffset ?? init.nextOffset, position: active?.size ?? 0 };
    if (!this.readOnly) {
      this.pipeline = new FlushPipeline(
        {
          commitBuffered: () => this.commitBuffered(),
          bufferedBytes: () => this.writeBufferBytes,
          committedBytes: () => this.committedTotal,
          flushCommitted: () => this.flushCommitted(),
          thoroughFlush: () => this.thoroughFlush(),
          onBackgroundError: (e) => {
            this.backgroundError ??= e;
          },
        },
        this.config,
        { thoroughFlushIntervalMs: init.thoroughFlushIntervalMs },
      );
    }
    if (init.retentionCheckIntervalMs !== undefined && !this.readOnly) this.startRetention(init.retentionCheckIntervalMs);
    if (init.cleanerCheckIntervalMs !== undefined && !this.readOnly && this.config.cleanupPolicy.split(',').some((p) => p.trim() === 'compact')) this.startCleaner(init.cleanerCheckIntervalMs);
  }

  /** Opens (creating if allowed) a partition directory. */
  static open(dir: string, options: LogOptions = {}): Log {
    const io = options.io ?? realIO;
    const readOnly = options.readOnly ?? false;
    const resolved = path.resolve(dir);
    const onWarning = options.onWarning ?? (() => {});
    let tp = parseTopicPartition(resolved);
    let lock: DirectoryLock | undefined;
    const st = io.stat(resolved);
    if (st && !st.isDirectory) throw new LogtoolError('usage', 'not a directory (give a partition directory such as mytopic-0)', { file: dir });
    if (readOnly) {
      if (!st) throw new LogtoolError('not-found', 'no such directory', { file: dir });
    } else {
      tp = requireTopicPartition(resolved);
      // The directory's shared checkpoints must be readable before anything changes (dir-checkpoints.ts).
      requireWritableCheckpoints(io, path.dirname(resolved));
      if (!st) {
        if (options.create === false) throw new LogtoolError('not-found', 'no such directory', { file: dir });
        requireCanonicalNameToCreate(resolved, tp);
        io.mkdirp(resolved);
        io.syncDir(path.dirname(resolved));
      }
      lock = DirectoryLock.acquire(resolved);
    }
    try {
      const remembered = loadRememberedConfig(io, resolved);
      const config = resolveConfig(remembered, options.config);
      if (!readOnly && options.config && options.rememberConfig !== false) rememberConfig(io, resolved, remembered, options.config);
      const directoryMarker = readOnly ? undefined : markerSeenByProcess(path.dirname(resolved));
      const loaded = loadLog({ io, dir: resolved, tp, config, readOnly, onWarning, discardLost: options.discardLost ?? false, directoryMarker, ...options.recovery });
      if (!readOnly) {
        // After a kill -9 the page cache may still hold data that never reached the disk. Sync
        // what lies past the recovery point once, so the flushed position reported from this open
        // on is true (cheap after a clean shutdown: nothing is dirty).
        const segs = loaded.segments;
        for (let i = 0; i < segs.length; i++) if (i === segs.length - 1 || segs[i + 1]!.baseOffset > loaded.recoveryPoint) segs[i]!.flushLog();
        io.syncDir(resolved);
      }
      const log = new Log({
        dir: resolved,
        tp,
        config,
        io,
        readOnly,
        lock,
        segments: loaded.segments,
        logStartOffset: loaded.logStartOffset,
        nextOffset: loaded.nextOffset,
        recoveryPoint: loaded.recoveryPoint,
        onWarning,
        loadReport: loaded.report,
        thoroughFlushIntervalMs: options.thoroughFlushIntervalMs,
        retentionCheckIntervalMs: options.retentionCheckIntervalMs,
        cleanerCheckIntervalMs: options.cleanerCheckIntervalMs,
      });
      if (!readOnly) noteWriterOpened(resolved, loaded.markerContent);
      return log;
    } catch (e) {
      lock?.release();
      throw e;
    }
  }

  get activeSegment(): LogSegment {
    const s = this.segments[this.segments.length - 1];
    assert(s, 'a log always has at least one segment');
    return s;
  }

  /** Offset the next record will get (Kafka's log end offset, counting buffered appends). */
  get nextOffset(): number {
    return this.nextOffsetValue;
  }

  /** Written (accepted), committed (in the file) and flushed (durable) positions; docs/durability.md. */
  positions(): LogPositions {
    // A reader of an empty partition directory has no segment: the empty log Kafka would create
    // starts at the log end offset.
    const active = this.segments[this.segments.length - 1] ?? { baseOffset: this.nextOffsetValue, size: 0 };
    return {
      written: { offset: this.nextOffsetValue, segment: active.baseOffset, position: active.size + this.writeBufferBytes },
      committed: { offset: this.committedNextOffset, segment: active.baseOffset, position: active.size },
      flushed: { ...this.flushedPos },
      recoveryPoint: this.recoveryPoint,
      checkpointedRecoveryPoint: this.lastCheckpointedRecoveryPoint,
      bytes: { written: this.writtenTotal, committed: this.committedTotal, flushed: this.flushedTotal },
    };
  }

  /** Counters of the flush pipeline (fsyncs, group commits, timeouts …). */
  get flushStats(): FlushStats {
    return this.pipeline?.stats ?? emptyFlushStats();
  }

  private ensureWritable(): void {
    if (this.closed) throw new LogtoolError('closed', 'log is closed', { file: this.dir });
    if (this.readOnly) throw new LogtoolError('usage', 'log was opened read-only', { file: this.dir });
    if (this.backgroundError) throw this.backgroundError;
  }

  /**
   * Appends records as one batch. Offsets are assigned at once (in call order); the promise
   * resolves when the batch is acknowledged under the flush mode (see AppendResult.status).
   */
  append(records: readonly RecordInput[], options: AppendOptions = {}): Promise<AppendResult> {
    this.ensureWritable();
    if (records.length === 0) throw new LogtoolError('usage', 'append needs at least one record');
    const baseOffset = this.nextOffsetValue;
    const encodeOpts: EncodeBatchOptions = {
      baseOffset,
      compression: options.compression,
      producerId: options.producerId,
      producerEpoch: options.producerEpoch,
      baseSequence: options.baseSequence,
      transactional: options.transactional,
      control: options.control,
      logAppendTime: options.logAppendTime,
    };
    // Encoded into reused scratch space: a batch committed before append returns (async,
    // ackBeforeSync, large sync batches) needs no allocation and is still in the CPU cache for
    // write(2); appendEncoded copies a batch out of it when it has to keep it.
    // Buffered batches are encoded one after another into the write-buffer arena, which the
    // committer writes with one write(2) per contiguous run, without joining copies.
    const mode = options.flushMode ?? this.config.flushMode;
    const scratch = mode !== 'buffered';
    if (scratch) encodeOpts.into = this.encodeScratch;
    else {
      this.arena ??= Buffer.allocUnsafeSlow(Math.min(MAX_ARENA_BYTES, Math.max(65536, this.config.commitBytes + 65536)));
      if (this.arenaPos < this.arena.length) encodeOpts.into = this.arena.subarray(this.arenaPos);
    }
    const buf = encodeBatch(records, encodeOpts);
    if (scratch) {
      if (buf.buffer !== this.encodeScratch?.buffer && buf.length <= MAX_ENCODE_SCRATCH_BYTES) {
        this.encodeScratch = Buffer.allocUnsafeSlow(Math.min(MAX_ENCODE_SCRATCH_BYTES, 2 ** Math.ceil(Math.log2(Math.max(buf.length, 65536)))));
      }
      return this.appendBatch(buf, options, false);
    }
    const inArena = buf.buffer === this.arena!.buffer;
    if (inArena) this.arenaPos += buf.length; // before appendEncoded: a commit it triggers resets the arena
    try {
      return this.appendBatch(buf, options, false);
    } catch (e) {
      if (inArena && this.arenaPos === buf.byteOffset - this.arena!.byteOffset + buf.length) this.arenaPos -= buf.length;
      throw e;
    }
  }

  /**
   * Appends an already-encoded v2 batch (for example one copied from another log). Its base
   * offset is rewritten to the log end offset; its CRC stays valid since it does not cover it.
   * The buffer belongs to the log from here on (buffered and sync modes keep it until commit).
   *
   * What the returned promise means, by mode (docs/durability.md):
   * - sync: the batch waits in the write buffer; its group is committed with one write and made
   *   durable with one fdatasync; resolves `flushed`, or `timed-out` after syncTimeoutMs;
   * - sync + ackBeforeSync, async: committed (written to the file) before this returns; resolves
   *   `committed`; the background flusher (or the next group) makes it durable;
   * - buffered: copied into the write buffer; resolves `written`; the committer writes it.
   *
   * The batch is checked as Kafka's LogValidator checks a producer's (format/batch-validator.ts):
   * CRC-32C, offsets and count, records, timestamps, control and producer fields. A batch that
   * fails is refused with a `corrupt` error (exit 3), nothing is appended and the log stays usable.
   * `options.control` admits a control batch; `options.logAppendTime` says the batch carries
   * LogAppendTime.
   */
  appendEncoded(batch: Buffer, options: AppendOptions = {}): Promise<AppendResult> {
    return this.appendBatch(batch, options, true);
  }

  /** appendEncoded; `fromCaller` false for append()'s own encoding, which needs no validation. */
  private appendBatch(batch: Buffer, options: AppendOptions, fromCaller: boolean): Promise<AppendResult> {
    this.ensureWritable();
    if (batch.length < 61 || batch[16] !== 2 || batch.readInt32BE(8) + LOG_OVERHEAD !== batch.length) {
      throw new LogtoolError('usage', 'appendEncoded takes exactly one v2 record batch');
    }
    if (batch.length > this.config.maxMessageBytes) {
      throw new LogtoolError('too-large', `batch of ${batch.length} bytes exceeds max.message.bytes (${this.config.maxMessageBytes})`, { file: this.dir });
    }
    if (fromCaller) validateClientBatch(batch, { file: this.dir, allowControl: options.control === true, logAppendTime: options.logAppendTime === true });
    const baseOffset = this.nextOffsetValue;
    setBaseOffset(batch, 0, baseOffset);
    const lastOffsetDelta = batch.readInt32BE(23);
    const count = batch.readInt32BE(57);
    const lastOffset = baseOffset + lastOffsetDelta;
    const maxTimestamp = batch.readInt32BE(35) * 4294967296 + batch.readUInt32BE(39);
    const size = batch.length;
    const pending: PendingBatch = { buf: batch, info: { size, lastOffset, maxTimestamp }, baseOffset, records: count };
    this.nextOffsetValue = lastOffset + 1;
    this.writtenTotal += size;
    const mode = options.flushMode ?? this.config.flushMode;
    const pipeline = this.pipeline!;
    const waitsForFlush = mode === 'sync' && !options.ackBeforeSync;
    // Buffered batches, and small sync ones (their group is committed with one write), wait in
    // the write buffer.
    if (mode === 'buffered' || (waitsForFlush && size < COMMIT_AT_ONCE_BYTES)) {
      if (batch.buffer === this.encodeScratch?.buffer) pending.buf = Buffer.from(batch); // append()'s scratch is reused
      this.writeBuffer.push(pending);
      this.writeBufferBytes += size;
      if (mode === 'buffered') {
        pipeline.noteBuffered();
        return Promise.resolve({ baseOffset, lastOffset, count, status: 'written' });
      }
      return pipeline.waitForFlush(this.writtenTotal, size, count, (status): AppendResult => ({ baseOffset, lastOffset, count, status }));
    }
    // Committed now, after anything still buffered (in order): async, ackBeforeSync, and sync
    // batches of COMMIT_AT_ONCE_BYTES or more (written while hot; they still wait for the flush).
    let committed: { bytes: number; records: number };
    if (this.writeBuffer.length === 0) {
      try {
        this.commitBatches([pending]);
      } catch (e) {
        this.backgroundError ??= e;
        throw e;
      }
      committed = { bytes: size, records: count };
    } else {
      this.writeBuffer.push(pending);
      this.writeBufferBytes += size;
      committed = this.commitBuffered();
    }
    if (waitsForFlush) return pipeline.waitForFlush(this.writtenTotal, size, count, (status): AppendResult => ({ baseOffset, lastOffset, count, status }));
    pipeline.noteCommitted(committed.bytes, committed.records);
    if (mode === 'sync') pipeline.requestFlush();
    return Promise.resolve({ baseOffset, lastOffset, count, status: 'committed' });
  }

  /**
   * Writes batches to the active segment, rolling first where Kafka would. Consecutive batches
   * that the segment takes without a roll are committed together: small ones joined into one
   * write, large ones written as they are (no copy).
   */
  private commitBatches(batches: PendingBatch[]): void {
    const c = this.config;
    let i = 0;
    while (i < batches.length) {
      const first = batches[i]!;
      this.maybeRoll(first.info.size, first.baseOffset, first.info.lastOffset, first.info.maxTimestamp);
      const seg = this.activeSegment;
      // Each batch adds at most one entry to each index: stay within their free slots.
      const indexRoom = Math.min(seg.offsetIndex.maxEntries - seg.offsetIndex.entries, seg.timeIndex.maxEntries - 1 - seg.timeIndex.entries);
      const firstTs = seg.size > 0 ? seg.firstBatchMaxTimestamp() : first.info.maxTimestamp;
      let j = i + 1;
      let bytes = first.info.size;
      while (j < batches.length && j - i < indexRoom) {
        const b = batches[j]!;
        if (seg.size + bytes > c.segmentBytes - b.info.size) break;
        if (b.info.lastOffset - seg.baseOffset > 0x7fffffff) break;
        if ((firstTs >= 0 ? b.info.maxTimestamp - firstTs : Date.now() - seg.createdMs) > this.maxSegmentMs) break;
        bytes += b.info.size;
        j++;
      }
      // Write [i, j) in runs, one write(2) each: batches lying back to back in memory (the
      // buffered arena) as they are, small scattered ones joined by a copy, a large one alone.
      let k = i;
      while (k < j) {
        let m = k + 1;
        let runBytes = batches[k]!.info.size;
        let adjacent = true;
        while (m < j) {
          const prev = batches[m - 1]!.buf;
          const cur = batches[m]!.buf;
          adjacent &&= cur.buffer === prev.buffer && cur.byteOffset === prev.byteOffset + prev.length;
          if (!adjacent && runBytes + cur.length > JOIN_WRITES_UP_TO_BYTES) break;
          runBytes += cur.length;
          m++;
        }
        if (m - k === 1) {
          const b = batches[k]!;
          seg.append(b.buf, 0, b.info.size, [b.info]);
        } else {
          const run = batches.slice(k, m);
          const head = run[0]!.buf;
          const bytes = adjacent ? Buffer.from(head.buffer, head.byteOffset, runBytes) : Buffer.concat(run.map((b) => b.buf), runBytes);
          seg.append(bytes, 0, runBytes, run.map((b) => b.info));
        }
        this.committedTotal += runBytes;
        this.committedNextOffset = batches[m - 1]!.info.lastOffset + 1;
        k = m;
      }
      i = j;
    }
  }

  /** Writes the write buffer to the file, in order. A failure fails the log. */
  private commitBuffered(): { bytes: number; records: number } {
    if (this.writeBuffer.length === 0) return NOTHING_COMMITTED;
    const pending = this.writeBuffer;
    const bytes = this.writeBufferBytes;
    this.writeBuffer = [];
    this.writeBufferBytes = 0;
    let records = 0;
    for (const p of pending) records += p.records;
    try {
      this.commitBatches(pending);
    } catch (e) {
      this.backgroundError ??= e;
      throw e;
    }
    this.arenaPos = 0; // nothing buffered refers to the arena any more
    return { bytes, records };
  }

  /**
   * segment.ms, or for a compacted log with max.compaction.lag.ms set, the smaller of the two
   * (Kafka's UnifiedLog), so that the active segment — never cleaned — becomes cleanable in time.
   */
  private get maxSegmentMs(): number {
    const c = this.config;
    const compacted = c.cleanupPolicy.split(',').some((p) => p.trim() === 'compact');
    return compacted && c.maxCompactionLagMs > 0 ? Math.min(c.segmentMs, c.maxCompactionLagMs) : c.segmentMs;
  }

  /** Kafka's roll conditions (kafka-format.md §9), evaluated before each append. */
  private maybeRoll(incomingBytes: number, incomingBaseOffset: number, incomingLastOffset: number, incomingMaxTimestamp: number): void {
    const seg = this.activeSegment;
    const c = this.config;
    let reason: string | undefined;
    if (seg.size > c.segmentBytes - incomingBytes) reason = 'size';
    else if (seg.size > 0) {
      const first = seg.firstBatchMaxTimestamp();
      const waited = first >= 0 ? incomingMaxTimestamp - first : Date.now() - seg.createdMs;
      if (waited > this.maxSegmentMs) reason = 'time';
    }
    if (!reason && seg.indexesFull) reason = 'index full';
    if (!reason && incomingLastOffset - seg.baseOffset > 0x7fffffff) reason = 'offset overflow';
    if (!reason) return;
    if (seg.size === 0 && seg.baseOffset === incomingBaseOffset) return; // KAFKA-6388: nothing to roll
    this.roll(Math.max(incomingBaseOffset, this.committedNextOffset));
  }

  /**
   * Seals the active segment and starts a new one at the log end offset (the only offset
   * newBaseOffset may name). Refuses any other offset, and the log end offset when a segment
   * already starts there (an empty active segment): below it the new segment would overlap
   * acknowledged data, above it the next records would fall below the segment's base. The new
   * `.log` is created exclusively, never reopened for truncation.
   */
  roll(newBaseOffset = this.committedNextOffset): LogSegment {
    // Not ensureWritable: close() commits the write buffer, which may roll, after `closed` is set.
    if (this.readOnly) throw new LogtoolError('usage', 'log was opened read-only', { file: this.dir });
    if (!Number.isSafeInteger(newBaseOffset) || newBaseOffset < this.committedNextOffset) {
      throw new LogtoolError('usage', `cannot roll to offset ${newBaseOffset}: it is below the log end offset ${this.committedNextOffset}`, { file: this.dir });
    }
    if (newBaseOffset > this.committedNextOffset) {
      throw new LogtoolError('usage', `cannot roll to offset ${newBaseOffset}: it is above the log end offset ${this.committedNextOffset}, so the next records would fall below the segment's base`, { file: this.dir });
    }
    const existing = this.segments.find((s) => s.baseOffset === newBaseOffset);
    if (existing) {
      throw new LogtoolError('usage', `cannot roll to offset ${newBaseOffset}: segment ${path.basename(existing.logPath)} already starts there`, { file: this.dir });
    }
    const old = this.activeSegment;
    old.onBecomeInactive();
    this.sealedUnflushed.push(old);
    const seg = new LogSegment({
      io: this.io,
      dir: this.dir,
      baseOffset: newBaseOffset,
      indexIntervalBytes: this.config.indexIntervalBytes,
      maxIndexBytes: this.config.segmentIndexBytes,
      writable: true,
      create: 'exclusive',
    });
    this.segments.push(seg);
    this.dirDirty = true;
    // Kafka flushes the sealed segment asynchronously after a roll; so do we.
    this.pipeline?.requestFlush();
    return seg;
  }

  /**
   * Makes everything committed durable, in this order (docs/durability.md):
   *   1. each segment sealed since the last flush: fdatasync `.log`, then `.index`, `.timeindex`;
   *   2. fdatasync of the active `.log` (its indexes are rebuilt by recovery; the thorough flush
   *      syncs them too);
   *   3. fsync of the partition directory if segment files were created since the last flush.
   * Then the flushed position and the in-memory recovery point advance to what was committed
   * when the flush started. Returns that committed byte total and the fsyncs issued.
   */
  private async flushCommitted(): Promise<FlushOutcome> {
    const total = this.committedTotal;
    const offset = this.committedNextOffset;
    const active = this.activeSegment;
    const pos: LogPosition = { offset, segment: active.baseOffset, position: active.size };
    const sealed = this.sealedUnflushed;
    const dirDirty = this.dirDirty;
    if (sealed.length === 0 && !dirDirty && total === this.flushedTotal) return { bytes: total, fsyncs: 0 };
    this.sealedUnflushed = [];
    this.dirDirty = false;
    let fsyncs = 0;
    try {
      // Every fsync here is asynchronous: appends keep being accepted while the disk works.
      for (const s of sealed) {
        await s.flushLogAsync();
        await s.offsetIndex.flushAsync();
        await s.timeIndex.flushAsync();
        s.dirty = false;
        fsyncs += 3;
      }
      if (total > this.flushedTotal && active.size > 0) {
        await active.flushLogAsync();
        fsyncs++;
      }
      if (dirDirty) {
        await this.io.syncDirAsync(this.dir);
        fsyncs++;
      }
    } catch (e) {
      this.sealedUnflushed = sealed.concat(this.sealedUnflushed);
      this.dirDirty ||= dirDirty;
      throw e;
    }
    this.flushedTotal = total;
    this.flushedPos = pos;
    // Every segment below the one holding `offset` was sealed before this flush began, so it is
    // now durable with its indexes; recovery re-validates the segment holding the recovery point.
    this.recoveryPoint = Math.max(this.recoveryPoint, offset);
    return { bytes: total, fsyncs };
  }

  /**
   * The thorough part of a flush (after flushCommitted): fdatasync of the active segment's
   * `.index` and `.timeindex`, then the recovery-point checkpoint (tmp file, fsync, rename,
   * directory fsync). Skips what has not changed. Returns the fsyncs issued.
   */
  private async thoroughFlush(): Promise<number> {
    let fsyncs = 0;
    const active = this.activeSegment;
    const entries = active.offsetIndex.entries + active.timeIndex.entries;
    if (this.indexesFlushed.segment !== active || this.indexesFlushed.entries !== entries) {
      await active.offsetIndex.flushAsync();
      await active.timeIndex.flushAsync();
      this.indexesFlushed = { segment: active, entries };
      fsyncs += 2;
    }
    if (this.recoveryPoint !== this.lastCheckpointedRecoveryPoint) {
      await this.writeRecoveryPointAsync();
      fsyncs += 2;
    }
    return fsyncs;
  }

  /** writeRecoveryPoint for the thorough flush: no lock wait or fsync blocks the event loop. */
  private async writeRecoveryPointAsync(): Promise<void> {
    if (!this.topicPartition) return;
    const key = tpKey(this.topicPartition.topic, this.topicPartition.partition);
    const rp = this.recoveryPoint;
    await updateDirCheckpointAsync(this.io, this.logDir, RECOVERY_POINT_CHECKPOINT, key, rp);
    this.lastCheckpointedRecoveryPoint = rp;
  }

  /** Persists the recovery point (after a flush; never ahead of flushed data). */
  private writeRecoveryPoint(): void {
    if (!this.topicPartition) return;
    const tp = this.topicPartition;
    const rp = this.recoveryPoint;
    updateDirCheckpoint(this.io, this.logDir, RECOVERY_POINT_CHECKPOINT, tpKey(tp.topic, tp.partition), rp);
    this.lastCheckpointedRecoveryPoint = rp;
  }

  /** Persists the log start offset (only when above the first segment's base, as Kafka does). */
  writeLogStartOffset(): void {
    if (!this.topicPartition) return;
    const tp = this.topicPartition;
    const lso = this.logStartOffset;
    const needed = lso > this.segments[0]!.baseOffset;
    updateDirCheckpoint(this.io, this.logDir, LOG_START_OFFSET_CHECKPOINT, tpKey(tp.topic, tp.partition), needed ? lso : undefined);
  }

  /**
   * Flushes everything now (write buffer included), then the active indexes and the
   * recovery-point checkpoint: a thorough flush, as on the background interval and on close.
   */
  async flush(): Promise<void> {
    this.ensureWritable();
    await this.pipeline!.flushNow({ thorough: true });
  }

  // -------------------------------------------------------------------------------------------
  // Reading

  /** A reader over this log's committed data. */
  reader(): LogReader {
    return new LogReader(this, this.onWarning);
  }

  /** Records from an offset or time (see ReadOptions); a generator, streaming segment by segment. */
  read(options: ReadOptions = {}): Generator<LogRecord> {
    return this.reader().records(options);
  }

  /** The segment holding offset (floor by base offset), or undefined below the first. */
  segmentFor(offset: number): LogSegment | undefined {
    let lo = 0;
    let hi = this.segments.length - 1;
    let found: LogSegment | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.segments[mid]!;
      if (s.baseOffset <= offset) {
        found = s;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /** Segments with their offsets and timestamps (reads each segment's first and last batch). */
  segmentInfos(): SegmentInfo[] {
    return this.segments.map((s) => this.reader().segmentInfo(s));
  }

  warn(w: LogWarning): void {
    this.onWarning(w);
  }

  // -------------------------------------------------------------------------------------------
  // Retention and compaction (kafka-format.md §14–15; the rules live in src/engine/cleaner/)

  /** A compaction is running (background retention waits for it). */
  private cleaning = false;
  private retentionTimer: NodeJS.Timeout | undefined;
  /** Physical removals scheduled after file.delete.delay.ms, run early by runPendingDeletions(). */
  private readonly pendingDeletions = new Map<NodeJS.Timeout, () => void>();

  /**
   * Applies retention now (Kafka's deleteOldSegments): log start offset, then retention.bytes,
   * then retention.ms (those two only with cleanup.policy delete). Deleted segments are renamed
   * `.deleted` and removed after `deleteDelayMs` (default file.delete.delay.ms; 0 = at once).
   * With dryRun nothing changes (works on a read-only log too).
   */
  applyRetention(opts: RetentionOptions = {}): RetentionReport {
    if (!opts.dryRun) this.ensureWritable();
    if (!this.readOnly && !this.closed) this.commitBuffered();
    const c = this.config;
    const policy = c.cleanupPolicy.split(',').map((s) => s.trim());
    const leo = this.readOnly ? this.nextOffsetValue : this.committedNextOffset;
    const rules: RetentionRules = {
      logStartOffset: this.logStartOffset,
      logEndOffset: leo,
      highWatermark: leo,
      nowMs: opts.nowMs ?? Date.now(),
      retentionMs: opts.retentionMs ?? c.retentionMs,
      retentionBytes: opts.retentionBytes ?? c.retentionBytes,
      deletePolicy: policy.includes('delete'),
    };
    return this.deleteByPlan(planRetention(this.segments.map((s) => segmentView(this.io, s)), rules), rules, opts);
  }

  /**
   * `kafka-delete-records`: advances the log start offset to `offset` (never backwards; at most the
   * log end offset), persists it in log-start-offset-checkpoint, and deletes the segments wholly
   * below it. Reads below the log start offset fail from then on.
   */
  deleteRecordsBefore(offset: number, opts: Omit<RetentionOptions, 'retentionMs' | 'retentionBytes'> = {}): RetentionReport {
    if (!opts.dryRun) this.ensureWritable();
    if (!this.readOnly && !this.closed) this.commitBuffered();
    const leo = this.readOnly ? this.nextOffsetValue : this.committedNextOffset;
    if (!Number.isSafeInteger(offset) || offset < 0) throw new LogtoolError('usage', `offset must be a non-negative integer, not ${offset}`);
    if (offset > leo) throw new LogtoolError('out-of-range', `offset ${offset} is beyond the log end offset ${leo}; records can only be deleted up to it`, { file: this.dir });
    const rules: RetentionRules = {
      logStartOffset: Math.max(this.logStartOffset, offset),
      logEndOffset: leo,
      highWatermark: leo,
      nowMs: opts.nowMs ?? Date.now(),
      retentionMs: -1,
      retentionBytes: -1,
      deletePolicy: false,
    };
    const plan = planRetention(this.segments.map((s) => segmentView(this.io, s)), rules);
    plan.logStartOffset = Math.max(plan.logStartOffset, rules.logStartOffset);
    return this.deleteByPlan(plan, rules, opts);
  }

  private deleteByPlan(plan: RetentionPlan, rules: RetentionRules, opts: RetentionOptions): RetentionReport {
    const report: RetentionReport = {
      dir: this.dir,
      dryRun: Boolean(opts.dryRun),
      nowMs: rules.nowMs,
      cleanupPolicy: this.config.cleanupPolicy,
      retentionMs: rules.retentionMs,
      retentionBytes: rules.retentionBytes,
      logStartOffsetBefore: this.logStartOffset,
      logStartOffsetAfter: plan.logStartOffset,
      logEndOffset: rules.logEndOffset,
      rolled: plan.rollFirst,
      deleted: plan.deletions.map((d) => ({ ...d, file: path.join(this.dir, segmentFileName(d.baseOffset, '.log')), files: [] as RemovedFile[] })),
      bytesDeleted: plan.deletions.reduce((n, d) => n + d.sizeBytes, 0),
      segmentsBefore: this.segments.length,
      segmentsAfter: this.segments.length - plan.deletions.length + (plan.rollFirst ? 1 : 0),
    };
    const raisesStart = plan.logStartOffset > this.logStartOffset;
    if (opts.dryRun || (plan.deletions.length === 0 && !raisesStart)) return report;
    const token = beginChange(this.io, this.dir);
    try {
      if (plan.rollFirst) this.roll(rules.logEndOffset);
      const doomedBases = new Set(plan.deletions.map((d) => d.baseOffset));
      const doomed = this.segments.filter((s) => doomedBases.has(s.baseOffset) && s !== this.activeSegment);
      // A new array: in-process readers iterating the old one keep a consistent view.
      this.segments = this.segments.filter((s) => !doomed.includes(s));
      const deleted: string[] = [];
      for (const seg of doomed) {
        // Kafka also retires the producer-state snapshot named after a deleted segment.
        const snapshot = path.join(this.dir, segmentFileName(seg.baseOffset, '.snapshot'));
        const files = this.io.stat(snapshot) ? [...seg.files(), snapshot] : seg.files();
        const r = retireSegmentFiles(this.io, files, this.keepDirFor(opts.keepRemovedDir), opts.onStep);
        deleted.push(...r.deleted);
        report.deleted.find((d) => d.baseOffset === seg.baseOffset)!.files = r.removed;
      }
      if (doomed.length > 0) this.io.syncDir(this.dir);
      this.logStartOffset = Math.max(plan.logStartOffset, this.segments[0]!.baseOffset);
      report.logStartOffsetAfter = this.logStartOffset;
      this.writeLogStartOffset();
      this.scheduleRemoval(doomed, deleted, opts.deleteDelayMs ?? this.config.fileDeleteDelayMs);
    } finally {
      endChange(this.io, this.dir, token);
    }
    return report;
  }

  private keepDirStamp: string | undefined;

  /** `<keepDir>/<partition>/<time of the first removal by this open>/`. */
  private keepDirFor(keepDir: string | undefined): string | undefined {
    if (!keepDir) return undefined;
    this.keepDirStamp ??= new Date().toISOString().replace(/[:.]/g, '-');
    return path.join(path.resolve(keepDir), path.basename(this.dir), this.keepDirStamp);
  }

  /** Closes retired segments and unlinks their `.deleted` files, at once or after delayMs. */
  private scheduleRemoval(segments: LogSegment[], deletedFiles: string[], delayMs: number): void {
    const finish = () => {
      for (const s of segments) s.closeQuietly();
      for (const f of deletedFiles) this.io.unlink(f);
    };
    if (delayMs <= 0) return finish();
    const t = setTimeout(() => {
      this.pendingDeletions.delete(t);
      try {
        finish();
      } catch (e) {
        this.onWarning({ file: this.dir, message: `removing deleted segment files failed: ${(e as Error).message}` });
      }
    }, delayMs);
    t.unref();
    this.pendingDeletions.set(t, finish);
  }

  /** Removes now every `.deleted` file still waiting for file.delete.delay.ms. */
  runPendingDeletions(): number {
    const all = [...this.pendingDeletions];
    this.pendingDeletions.clear();
    for (const [t, finish] of all) {
      clearTimeout(t);
      finish();
    }
    return all.length;
  }

  /**
   * Applies retention every intervalMs (Kafka's log.retention.check.interval.ms, default 5 min)
   * while the log is open. The timer never keeps the process alive; it skips a round while a
   * compaction runs and stops when the log closes.
   */
  startRetention(intervalMs = 300_000, onResult?: (r: RetentionReport) => void): void {
    this.ensureWritable();
    this.stopRetention();
    const t = setInterval(() => {
      if (this.closed) return this.stopRetention();
      if (this.cleaning) return;
      try {
        const r = this.applyRetention();
        onResult?.(r);
      } catch (e) {
        this.onWarning({ file: this.dir, message: `background retention failed: ${(e as Error).message}` });
      }
    }, intervalMs);
    t.unref();
    this.retentionTimer = t;
  }

  stopRetention(): void {
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    this.retentionTimer = undefined;
  }

  private cleanerTimer: NodeJS.Timeout | undefined;
  /** The last error of a background compaction (recorded, never thrown; also sent to onWarning). */
  cleanerError: unknown;
  /** Background compactions run so far (those the schedule asked for). */
  backgroundCompactions = 0;

  /**
   * Kafka's cleaner schedule for this log now (cleaner/schedule.ts): the dirty ratio at segment
   * granularity and whether min.cleanable.dirty.ratio or max.compaction.lag.ms asks for a
   * compaction. Changes nothing.
   */
  compactionSchedule(opts: { nowMs?: number; fromStart?: boolean } = {}): CompactionSchedule {
    return compactionSchedule(this, opts);
  }

  /** Compacts only when the schedule says so (what Kafka's cleaner thread does for this log). */
  async compactIfNeeded(opts: CleanerOptions = {}): Promise<{ schedule: CompactionSchedule; report?: CleanReport }> {
    const schedule = this.compactionSchedule({ nowMs: opts.nowMs, fromStart: opts.fromStart });
    if (!schedule.needed) return { schedule };
    return { schedule, report: await this.compact({ nowMs: schedule.nowMs, ...opts }) };
  }

  /**
   * Checks every intervalMs (Kafka's log.cleaner.backoff.ms) whether the log needs compaction and
   * compacts it when it does. The timer never keeps the process alive, skips a round while a
   * compaction runs (never two at once), and stops when the log closes; errors go to cleanerError
   * and onWarning.
   */
  /** The background compaction in progress, which close() waits for. */
  private backgroundCompaction: Promise<void> | undefined;

  startCleaner(intervalMs = 15_000, onResult?: (r: { schedule: CompactionSchedule; report?: CleanReport }) => void): void {
    this.ensureWritable();
    this.stopCleaner();
    const t = setInterval(() => {
      if (this.closed) return this.stopCleaner();
      if (this.cleaning) return;
      // Async: a synchronous failure (the schedule, ensureWritable) rejects too.
      this.backgroundCompaction = this.compactIfNeeded().then(
        (r) => {
          if (r.report) this.backgroundCompactions++;
          onResult?.(r);
        },
        (e: unknown) => {
          this.cleanerError = e;
          this.onWarning({ file: this.dir, message: `background compaction failed: ${(e as Error).message}` });
        },
      ).finally(() => {
        this.backgroundCompaction = undefined;
      });
    }, intervalMs);
    t.unref();
    this.cleanerTimer = t;
  }

  stopCleaner(): void {
    if (this.cleanerTimer) clearInterval(this.cleanerTimer);
    this.cleanerTimer = undefined;
  }

  /**
   * Compacts the log by Kafka's cleaner rules (cleaner/cleaner.ts): the latest record per key
   * survives, offsets never change, tombstones go delete.retention.ms after their first cleaning.
   * With dryRun nothing changes (works on a read-only log too).
   */
  async compact(opts: CleanerOptions = {}): Promise<CleanReport> {
    if (!opts.dryRun) this.ensureWritable();
    if (this.closed) throw new LogtoolError('closed', 'log is closed', { file: this.dir });
    if (this.cleaning) throw new LogtoolError('usage', 'a compaction of this log is already running', { file: this.dir });
    this.cleaning = true;
    const run = (async () => {
      try {
        // Sealed segments and their indexes durable before they are read and replaced.
        if (!this.readOnly) await this.flush();
        return await cleanLog(this, { deleteDelayMs: this.config.fileDeleteDelayMs, ...opts, keepRemovedDir: this.keepDirFor(opts.keepRemovedDir) });
      } finally {
        this.cleaning = false;
      }
    })();
    // close() waits for it (foreground or background): segments stay open and the lock held until it ends.
    this.compaction = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** The compaction in progress (settles when it ends, never rejects), which close() waits for. */
  private compaction: Promise<void> | undefined;

  /** This partition's entry in `<log dir>/cleaner-offset-checkpoint`. */
  readCleanerCheckpoint(): number | undefined {
    if (!this.topicPartition) return undefined;
    const cp = readDirCheckpoint(this.io, this.logDir, CLEANER_OFFSET_CHECKPOINT);
    return cp.get(tpKey(this.topicPartition.topic, this.topicPartition.partition));
  }

  writeCleanerCheckpoint(offset: number): void {
    if (!this.topicPartition) return;
    const tp = this.topicPartition;
    updateDirCheckpoint(this.io, this.logDir, CLEANER_OFFSET_CHECKPOINT, tpKey(tp.topic, tp.partition), offset);
  }

  /**
   * Swaps the `.cleaned` segment at `base` in for `old` by Kafka's crash-safe protocol
   * (cleaner/swap.ts) and updates the segment list. Returns the files that left the log.
   */
  replaceSegments(base: number, old: LogSegment[], opts: { keepRemovedDir?: string; deleteDelayMs?: number; onStep?: StepHook } = {}): RemovedFile[] {
    this.ensureWritable();
    const delay = opts.deleteDelayMs ?? 0;
    const token = beginChange(this.io, this.dir);
    try {
      const res = swapSegments({
        io: this.io,
        dir: this.dir,
        newBases: [base],
        old: old.map((s) => ({ baseOffset: s.baseOffset, files: s.files() })),
        keepDir: opts.keepRemovedDir,
        deleteNow: delay <= 0,
        hook: opts.onStep,
      });
      const seg = new LogSegment({
        io: this.io,
        dir: this.dir,
        baseOffset: base,
        indexIntervalBytes: this.config.indexIntervalBytes,
        maxIndexBytes: this.config.segmentIndexBytes,
        writable: true,
      });
      const next = this.segments.filter((s) => !old.includes(s));
      let at = next.findIndex((s) => s.baseOffset > base);
      if (at < 0) at = next.length;
      next.splice(at, 0, seg);
      this.segments = next;
      this.scheduleRemoval(old, delay <= 0 ? [] : res.deleted, delay);
      return res.removed;
    } finally {
      endChange(this.io, this.dir, token);
    }
  }

  /**
   * Opens read-only without ever observing a half-done segment replacement or deletion by a
   * writer in another process: it waits while one is in progress and retries if one happened
   * during the open (the generation seqlock of cleaner/generation.ts). Once open, the reader holds
   * its files, so later compactions or deletions never change what it reads. Waits on timers, so
   * the event loop keeps serving other callers meanwhile.
   */
  static async openStable(dir: string, options: Omit<LogOptions, 'readOnly'> = {}, timeoutMs = 10_000): Promise<Log> {
    const attempts = Log.stableOpenAttempts(dir, options, timeoutMs);
    for (let step = attempts.next(); ; step = attempts.next()) {
      if (step.done) return step.value;
      await new Promise((r) => setTimeout(r, step.value));
    }
  }

  /**
   * openStable for the CLI's commands, whose process serves no other caller: the wait between
   * retries blocks the thread (Atomics.wait), so the command's synchronous open stays synchronous.
   * A library embedding logtool uses openStable.
   */
  static openStableSync(dir: string, options: Omit<LogOptions, 'readOnly'> = {}, timeoutMs = 10_000): Log {
    const attempts = Log.stableOpenAttempts(dir, options, timeoutMs);
    for (let step = attempts.next(); ; step = attempts.next()) {
      if (step.done) return step.value;
      sleepSync(step.value);
    }
  }

  /** The seqlock's retry rule, shared by both forms: yields how long to wait before trying again. */
  private static *stableOpenAttempts(dir: string, options: Omit<LogOptions, 'readOnly'>, timeoutMs: number): Generator<number, Log, void> {
    const io = options.io ?? realIO;
    const resolved = path.resolve(dir);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const g1 = readGeneration(io, resolved);
      if (g1.busy && Date.now() < deadline) {
        yield 2;
        continue;
      }
      let log: Log | undefined;
      let error: unknown;
      try {
        log = Log.open(dir, { ...options, readOnly: true });
      } catch (e) {
        error = e;
      }
      const g2 = readGeneration(io, resolved);
      if (g2.value === g1.value && !g2.busy) {
        if (error) throw error;
        return log!;
      }
      void log?.close();
      if (Date.now() >= deadline) {
        if (error) throw error;
        throw new LogtoolError('io', `the directory kept changing for ${timeoutMs} ms; could not open a stable view`, { file: dir });
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Close

  /**
   * Kafka's shutdown of one log: commits and flushes everything (pending sync appends resolve as
   * flushed), seals the active segment's indexes (final time-index entry, trimmed, fsynced),
   * writes the recovery point (= log end offset) and the log-start-offset checkpoints, then the
   * clean-shutdown marker (when no other writer holds a partition of the same log directory).
   * Appends made once close has begun are refused.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    // Background jobs stop first; a compaction in progress (foreground or background, a dry run
    // included) finishes before segments close, so nothing reads a closed segment or changes a
    // file once the lock is released.
    this.stopCleaner();
    this.stopRetention();
    if (this.backgroundCompaction) await this.backgroundCompaction;
    while (this.compaction && this.cleaning) await this.compaction;
    if (this.closed) return; // a concurrent close finished meanwhile
    if (this.readOnly) {
      this.closed = true;
      for (const s of this.segments) s.closeQuietly();
      return;
    }
    this.closed = true; // refuses appends from here on
    let firstError: unknown;
    try {
      if (!this.backgroundError) {
        await this.pipeline!.flushNow();
        const active = this.activeSegment;
        for (const s of this.segments) if (s !== active && s.dirty) s.flush();
        active.onBecomeInactive();
        active.flush(); // .log (already durable), then the trimmed indexes
        this.io.syncDir(this.dir);
        this.recoveryPoint = this.committedNextOffset;
        this.flushedPos = { offset: this.committedNextOffset, segment: active.baseOffset, position: active.size };
        this.writeRecoveryPoint();
        if (this.logStartOffset > this.segments[0]!.baseOffset) this.writeLogStartOffset();
        closeWriterAndMaybeMark(this.io, this.dir);
      }
    } catch (e) {
      firstError = e;
    }
    noteWriterGone(this.dir); // a failed close leaves the marker to the directory's other writers: absent
    // Whatever failed above, every descriptor is closed and the lock released; the first failure
    // is the one reported.
    this.pipeline?.close();
    // Delayed removals of retired segments run now, under the lock: none outlives close().
    this.runPendingDeletionsQuietly();
    for (const s of this.segments) {
      try {
        s.closeQuietly();
      } catch (e) {
        firstError ??= e;
      }
    }
    try {
      this.lock?.release();
    } catch (e) {
      firstError ??= e;
    }
    if (firstError !== undefined) throw firstError;
  }

  /** runPendingDeletions for close: a failure is a warning (the next open removes `.deleted` files). */
  private runPendingDeletionsQuietly(): void {
    try {
      this.runPendingDeletions();
    } catch (e) {
      this.onWarning({ file: this.dir, message: `removing deleted segment files failed: ${(e as Error).message}; the next open removes them` });
    }
  }

  /** Simulates a crash for tests: drops locks and fds without flushing or trimming. */
  abandon(): void {
    this.pipeline?.close();
    this.stopCleaner();
    this.stopRetention();
    // A crashed process removes nothing later: the next open deletes the `.deleted` files.
    for (const t of this.pendingDeletions.keys()) clearTimeout(t);
    this.pendingDeletions.clear();
    this.closed = true;
    for (const s of this.segments) s.closeQuietly();
    if (!this.readOnly) noteWriterGone(this.dir);
    this.lock?.release();
  }

  get isClosed(): boolean {
    return this.closed;
  }
}
