/**
 * Closing one log (Kafka's UnifiedLog.close / LocalLog.close): background jobs stopped, everything
 * committed and flushed, the active segment's indexes sealed, the recovery point and log start
 * offset checkpointed, the clean-shutdown marker by the directory's rule, then every descriptor
 * closed and the lock released. And the crash a test simulates (abandon).
 */
import type { FileIO } from '../io.js';
import type { LogSegment } from '../segment/segment.js';
import type { FlushPipeline } from '../flush/group-commit.js';
import { closeWriterAndMaybeMark, noteWriterGone } from '../logdir/clean-shutdown.js';
import type { DirectoryLock } from './lock.js';
import type { FileDescriptorCache } from '../segment/fd-cache.js';
import type { LogFlusher } from './log-flush.js';
import type { LogMaintenance } from './log-maintenance.js';
import type { SegmentChanges } from './segment-changes.js';
import type { AppendPath } from './append-path.js';
import type { LogWarning } from './log-types.js';

/** What closing needs of a Log: its parts, and the few state changes only the Log makes. */
export interface ClosingLog {
  readonly io: FileIO;
  readonly dir: string;
  readonly readOnly: boolean;
  readonly segments: LogSegment[];
  readonly activeSegment: LogSegment;
  readonly maintenance: LogMaintenance;
  readonly pipeline: FlushPipeline | undefined;
  readonly flusher: LogFlusher;
  readonly changes: SegmentChanges;
  readonly lock: DirectoryLock | undefined;
  /** The log's own descriptor cache (none when a LogManager shares one). */
  readonly ownFiles: FileDescriptorCache | undefined;
  readonly closed: boolean;
  markClosed(): void;
  readonly backgroundError: unknown;
  readonly committedNextOffset: number;
  /** Sets the recovery point to `offset` and writes its checkpoint entry. */
  checkpointRecoveryPointAt(offset: number): void;
  readonly logStartOffset: number;
  writeLogStartOffset(): void;
  warn(w: LogWarning): void;
  /** Kafka's close takes a producer snapshot at the log end (partition-state/snapshot-keeper.ts). */
  snapshotAtClose?(offset: number): void;
}

/** The Log's public face close reads. */
export interface ClosablePublic {
  readonly io: FileIO;
  readonly dir: string;
  readonly readOnly: boolean;
  readonly segments: LogSegment[];
  readonly activeSegment: LogSegment;
  readonly isClosed: boolean;
  readonly logStartOffset: number;
  writeLogStartOffset(): void;
  warn(w: LogWarning): void;
}

/** The Log's private parts close works on (the append path gives the end offset and a background failure). */
export type ClosingParts = Pick<ClosingLog, 'maintenance' | 'pipeline' | 'flusher' | 'changes' | 'lock' | 'ownFiles' | 'markClosed' | 'checkpointRecoveryPointAt' | 'snapshotAtClose'> & { readonly appender: AppendPath };

/** What close and abandon work on: the parts, and live views of the log's state. */
export function closingView(log: ClosablePublic, parts: ClosingParts): ClosingLog {
  const { appender, ...rest } = parts;
  return {
    ...rest,
    io: log.io,
    dir: log.dir,
    readOnly: log.readOnly,
    get segments() { return log.segments; },
    get activeSegment() { return log.activeSegment; },
    get closed() { return log.isClosed; },
    get backgroundError() { return appender.failure; },
    get committedNextOffset() { return appender.committedNextOffset; },
    get logStartOffset() { return log.logStartOffset; },
    writeLogStartOffset: () => log.writeLogStartOffset(),
    warn: (w) => log.warn(w),
  };
}

/**
 * Kafka's shutdown of one log: commits and flushes everything (pending sync appends resolve as
 * flushed), seals the active segment's indexes (final time-index entry, trimmed, fsynced),
 * writes the recovery point (= log end offset) and the log-start-offset checkpoints, then the
 * clean-shutdown marker (when no other writer holds a partition of the same log directory).
 * Appends made once close has begun are refused.
 */
export async function closeLog(log: ClosingLog): Promise<void> {
  if (log.closed) return;
  // Background jobs stop first; a compaction in progress (foreground or background, a dry run
  // included) finishes before segments close, so nothing reads a closed segment or changes a
  // file once the lock is released.
  await log.maintenance.quiesce();
  if (log.closed) return; // a concurrent close finished meanwhile
  if (log.readOnly) {
    log.markClosed();
    for (const s of log.segments) s.closeQuietly();
    log.ownFiles?.closeAll();
    return;
  }
  log.markClosed(); // refuses appends from here on
  let firstError: unknown;
  try {
    if (!log.backgroundError) {
      await log.pipeline!.flushNow();
      const active = log.activeSegment;
      for (const s of log.segments) if (s !== active && s.dirty) s.flush();
      active.onBecomeInactive();
      active.flush(); // .log (already durable), then the trimmed indexes
      log.io.syncDir(log.dir);
      const end = log.committedNextOffset;
      log.flusher.markFlushedAt(end);
      log.snapshotAtClose?.(end);
      log.checkpointRecoveryPointAt(end);
      if (log.logStartOffset > log.segments[0]!.baseOffset) log.writeLogStartOffset();
      closeWriterAndMaybeMark(log.io, log.dir);
    }
  } catch (e) {
    firstError = e;
  }
  noteWriterGone(log.dir); // a failed close leaves the marker to the directory's other writers: absent
  // Whatever failed above, every descriptor is closed and the lock released; the first failure
  // is the one reported.
  log.pipeline?.close();
  // Delayed removals of retired segments run now, under the lock: none outlives close().
  runPendingDeletionsQuietly(log);
  for (const s of log.segments) {
    try {
      s.closeQuietly();
    } catch (e) {
      firstError ??= e;
    }
  }
  try {
    log.ownFiles?.closeAll(); // descriptors of retired segments and of reads
  } catch (e) {
    firstError ??= e;
  }
  try {
    log.lock?.release();
  } catch (e) {
    firstError ??= e;
  }
  if (firstError !== undefined) throw firstError;
}

/** runPendingDeletions for close: a failure is a warning (the next open removes `.deleted` files). */
function runPendingDeletionsQuietly(log: ClosingLog): void {
  try {
    log.changes.runPendingDeletions();
  } catch (e) {
    log.warn({ file: log.dir, message: `removing deleted segment files failed: ${(e as Error).message}; the next open removes them` });
  }
}

/** Simulates a crash for tests: drops locks and fds without flushing or trimming. */
export function abandonLog(log: ClosingLog): void {
  log.pipeline?.close();
  log.maintenance.stopAll();
  // A crashed process removes nothing later: the next open deletes the `.deleted` files.
  log.changes.dropPendingDeletions();
  log.markClosed();
  for (const s of log.segments) s.closeQuietly();
  log.ownFiles?.closeAll();
  if (!log.readOnly) noteWriterGone(log.dir);
  log.lock?.release();
}
