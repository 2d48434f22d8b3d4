/**
 * What the flush pipeline (group-commit.ts) needs of a log and reports back: the narrow interface
 * through which the pipeline decides *when* and the log decides *how* (Kafka's LogFlusher /
 * UnifiedLog.flush split), the pipeline's counters and its tuning.
 */
/** What one flush covered. */
export interface FlushOutcome {
  /** Committed byte total that is now durable. */
  bytes: number;
  /** fsync/fdatasync calls it issued (log files, sealed indexes, directory). */
  fsyncs: number;
}

export interface FlushTarget {
  /** Writes the write buffer to the file, in order. Returns what it committed. */
  commitBuffered(): { bytes: number; records: number };
  /** Bytes accepted but still in the write buffer. */
  bufferedBytes(): number;
  /** Total bytes committed so far (monotonic, across segments). */
  committedBytes(): number;
  /** Makes everything committed durable: sealed segments (log, then indexes), the active log, the directory. */
  flushCommitted(): Promise<FlushOutcome>;
  /** flushCommitted's common case with a blocking fdatasync; undefined (nothing done) when it needs more. */
  flushCommittedBlocking?(): FlushOutcome | undefined;
  /**
   * The thorough part of a flush, after flushCommitted: the active segment's indexes, then the
   * recovery-point checkpoint. Returns the fsyncs it issued. Asynchronous: it runs inside flushes
   * that sync appends wait for, so nothing in it may block the event loop.
   */
  thoroughFlush(): Promise<number>;
  /** Reports a background failure (the log records it and fails later appends). */
  onBackgroundError(err: unknown): void;
}

export interface FlushStats {
  /** fsync/fdatasync calls issued by flushes (data, indexes, directories, checkpoints). */
  fsyncs: number;
  /** Flushes that made sync appends durable (each one fdatasync of the active log). */
  groups: number;
  /** Sync appends acknowledged as flushed by those groups. */
  groupedAppends: number;
  /** Largest number of sync appends acknowledged by one group. */
  largestGroup: number;
  /** Flushes of any kind (groups, async flusher, explicit, close). */
  flushes: number;
  /** Thorough flushes (indexes + recovery-point checkpoint). */
  thoroughFlushes: number;
  /** Sync appends that resolved as timed-out. */
  timedOut: number;
  /** Commits of a non-empty write buffer. */
  commits: number;
}

export function emptyFlushStats(): FlushStats {
  return { fsyncs: 0, groups: 0, groupedAppends: 0, largestGroup: 0, flushes: 0, thoroughFlushes: 0, timedOut: 0, commits: 0 };
}

export interface FlushTuning {
  /** How often the thorough flush runs (Kafka: log.flush.offset.checkpoint.interval.ms, 60 s). */
  thoroughFlushIntervalMs?: number;
  /** The log's owner (a LogManager) runs the flush.ms flusher and the checkpoints: no timer for them here. */
  ownerSchedules?: boolean;
}

export const DEFAULT_THOROUGH_FLUSH_INTERVAL_MS = 60_000;
