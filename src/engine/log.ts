/**
 * One partition directory (Kafka's UnifiedLog/LocalLog): segments in offset order, append with
 * roll, read by offset or time, the three positions (written, committed, flushed), and close with
 * Kafka's clean-shutdown protocol. Opening runs the loader (loader.ts).
 */
import path from 'node:path';
import { realIO, type FileIO } from './io.js';
import { LogtoolError, assert } from './errors.js';
import { resolveConfig, type FlushMode, type LogConfig } from './config.js';
import { requireTopicPartition, parseTopicPartition, type TopicPartition } from './partition.js';
import { DirectoryLock } from './lock.js';
import { LogSegment, type AppendedBatchInfo } from './segment.js';
import { encodeBatch, setBaseOffset, LOG_OVERHEAD, type EncodeBatchOptions, type LogRecord, type RecordInput } from './format/record-batch.js';
import { loadLog, type LoadReport } from './loader.js';
import { FlushPipeline, type AckStatus, type FlushStats } from './flush/group-commit.js';
import {
  CLEAN_SHUTDOWN_FILE,
  LOG_START_OFFSET_CHECKPOINT,
  RECOVERY_POINT_CHECKPOINT,
  readOffsetCheckpoint,
  tpKey,
  writeOffsetCheckpoint,
  writeFileAtomic,
} from './checkpoint.js';
import { loadRememberedConfig, rememberConfig } from './log-properties.js';
import { LogReader, type ReadOptions } from './log-reader.js';

export interface LogWarning {
  file: string;
  position?: number;
  message: string;
}

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

export interface SegmentInfo {
  baseOffset: number;
  file: string;
  sizeBytes: number;
  firstOffset: number | undefined;
  lastOffset: number | undefined;
  firstTimestamp: number | undefined;
  maxTimestamp: number | undefined;
  indexEntries: number;
  timeIndexEntries: number;
}

interface PendingBatch {
  buf: Buffer;
  info: AppendedBatchInfo;
  baseOffset: number;
}

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
  private flushedPos: LogPosition;
  private recoveryPoint: number;
  private lastCheckpointedRecoveryPoint: number;
  private lastCheckpointMs = Date.now();
  private dirDirty = false;
  /** Segments rolled since the last flush whose indexes still need fsync. */
  private sealedUnflushed: LogSegment[] = [];
  private readonly lock: DirectoryLock | undefined;
  private readonly pipeline: FlushPipeline | undefined;
  private writeBuffer: PendingBatch[] = [];
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
          committedBytes: () => this.committedTotal,
          flushCommitted: () => this.flushCommitted(),
          afterFlush: () => this.afterFlush(),
          onBackgroundError: (e) => {
            this.backgroundError ??= e;
          },
        },
        this.config,
      );
    }
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
      if (!st) {
        if (options.create === false) throw new LogtoolError('not-found', 'no such directory', { file: dir });
        io.mkdirp(resolved);
        io.syncDir(path.dirname(resolved));
      }
      lock = DirectoryLock.acquire(resolved);
    }
    try {
      const remembered = loadRememberedConfig(io, resolved);
      const config = resolveConfig(remembered, options.config);
      if (!readOnly && options.config && options.rememberConfig !== false) rememberConfig(io, resolved, remembered, options.config);
      const loaded = loadLog({ io, dir: resolved, tp, config, readOnly, onWarning, discardLost: options.discardLost ?? false });
      return new Log({
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
      });
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

  /** Written (accepted), committed (in the file) and flushed (durable) positions. */
  positions(): { written: LogPosition; committed: LogPosition; flushed: LogPosition; recoveryPoint: number } {
    const active = this.activeSegment;
    const bufferedBytes = this.writeBuffer.reduce((n, b) => n + b.buf.length, 0);
    return {
      written: { offset: this.nextOffsetValue, segment: active.baseOffset, position: active.size + bufferedBytes },
      committed: { offset: this.committedNextOffset, segment: active.baseOffset, position: active.size },
      flushed: { ...this.flushedPos },
      recoveryPoint: this.recoveryPoint,
    };
  }

  get flushStats(): FlushStats {
    return this.pipeline?.stats ?? { fsyncs: 0, groups: 0, timedOut: 0, commits: 0 };
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
    const buf = encodeBatch(records, encodeOpts);
    return this.appendEncoded(buf, options);
  }

  /**
   * Appends an already-encoded v2 batch (for example one copied from another log). Its base
   * offset is rewritten to the log end offset; its CRC stays valid since it does not cover it.
   */
  appendEncoded(batch: Buffer, options: AppendOptions = {}): Promise<AppendResult> {
    this.ensureWritable();
    if (batch.length < 61 || batch[16] !== 2 || batch.readInt32BE(8) + LOG_OVERHEAD !== batch.length) {
      throw new LogtoolError('usage', 'appendEncoded takes exactly one v2 record batch');
    }
    if (batch.length > this.config.maxMessageBytes) {
      throw new LogtoolError('too-large', `batch of ${batch.length} bytes exceeds max.message.bytes (${this.config.maxMessageBytes})`, { file: this.dir });
    }
    const baseOffset = this.nextOffsetValue;
    setBaseOffset(batch, 0, baseOffset);
    const lastOffsetDelta = batch.readInt32BE(23);
    const count = batch.readInt32BE(57);
    const lastOffset = baseOffset + lastOffsetDelta;
    const maxTimestamp = batch.readInt32BE(35) * 4294967296 + batch.readUInt32BE(39);
    const info: AppendedBatchInfo = { size: batch.length, lastOffset, maxTimestamp };
    this.nextOffsetValue = lastOffset + 1;
    const mode = options.flushMode ?? this.config.flushMode;
    const result = (status: AckStatus): AppendResult => ({ baseOffset, lastOffset, count, status });
    const pipeline = this.pipeline!;
    if (mode === 'buffered') {
      this.writeBuffer.push({ buf: batch, info, baseOffset });
      pipeline.noteBuffered(batch.length);
      return Promise.resolve(result('written'));
    }
    // Earlier buffered appends must reach the file first, in order.
    if (this.writeBuffer.length > 0) this.commitBuffered();
    this.commitBatches([{ buf: batch, info, baseOffset }]);
    if (mode === 'async') {
      pipeline.noteCommitted(batch.length, count);
      return Promise.resolve(result('committed'));
    }
    if (options.ackBeforeSync) {
      pipeline.requestFlush();
      return Promise.resolve(result('committed'));
    }
    return pipeline.waitForFlush(this.committedTotal, batch.length, count).then(result);
  }

  /** Writes batches to the active segment, rolling first where Kafka would. */
  private commitBatches(batches: PendingBatch[]): void {
    let i = 0;
    while (i < batches.length) {
      const first = batches[i]!;
      this.maybeRoll(first.info.size, first.baseOffset, first.info.lastOffset, first.info.maxTimestamp);
      const seg = this.activeSegment;
      // Group consecutive batches that fit this segment into one write.
      let j = i + 1;
      let bytes = first.info.size;
      while (j < batches.length) {
        const b = batches[j]!;
        if (seg.size + bytes + b.info.size > this.config.segmentBytes || b.info.lastOffset - seg.baseOffset > 0x7fffffff) break;
        bytes += b.info.size;
        j++;
      }
      if (j - i === 1) seg.append(first.buf, 0, first.buf.length, [first.info]);
      else {
        const joined = Buffer.concat(batches.slice(i, j).map((b) => b.buf), bytes);
        seg.append(joined, 0, bytes, batches.slice(i, j).map((b) => b.info));
      }
      this.committedTotal += bytes;
      this.committedNextOffset = batches[j - 1]!.info.lastOffset + 1;
      i = j;
    }
  }

  private commitBuffered(): void {
    if (this.writeBuffer.length === 0) return;
    const pending = this.writeBuffer;
    this.writeBuffer = [];
    this.commitBatches(pending);
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
      if (waited > c.segmentMs) reason = 'time';
    }
    if (!reason && seg.indexesFull) reason = 'index full';
    if (!reason && incomingLastOffset - seg.baseOffset > 0x7fffffff) reason = 'offset overflow';
    if (!reason) return;
    if (seg.size === 0 && seg.baseOffset === incomingBaseOffset) return; // KAFKA-6388: nothing to roll
    this.roll(Math.max(incomingBaseOffset, this.committedNextOffset));
  }

  /** Seals the active segment and starts a new one at newBaseOffset. */
  roll(newBaseOffset = this.committedNextOffset): LogSegment {
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
      create: true,
      maxEntryBytes: this.config.maxReadEntryBytes,
    });
    this.segments.push(seg);
    this.dirDirty = true;
    // Kafka flushes the sealed segment asynchronously after a roll; so do we.
    this.pipeline?.requestFlush();
    return seg;
  }

  /**
   * Makes everything committed durable: sealed segments (log, then indexes), then the active
   * `.log`, then the partition directory if files were created. Returns the committed total covered.
   */
  private async flushCommitted(): Promise<number> {
    const total = this.committedTotal;
    const offset = this.committedNextOffset;
    const active = this.activeSegment;
    const pos: LogPosition = { offset, segment: active.baseOffset, position: active.size };
    const sealed = this.sealedUnflushed;
    this.sealedUnflushed = [];
    const dirDirty = this.dirDirty;
    this.dirDirty = false;
    try {
      for (const s of sealed) {
        await s.flushLogAsync();
        s.flush(); // indexes (and a cheap second datasync of the log)
      }
      await active.flushLogAsync();
      if (dirDirty) this.io.syncDir(this.dir);
    } catch (e) {
      this.sealedUnflushed = sealed.concat(this.sealedUnflushed);
      this.dirDirty ||= dirDirty;
      throw e;
    }
    if (pos.offset > this.flushedPos.offset || total > 0) this.flushedPos = pos;
    // Recovery point: everything below the active segment is fully flushed (indexes too) once no
    // sealed segment awaits its flush.
    if (this.sealedUnflushed.length === 0) this.recoveryPoint = Math.max(this.recoveryPoint, offset);
    return total;
  }

  private afterFlush(): void {
    const now = Date.now();
    if (this.sealedUnflushed.length === 0 && this.recoveryPoint > this.lastCheckpointedRecoveryPoint && now - this.lastCheckpointMs >= RECOVERY_CHECKPOINT_INTERVAL_MS) {
      this.writeRecoveryPoint();
    }
  }

  /** Persists the recovery point (after a flush; never ahead of flushed data). */
  private writeRecoveryPoint(): void {
    if (!this.topicPartition) return;
    const tp = this.topicPartition;
    const rp = this.recoveryPoint;
    const file = path.join(this.logDir, RECOVERY_POINT_CHECKPOINT);
    DirectoryLock.withLock(this.logDir, () => {
      const cp = readOffsetCheckpointTolerant(this.io, file);
      cp.set(tpKey(tp.topic, tp.partition), rp);
      writeOffsetCheckpoint(this.io, file, cp);
    });
    this.lastCheckpointedRecoveryPoint = rp;
    this.lastCheckpointMs = Date.now();
  }

  /** Persists the log start offset (only when above the first segment's base, as Kafka does). */
  writeLogStartOffset(): void {
    if (!this.topicPartition) return;
    const tp = this.topicPartition;
    const file = path.join(this.logDir, LOG_START_OFFSET_CHECKPOINT);
    const lso = this.logStartOffset;
    const needed = lso > this.segments[0]!.baseOffset;
    DirectoryLock.withLock(this.logDir, () => {
      const cp = readOffsetCheckpointTolerant(this.io, file);
      const key = tpKey(tp.topic, tp.partition);
      if (needed) cp.set(key, lso);
      else if (!cp.has(key)) return;
      else cp.delete(key);
      writeOffsetCheckpoint(this.io, file, cp);
    });
  }

  /** Flushes everything (write buffer included) and persists the recovery point. */
  async flush(): Promise<void> {
    this.ensureWritable();
    await this.pipeline!.flushNow();
    for (const s of this.segments) if (s !== this.activeSegment) s.flush();
    this.activeSegment.flush();
    this.writeRecoveryPoint();
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
  // Close

  /**
   * Flushes everything, writes the recovery point, trims the active segment's indexes and writes
   * the clean-shutdown marker (when no other writer holds a partition of the same log directory).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.readOnly) {
      this.closed = true;
      for (const s of this.segments) s.closeQuietly();
      return;
    }
    try {
      if (!this.backgroundError) {
        await this.pipeline!.drain();
        this.commitBuffered();
        for (const s of this.segments) if (s.dirty) s.flush();
        this.activeSegment.flush();
        this.activeSegment.onBecomeInactive();
        this.activeSegment.flush();
        this.io.syncDir(this.dir);
        this.recoveryPoint = this.committedNextOffset;
        this.flushedPos = { offset: this.committedNextOffset, segment: this.activeSegment.baseOffset, position: this.activeSegment.size };
        await this.pipeline!.flushNow().catch(() => undefined);
        this.writeRecoveryPoint();
        if (this.logStartOffset > this.segments[0]!.baseOffset) this.writeLogStartOffset();
        this.writeCleanShutdownMarker();
      }
    } finally {
      this.pipeline?.close();
      this.closed = true;
      for (const s of this.segments) s.closeQuietly();
      this.lock?.release();
    }
  }

  /**
   * Kafka's marker covers a whole log directory. logtool writes it only when no sibling
   * partition is held by another writer, so it never vouches for a log still being written.
   */
  private writeCleanShutdownMarker(): void {
    let siblings: string[] = [];
    try {
      siblings = this.io.readdir(this.logDir).filter((n) => parseTopicPartition(n) !== undefined && path.join(this.logDir, n) !== this.dir);
    } catch {
      return;
    }
    for (const s of siblings) {
      const p = path.join(this.logDir, s);
      if (this.io.stat(p)?.isDirectory && DirectoryLock.isHeld(p)) return;
    }
    writeFileAtomic(this.io, path.join(this.logDir, CLEAN_SHUTDOWN_FILE), '');
  }

  /** Simulates a crash for tests: drops locks and fds without flushing or trimming. */
  abandon(): void {
    this.pipeline?.close();
    this.closed = true;
    for (const s of this.segments) s.closeQuietly();
    this.lock?.release();
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

const RECOVERY_CHECKPOINT_INTERVAL_MS = 60_000;

/** A checkpoint file another tool mangled must not stop a writer; it is rewritten whole. */
export function readOffsetCheckpointTolerant(io: FileIO, file: string): Map<string, number> {
  try {
    return readOffsetCheckpoint(io, file);
  } catch {
    return new Map();
  }
}
