/**
 * One partition directory (Kafka's UnifiedLog): a small façade over the segment list
 * (log-segments.ts), the append path with its write buffer (append-path.ts), roll (roll.ts), the
 * flush glue (log-flush.ts; when to flush is flush/group-commit.ts's decision), retention,
 * delete-records and swaps (segment-changes.ts), the background schedule (cleaner/periodic-task.ts)
 * and the stable read-only open (open-stable.ts). Reads go through log-reader.ts; opening runs the
 * loader (recovery/loader.ts); close follows Kafka's clean-shutdown protocol.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { LogtoolError } from '../errors.js';
import type { LogConfig } from '../config.js';
import type { TopicPartition } from './topic-partition.js';
import { DirectoryLock } from './lock.js';
import type { LogSegment } from '../segment/segment.js';
import type { FileDescriptorCache } from '../segment/fd-cache.js';
import type { LogRecord, RecordInput } from '../format/record-batch.js';
import type { LoadReport } from '../recovery/loader.js';
import { emptyFlushStats, type FlushStats } from '../flush/group-commit.js';
import { LogReader, type ReadOptions, type ViewReadOptions } from './log-reader.js';
import type { RecordView } from '../format/record-view.js';
import { LogSegments } from './log-segments.js';
import { openPartition } from './log-open.js';
import { PartitionCheckpoints } from './log-checkpoints.js';
import { abandonLog, closeLog, closingView, type ClosingLog } from './log-close.js';
import type { AppendOptions, AppendResult, ValueSliceAppendOptions } from './append-path.js';
import type { ValueSlices } from '../format/value-slices.js';
import { ProducerAppends } from './producer-appends.js';
import { wireLogWriteSide, writePositions, type WriteSide } from './write-side.js';
import { segmentChangesOf, type SegmentChanges } from './segment-changes.js';
import { readOnlyOpenAttempts, untilStable, untilStableSync } from './open-stable.js';
// Retention and compaction
import type { CleanReport, CleanerOptions } from '../cleaner/cleaner.js';
import type { RemovedFile } from '../cleaner/swap.js';
import type { ReplaceSegmentsOptions, RetentionOptions, RetentionReport } from '../cleaner/types.js';
import { compactionSchedule, type CompactionSchedule } from '../cleaner/schedule.js';
import { LogMaintenance, type CompactionRound } from './log-maintenance.js';
import type { LogPositions, LogWarning, SegmentInfo } from './log-types.js';
import type { LogInit, LogOptions } from './log-options.js';

/** append()'s options when none are given: shared, not a new object per call. */
const NO_APPEND_OPTIONS: AppendOptions = Object.freeze({});

export type { LogWarning, SegmentInfo, LogPosition, LogPositions } from './log-types.js';
export type { LogOptions } from './log-options.js';
export type { AppendOptions, AppendResult, ValueSliceAppendOptions } from './append-path.js';

export class Log {
  readonly dir: string;
  readonly logDir: string;
  readonly topicPartition: TopicPartition | undefined;
  readonly config: LogConfig;
  readonly io: FileIO;
  readonly readOnly: boolean;
  logStartOffset: number;
  private readonly segmentList: LogSegments;
  /** The append path, roller, flush glue and flush pipeline, wired together (write-side.ts). */
  private readonly writeSide: WriteSide;
  /** The idempotence guard and producer snapshots (producer-appends.ts). */
  private readonly producers: ProducerAppends;
  private readonly changes: SegmentChanges;
  private readonly maintenance: LogMaintenance;
  private readonly checkpoints: PartitionCheckpoints;
  private readonly lock: DirectoryLock | undefined;
  private readonly ownFiles: FileDescriptorCache | undefined;
  private closed = false;
  private readonly onWarning: (w: LogWarning) => void;
  readonly loadReport: LoadReport;

  private constructor(init: LogInit) {
    this.dir = init.dir;
    this.logDir = path.dirname(init.dir);
    this.topicPartition = init.tp;
    this.config = init.config;
    this.io = init.io;
    this.readOnly = init.readOnly;
    this.lock = init.lock;
    this.ownFiles = init.ownFiles;
    this.segmentList = new LogSegments(init.segments);
    this.logStartOffset = init.logStartOffset;
    this.checkpoints = new PartitionCheckpoints(init.io, this.logDir, init.tp, init.recoveryPoint);
    this.onWarning = init.onWarning;
    this.loadReport = init.loadReport;
    this.producers = new ProducerAppends(this, () => this.ensureWritable(), this.readOnly, init.recoveryPoint);
    this.writeSide = wireLogWriteSide(this, this.segmentList, () => this.ensureWritable(), this.checkpoints, this.producers.snapshots, init);
    this.changes = segmentChangesOf(this, this.segmentList, this.writeSide.flusher);
    this.maintenance = new LogMaintenance(this, { ensureWritable: () => this.ensureWritable(), scheduledByOwner: init.scheduledByOwner === true, keepDirFor: (d) => this.changes.keepDirFor(d) });
    this.maintenance.startOwnSchedule(init.retentionCheckIntervalMs, init.cleanerCheckIntervalMs);
  }

  /** Opens (creating if allowed) a partition directory (log-open.ts: lock, configs, the loader). */
  static open(dir: string, options: LogOptions = {}): Log {
    return openPartition(dir, options, (init) => new Log(init));
  }

  /** Ascending by base offset; the last one is active. */
  get segments(): LogSegment[] {
    return this.segmentList.all;
  }

  get activeSegment(): LogSegment {
    return this.segmentList.active;
  }

  /** Offset the next record will get (Kafka's log end offset, counting buffered appends). */
  get nextOffset(): number {
    return this.writeSide.appender.nextOffset;
  }

  /** Written (accepted), committed (in the file) and flushed (durable) positions; docs/durability.md. */
  positions(): LogPositions {
    return writePositions(this.writeSide, this.segmentList, this.checkpoints);
  }

  /** Counters of the flush pipeline (fsyncs, group commits, timeouts …). */
  get flushStats(): FlushStats {
    return this.writeSide.pipeline?.stats ?? emptyFlushStats();
  }

  private ensureWritable(): void {
    if (this.closed) throw new LogtoolError('closed', 'log is closed', { file: this.dir });
    if (this.readOnly) throw new LogtoolError('invalid-state', 'log was opened read-only', { file: this.dir });
    if (this.writeSide.appender.failure) throw this.writeSide.appender.failure;
  }

  /**
   * Appends records as one batch. Offsets are assigned at once (in call order); the promise
   * resolves when the batch is acknowledged under the flush mode (see AppendResult.status).
   */
  append(records: readonly RecordInput[], options: AppendOptions = NO_APPEND_OPTIONS): Promise<AppendResult> {
    return this.producers.append(this.writeSide.appender, records, options);
  }

  /**
   * Appends records with a null key, no headers and one timestamp whose values are byte ranges
   * of one buffer (format/value-slices.ts) as one uncompressed batch, as append() would the same
   * records: same bytes, same acknowledgement. The ranges are read before this returns.
   */
  appendValueSlices(slices: ValueSlices, options: ValueSliceAppendOptions = {}): Promise<AppendResult> {
    return this.producers.appendValueSlices(this.writeSide.appender, slices, options);
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
    return this.producers.appendEncoded(this.writeSide.appender, batch, options);
  }

  /**
   * Seals the active segment and starts a new one at the log end offset (the only offset
   * newBaseOffset may name). Refuses any other offset, and the log end offset when a segment
   * already starts there (an empty active segment): below it the new segment would overlap
   * acknowledged data, above it the next records would fall below the segment's base. The new
   * `.log` is created exclusively, never reopened for truncation.
   */
  roll(newBaseOffset = this.writeSide.appender.committedNextOffset): LogSegment {
    // Not ensureWritable: close() commits the write buffer, which may roll, after `closed` is set.
    return this.writeSide.roller.roll(newBaseOffset);
  }

  /** Persists the log start offset (only when above the first segment's base, as Kafka does). */
  writeLogStartOffset(): void {
    this.checkpoints.writeLogStartOffset(this.logStartOffsetToCheckpoint);
  }

  /** The log-start-offset-checkpoint entry: the log start offset when above the first segment's base, else none. */
  get logStartOffsetToCheckpoint(): number | undefined {
    const lso = this.logStartOffset;
    return lso > this.segments[0]!.baseOffset ? lso : undefined;
  }

  /** The owner wrote `offset` as this log's recovery-point-offset-checkpoint entry (logdir/manager-work.ts). */
  noteRecoveryPointCheckpointed(offset: number): void {
    this.checkpoints.checkpointedRecoveryPoint = offset;
  }

  /**
   * Flushes everything now (write buffer included), then the active indexes and the
   * recovery-point checkpoint: a thorough flush, as on the background interval and on close.
   * `checkpoint: false` flushes the data only (Kafka's flush(false), the manager's flush.ms task).
   */
  async flush(opts: { checkpoint?: boolean } = {}): Promise<void> {
    this.ensureWritable();
    await this.writeSide.pipeline!.flushNow({ thorough: opts.checkpoint !== false });
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

  /** read()'s records shown one at a time in one reused RecordView, valid until the next step (see RecordView). */
  readViews(options: ViewReadOptions = {}): Generator<RecordView> {
    return this.reader().views(options);
  }

  /** The segment holding offset (floor by base offset), or undefined below the first. */
  segmentFor(offset: number): LogSegment | undefined {
    return this.segmentList.floor(offset);
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

  /**
   * Applies retention now (Kafka's deleteOldSegments): log start offset, then retention.bytes,
   * then retention.ms (those two only with cleanup.policy delete). Deleted segments are renamed
   * `.deleted` and removed after `deleteDelayMs` (default file.delete.delay.ms; 0 = at once).
   * With dryRun nothing changes (works on a read-only log too).
   */
  applyRetention(opts: RetentionOptions = {}): RetentionReport {
    return this.changes.applyRetention(this.writeSide.appender.endForRetention(opts.dryRun, { readOnly: this.readOnly, closed: this.closed }), opts);
  }

  /**
   * `kafka-delete-records`: advances the log start offset to `offset` (never backwards; at most the
   * log end offset), persists it in log-start-offset-checkpoint, and deletes the segments wholly
   * below it. Reads below the log start offset fail from then on.
   */
  deleteRecordsBefore(offset: number, opts: Omit<RetentionOptions, 'retentionMs' | 'retentionBytes'> = {}): RetentionReport {
    return this.changes.deleteRecordsBefore(offset, this.writeSide.appender.endForRetention(opts.dryRun, { readOnly: this.readOnly, closed: this.closed }), opts);
  }

  /** Removes now every `.deleted` file still waiting for file.delete.delay.ms. */
  runPendingDeletions(): number {
    return this.changes.runPendingDeletions();
  }

  /**
   * Applies retention every intervalMs (Kafka's log.retention.check.interval.ms, default 5 min)
   * while the log is open. The timer never keeps the process alive; it skips a round while a
   * compaction runs and stops when the log closes (log-maintenance.ts).
   */
  startRetention(intervalMs = 300_000, onResult?: (r: RetentionReport) => void): void {
    this.maintenance.startRetention(intervalMs, onResult);
  }

  stopRetention(): void {
    this.maintenance.stopRetention();
  }

  /** A compaction of this log (foreground or background) is running. */
  get isCompacting(): boolean {
    return this.maintenance.compacting;
  }

  /** The last error of a background compaction (recorded, never thrown; also sent to onWarning). */
  get cleanerError(): unknown {
    return this.maintenance.cleanerError;
  }

  /** Background compactions run so far (those the schedule asked for). */
  get backgroundCompactions(): number {
    return this.maintenance.backgroundCompactions;
  }

  /**
   * Kafka's cleaner schedule for this log now (cleaner/schedule.ts): the dirty ratio at segment
   * granularity and whether min.cleanable.dirty.ratio or max.compaction.lag.ms asks for a
   * compaction. Changes nothing.
   */
  compactionSchedule(opts: { nowMs?: number; fromStart?: boolean } = {}): CompactionSchedule {
    return compactionSchedule(this, opts);
  }

  /** Compacts only when the schedule says so (what Kafka's cleaner thread does for this log). */
  async compactIfNeeded(opts: CleanerOptions = {}): Promise<CompactionRound> {
    return this.maintenance.compactIfNeeded(opts);
  }

  /**
   * Checks every intervalMs (Kafka's log.cleaner.backoff.ms) whether the log needs compaction and
   * compacts it when it does. The timer never keeps the process alive, skips a round while a
   * compaction runs (never two at once), and stops when the log closes; errors go to cleanerError
   * and onWarning.
   */
  startCleaner(intervalMs = 15_000, onResult?: (r: CompactionRound) => void): void {
    this.maintenance.startCleaner(intervalMs, onResult);
  }

  stopCleaner(): void {
    this.maintenance.stopCleaner();
  }

  /**
   * Compacts the log by Kafka's cleaner rules (cleaner/cleaner.ts): the latest record per key
   * survives, offsets never change, tombstones go delete.retention.ms after their first cleaning.
   * With dryRun nothing changes (works on a read-only log too). close() waits for it: segments
   * stay open and the lock held until it ends.
   */
  async compact(opts: CleanerOptions = {}): Promise<CleanReport> {
    return this.maintenance.compact(opts);
  }

  /** This partition's entry in `<log dir>/cleaner-offset-checkpoint`. */
  readCleanerCheckpoint(): number | undefined {
    return this.checkpoints.readCleanerOffset();
  }

  writeCleanerCheckpoint(offset: number): void {
    this.checkpoints.writeCleanerOffset(offset);
  }

  /**
   * Swaps the `.cleaned` segment at `base` in for `old` by Kafka's crash-safe protocol
   * (cleaner/swap.ts) and updates the segment list. Returns the files that left the log.
   */
  replaceSegments(base: number, old: LogSegment[], opts: ReplaceSegmentsOptions = {}): RemovedFile[] {
    this.ensureWritable();
    return this.changes.replaceSegments(base, old, opts);
  }

  /**
   * Opens read-only without ever observing a half-done segment replacement or deletion by a
   * writer in another process: it waits while one is in progress and retries if one happened
   * during the open (the generation seqlock of cleaner/generation.ts). Once open, the reader holds
   * its files, so later compactions or deletions never change what it reads. Waits on timers, so
   * the event loop keeps serving other callers meanwhile.
   */
  static async openStable(dir: string, options: Omit<LogOptions, 'readOnly'> = {}, timeoutMs = 10_000): Promise<Log> {
    return untilStable(readOnlyOpenAttempts(dir, options, timeoutMs, Log.open));
  }

  /**
   * openStable for the CLI's commands, whose process serves no other caller: the wait between
   * retries blocks the thread (Atomics.wait), so the command's synchronous open stays synchronous.
   * A library embedding logtool uses openStable.
   */
  static openStableSync(dir: string, options: Omit<LogOptions, 'readOnly'> = {}, timeoutMs = 10_000): Log {
    return untilStableSync(readOnlyOpenAttempts(dir, options, timeoutMs, Log.open));
  }

  // -------------------------------------------------------------------------------------------
  // Close

  /** Kafka's shutdown of one log (log-close.ts): flushed, indexes sealed, checkpoints and the clean-shutdown marker written. */
  async close(): Promise<void> {
    return closeLog(this.closing());
  }

  /** Simulates a crash for tests: drops locks and fds without flushing or trimming. */
  abandon(): void {
    abandonLog(this.closing());
  }

  /** What close and abandon work on (log-close.ts): the parts, and live views of the state. */
  private closing(): ClosingLog {
    const { maintenance, changes, lock, ownFiles } = this;
    const { pipeline, flusher, appender } = this.writeSide;
    return closingView(this, {
      maintenance, pipeline, flusher, changes, lock, ownFiles, appender,
      markClosed: () => (this.closed = true),
      checkpointRecoveryPointAt: (offset) => this.checkpoints.checkpointRecoveryPointAt(offset),
      snapshotAtClose: (offset) => this.producers.snapshots?.onClose(offset),
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }
}
