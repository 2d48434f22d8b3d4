/**
 * The per-partition work of a command over a log directory (logdir-runner.ts) as a plain message
 * for a worker thread (engine/logdir/worker-pool.ts; Kafka runs a log directory's loads on
 * num.recovery.threads.per.data.dir threads). Read-only work only: `verify` (with `--deep`).
 * What the job writes to stderr (warnings) is captured and returned, so the main thread prints
 * it in partition order, as a run on one thread does; an error is returned with it, not thrown.
 *
 * This module is also the worker's entry: run as a worker, it serves jobs.
 */
import { isWorkerEntry, serializeError, serveJobs } from '../inspect/worker-pool.js';
import type { PartitionJob, PartitionJobReply } from './logdir-runner.js';
import { verifyPartition } from './verify-partition.js';

export async function runPartitionJob(job: PartitionJob): Promise<PartitionJobReply> {
  const captured: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    captured.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof process.stderr.write;
  try {
    if (job.command !== 'verify') throw new Error(`unknown partition job ${String(job.command)}`);
    return { result: await verifyPartition(job.dir, job.opts), stderr: captured.join('') };
  } catch (e) {
    return { error: serializeError(e), stderr: captured.join('') };
  } finally {
    process.stderr.write = write;
  }
}

if (isWorkerEntry(import.meta.url)) serveJobs(runPartitionJob);
