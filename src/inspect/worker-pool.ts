/**
 * Internals for commands: the worker-thread pool that runs per-partition jobs of a log-directory
 * run (engine/logdir/worker-pool.ts; Kafka's num.recovery.threads.per.data.dir). Loaded only by
 * the log-directory runner and the job module a worker thread starts.
 */
export { WorkerPool, deserializeError, isWorkerEntry, serializeError, serveJobs, type SerializedError } from '../engine/logdir/worker-pool.js';
