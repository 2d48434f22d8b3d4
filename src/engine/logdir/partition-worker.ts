/**
 * The expensive half of Kafka's LogManager.loadLog (LogLoader.recoverLog, kafka-format.md §10)
 * as a job for a worker thread (worker-pool.ts): one partition's writable load under its lock —
 * leftovers, swaps, CRC checks, truncation, index rebuilds, the sync past the recovery point — then
 * its files closed and the lock released. The main thread then opens the partition with what this
 * returns (LoadOptions.recovered) and finds nothing left to recover.
 *
 * The job is a plain message; this module is also the worker's entry (run as a worker, it serves
 * jobs), and recoverPartition runs the same job inline.
 */
import { realIO } from '../io.js';
import { resolveConfig, type LogConfig } from '../config.js';
import { DirectoryLock } from '../log/lock.js';
import { loadRememberedConfig } from '../log/log-properties.js';
import { requireTopicPartition } from '../log/topic-partition.js';
import type { LogWarning } from '../log/log-types.js';
import { loadLog, syncPastRecoveryPoint, type LoadOptions, type LoadReport } from '../recovery/loader.js';
import { isWorkerEntry, serveJobs } from './worker-pool.js';

export interface RecoverJob {
  /** The partition directory (absolute). */
  dir: string;
  config: Partial<LogConfig> | undefined;
  discardLost: boolean;
  forceRecoverAll: boolean;
  /** What the manager read of the log directory once (names, checkpoints). */
  directory: LoadOptions['directory'];
  /** The clean-shutdown marker as the manager found it (already deleted, as Kafka does at start). */
  marker: { content: Uint8Array | undefined };
}

export interface RecoverResult {
  report: LoadReport;
  recoveryPoint: number;
  /** The load's warnings, for the main thread to report in partition order. */
  warnings: LogWarning[];
}

/** One partition's writable load, its files closed and its lock released after. */
export function recoverPartition(job: RecoverJob): RecoverResult {
  const io = realIO;
  const tp = requireTopicPartition(job.dir);
  const warnings: LogWarning[] = [];
  const lock = DirectoryLock.acquire(job.dir, 'write to', { underLogDir: 'main-thread' });
  try {
    const config = resolveConfig(loadRememberedConfig(io, job.dir), job.config);
    const content = job.marker.content === undefined ? undefined : Buffer.from(job.marker.content);
    const loaded = loadLog({
      io,
      dir: job.dir,
      tp,
      config,
      readOnly: false,
      onWarning: (w) => warnings.push(w),
      discardLost: job.discardLost,
      forceRecoverAll: job.forceRecoverAll,
      directory: job.directory,
      directoryMarker: { content },
    });
    try {
      syncPastRecoveryPoint({ io, dir: job.dir }, loaded);
    } finally {
      for (const s of loaded.segments) s.closeQuietly();
    }
    return { report: loaded.report, recoveryPoint: loaded.recoveryPoint, warnings };
  } finally {
    lock.release();
  }
}

if (isWorkerEntry(import.meta.url)) serveJobs(recoverPartition);
