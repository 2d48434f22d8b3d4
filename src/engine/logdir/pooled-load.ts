/**
 * Kafka's LogManager.loadLogs runs each log directory's loads on num.recovery.threads.per.data.dir
 * threads. Here the expensive part of a load, recovery after an unclean shutdown, runs on worker
 * threads (partition-worker.ts), and each partition is then opened on the main thread in name order,
 * where nothing is left to recover — so the logs, checkpoints, marker and warnings are the same for
 * every number of threads. The partition lock is taken and released by the worker before the main
 * thread opens (one holder at a time; the manager's broker lock keeps other processes out).
 *
 * Used only when it can pay off and the job can be sent: a writable open of several partitions,
 * more than one thread, no clean-shutdown marker (or full recovery requested), the default file-I/O
 * layer and no progress callback inside the loader. Otherwise the manager loads inline.
 */
import path from 'node:path';
import { realIO, type FileIO } from '../io.js';
import { CLEAN_SHUTDOWN_FILE, readCleanShutdownMarker } from '../checkpoint.js';
import type { LogWarning } from '../log/log-types.js';
import type { LoadOptions } from '../recovery/loader.js';
import { markerSeenByProcess } from './clean-shutdown.js';
import { recoverPartition, type RecoverJob, type RecoverResult } from './partition-worker.js';
import { WorkerPool } from './worker-pool.js';

const ENTRY = new URL('./partition-worker.js', import.meta.url);

export interface PooledLoadPlan {
  logDir: string;
  /** Partition directories, in the order they are opened and reported. */
  partitionDirs: string[];
  threads: number;
  io: FileIO;
  /** What every job needs besides its directory, configs, checkpoints and the marker. */
  job: Omit<RecoverJob, 'dir' | 'marker' | 'directory' | 'config'>;
  /** The directory snapshot handed to partition i's load. */
  directory: (i: number) => LoadOptions['directory'];
  /** The topic configs partition i is opened with (the same for its recovery). */
  config: (i: number) => RecoverJob['config'];
  onWarning: ((w: LogWarning) => void) | undefined;
  /** Opens partition i on this thread after its recovery (LoadOptions.recovered, directoryMarker). */
  open: (i: number, loaded: Pick<LoadOptions, 'recovered' | 'directoryMarker'>) => void;
}

/** Whether the plan's loads go to worker threads (see the file comment); the other conditions are the caller's. */
export function recoversOnWorkers(plan: Pick<PooledLoadPlan, 'logDir' | 'partitionDirs' | 'threads' | 'io' | 'job'>): boolean {
  if (plan.io !== realIO || plan.threads < 2 || plan.partitionDirs.length < 2) return false;
  const marker = markerSeenByProcess(plan.logDir) ?? { content: readCleanShutdownMarker(plan.io, plan.logDir) };
  if (marker.content !== undefined && !plan.job.forceRecoverAll) return false;
  return new WorkerPool(ENTRY, plan.threads, recoverPartition, () => '').usesWorkers(plan.partitionDirs.length);
}

/**
 * The marker as this process first sees it; the file is deleted durably now, before any worker
 * changes a partition, as the first loader would (Kafka deletes it at startup).
 */
function takeMarker(io: FileIO, logDir: string): { content: Buffer | undefined } {
  const seen = markerSeenByProcess(logDir);
  if (seen) return seen;
  const content = readCleanShutdownMarker(io, logDir);
  if (content !== undefined) {
    io.unlink(path.join(logDir, CLEAN_SHUTDOWN_FILE));
    io.syncDir(logDir);
  }
  return { content };
}

/** Recovers every partition on the pool and opens each, in order; the first failure (in order) stops it and is thrown. */
export async function loadOnWorkers(plan: PooledLoadPlan): Promise<void> {
  const directoryMarker = takeMarker(plan.io, plan.logDir);
  const jobs: RecoverJob[] = plan.partitionDirs.map((dir, i) => ({ ...plan.job, dir, marker: directoryMarker, directory: plan.directory(i), config: plan.config(i) }));
  const pool = new WorkerPool<RecoverJob, RecoverResult>(ENTRY, plan.threads, recoverPartition, (j) => j.dir);
  let failure: unknown;
  try {
    await pool.map(jobs, (o, i) => {
      try {
        if (!o.ok) throw o.error;
        for (const w of o.value.warnings) plan.onWarning?.(w);
        plan.open(i, { recovered: { report: o.value.report, recoveryPoint: o.value.recoveryPoint }, directoryMarker });
        return true;
      } catch (e) {
        failure = e;
        return false;
      }
    });
  } finally {
    await pool.close();
  }
  if (failure !== undefined) throw failure;
}
