/**
 * The options of Log.open (Kafka's UnifiedLog takes a LogConfig and the LogManager's schedule
 * intervals; here one object carries both, with the test hooks).
 */
import type { FileIO } from '../io.js';
import type { LogConfig } from '../config.js';
import type { LoadOptions, LoadReport } from '../recovery/loader.js';
import type { LogSegment } from '../segment/segment.js';
import type { TopicPartition } from './topic-partition.js';
import type { DirectoryLock } from './lock.js';
import type { LogWarning } from './log-types.js';

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
  recovery?: Pick<LoadOptions, 'forceRecoverAll' | 'onProgress' | 'directory'>;
  /** Apply retention in the background this often (writable opens; off when absent). See startRetention. */
  retentionCheckIntervalMs?: number;
  /**
   * Check this often whether the log needs compaction (min.cleanable.dirty.ratio,
   * max.compaction.lag.ms) and compact it when it does (writable opens with a cleanup.policy
   * containing compact; off when absent). See startCleaner.
   */
  cleanerCheckIntervalMs?: number;
  /**
   * A LogManager schedules this log's background work (logdir/manager-schedule.ts): the log runs
   * no flush.ms flusher, no checkpoint timer, no retention or cleaner timer of its own.
   */
  scheduledByOwner?: boolean;
}

/** What Log.open hands the Log it builds. */
export interface LogInit {
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
  scheduledByOwner?: boolean;
}
