/**
 * One command over a log directory (Kafka's `log.dirs` entry, the unit of LogManager.scala): the
 * given path is classified, the partitions selected (`--topic`, `--partition`, `--partitions`
 * glob), a per-partition function runs up to `--threads` at a time (Kafka's
 * num.recovery.threads.per.data.dir, default 2; read-only checks on that many worker threads,
 * partition-jobs.ts), and every outcome is reported in the order of the
 * partitions — a summary table, or NDJSON lines and a last `{"summary":true,…}` line — with one
 * exit code: 1 if any partition failed, else 3 if any had a problem, else 0.
 *
 * Discovery is entries.ts: only `<topic>-<partition>` directories are partitions; meta.properties,
 * `__cluster_metadata-0` and Kafka's `-delete`/`-future`/`-stray` directories are never loaded.
 * The engine's LogManager can later take the place of `selectPartitions` without changing commands.
 */
import path from 'node:path';
import { Option, type Command } from 'commander';
import { realIO, type FileIO, LogtoolError, ExitCode } from '../api/format.js';
import { requireValidTopicName } from '../inspect/log.js';
import { isBrokerLogDir, isKafkaEntry, listLogDir } from '../inspect/logdir.js';
import { LOG_SUFFIX } from '../inspect/format.js';
import { Output, warn } from '../render/output.js';
import { renderTable } from '../render/table.js';
import { escapeString } from '../render/escape.js';
import { startProgress } from '../render/progress.js';
import { parseInteger } from './shared.js';
import { WorkerPool, deserializeError, serializeError, type SerializedError } from '../inspect/worker-pool.js';
import { clearStderrLine } from '../render/stderr-line.js';

// A path's kind, apart so that `append` classifies one without loading the runner (tables, worker pool).
export { isLogDirPath, partitionDirIn } from './logdir-paths.js';

/** The worker entry for read-only jobs (compiled beside this file). */
const JOBS_ENTRY = new URL('./partition-jobs.js', import.meta.url);

/** Kafka 4.0's num.recovery.threads.per.data.dir. */
export const DEFAULT_THREADS = 2;

export interface PartitionTarget {
  logDir: string;
  dir: string;
  topic: string;
  partition: number;
  /** The log directory holds meta.properties: a broker's, whose topic configs live elsewhere. */
  broker: boolean;
  /** Sum of the partition's `.log` sizes when selected (for progress). */
  logBytes: number;
}

export interface PartitionSelection {
  topic?: string;
  partition?: number;
  partitions?: string;
}

export interface LogDirOptions extends PartitionSelection {
  threads: number;
  json?: boolean;
  progress?: boolean;
}

/** What a per-partition function returns; a thrown error makes the partition `failed` (or `problem` for data errors). */
export interface PartitionResult {
  outcome: 'ok' | 'problem' | 'skipped';
  /** Fields of the partition's NDJSON line. */
  fields: Record<string, unknown>;
  /** The command's columns of the summary table. */
  cells: (string | number)[];
  /** Why a partition was skipped, or what a problem was, in a few words. */
  note?: string;
}

export type PartitionFn = (target: PartitionTarget) => Promise<PartitionResult>;

/** A read-only partition function as a plain message for a worker thread (partition-jobs.ts runs it). */
export type PartitionJob = { command: 'verify'; dir: string; opts: { deep?: boolean; indexes?: boolean; maxProblems: number } };

/** What a job gives back: its result or error, and what it wrote to stderr. */
export interface PartitionJobReply {
  result?: PartitionResult;
  error?: SerializedError;
  stderr: string;
}

interface Outcome {
  target: PartitionTarget;
  outcome: 'ok' | 'problem' | 'skipped' | 'failed';
  fields: Record<string, unknown>;
  cells: (string | number)[];
  note?: string;
  error?: { kind: string; message: string; file: string | null; position: number | null };
}

export function addLogDirOptions(cmd: Command): Command {
  cmd.addOption(new Option('--threads <n>', 'log directory: partitions checked at a time (Kafka: num.recovery.threads.per.data.dir); runs that write take one at a time').argParser(parseInteger('--threads', 1)).default(DEFAULT_THREADS));
  cmd.addOption(new Option('--topic <name>', 'log directory: only the partitions of this topic'));
  cmd.addOption(new Option('--partition <n>', 'log directory: only partitions with this number').argParser(parseInteger('--partition', 0)));
  cmd.addOption(new Option('--partitions <glob>', "log directory: only partition directories whose name matches (* and ?, e.g. 'orders-*')"));
  return cmd;
}

/** True when any selection flag was given (they only make sense with a log directory). */
export const hasSelection = (s: PartitionSelection): boolean => s.topic !== undefined || s.partition !== undefined || s.partitions !== undefined;

/** A usage error when selection flags come with a partition directory. */
export function rejectSelection(dir: string, s: PartitionSelection): void {
  if (hasSelection(s)) throw new LogtoolError('usage', '--topic, --partition and --partitions select partitions of a log directory, not of a partition directory', { file: dir });
}

/** A shell-style glob (`*`, `?`) as an anchored regular expression. */
function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
}

/** For progress only: a partition that cannot be listed counts 0 here and fails when it runs, with its error. */
function logBytesOf(dir: string, io: FileIO): number {
  let n = 0;
  try {
    for (const name of io.readdir(dir)) if (name.endsWith(LOG_SUFFIX)) n += io.stat(path.join(dir, name))?.size ?? 0;
  } catch {
    return n;
  }
  return n;
}

/**
 * The partitions of a log directory the selection names, in listing order. A folder holding no
 * partition and no Kafka file is no log directory (exit 2); a selection matching nothing too.
 */
export function selectPartitions(logDir: string, sel: PartitionSelection, io: FileIO = realIO): PartitionTarget[] {
  if (sel.topic !== undefined) requireValidTopicName(sel.topic);
  const entries = listLogDir(logDir, io);
  const parts = entries.filter((e) => e.kind === 'partition');
  if (parts.length === 0 && !entries.some(isKafkaEntry)) {
    throw new LogtoolError('usage', 'not a partition directory, and not a log directory: it holds no partition directories (<topic>-<partition>) and no Kafka files', { file: logDir });
  }
  const glob = sel.partitions !== undefined ? globToRegExp(sel.partitions) : undefined;
  const broker = isBrokerLogDir(logDir, io);
  const chosen = parts.filter((e) => {
    const tp = e.topicPartition!;
    return (sel.topic === undefined || tp.topic === sel.topic) && (sel.partition === undefined || tp.partition === sel.partition) && (glob === undefined || glob.test(e.name));
  });
  if (chosen.length === 0 && hasSelection(sel)) throw new LogtoolError('usage', 'no partition of this log directory matches the selection (--topic, --partition, --partitions)', { file: logDir });
  return chosen.map((e) => {
    const dir = path.join(logDir, e.name);
    return { logDir, dir, topic: e.topicPartition!.topic, partition: e.topicPartition!.partition, broker, logBytes: logBytesOf(dir, io) };
  });
}

async function runOne(target: PartitionTarget, fn: PartitionFn): Promise<Outcome> {
  try {
    const r = await fn(target);
    return { target, ...r };
  } catch (e) {
    return errorOutcome(target, e);
  }
}

function errorOutcome(target: PartitionTarget, e: unknown): Outcome {
  const err = e instanceof LogtoolError ? e : undefined;
  const error = { kind: err?.kind ?? 'internal', message: err?.message ?? (e as Error)?.message ?? String(e), file: err?.file ?? null, position: err?.position ?? null };
  // A data error stopping one partition is that partition's problem; anything else is a failure.
  const outcome = err?.exitCode === ExitCode.data ? 'problem' : 'failed';
  return { target, outcome, fields: {}, cells: [], note: err ? err.describe() : `internal error: ${error.message}`, error };
}

/**
 * Read-only jobs on worker threads (partition-jobs.ts), each outcome recorded in partition order
 * with what the job wrote to stderr printed first, as a run on this thread prints it.
 */
async function runOnWorkers(pool: WorkerPool<PartitionJob, PartitionJobReply>, targets: PartitionTarget[], job: (t: PartitionTarget) => PartitionJob, record: (i: number, o: Outcome) => Promise<void>): Promise<void> {
  try {
    await pool.map(targets.map(job), async (o, i) => {
      const t = targets[i]!;
      const reply: PartitionJobReply = o.ok ? o.value : { error: serializeError(o.error), stderr: '' };
      if (reply.stderr) {
        clearStderrLine();
        process.stderr.write(reply.stderr);
      }
      await record(i, reply.result ? { target: t, ...reply.result } : errorOutcome(t, deserializeError(reply.error!)));
      return true;
    });
  } finally {
    await pool.close();
  }
}

/**
 * Runs `fn` on every selected partition, at most `threads` at a time, and reports in partition
 * order (NDJSON lines as soon as every earlier partition is done), so the output is the same for
 * every number of threads. Sets process.exitCode by the one rule.
 */
export async function runOverLogDir(command: string, logDir: string, opts: LogDirOptions, columns: string[], fn: PartitionFn, access: 'read' | 'write' = 'read', job?: (t: PartitionTarget) => PartitionJob): Promise<void> {
  // A writable open and close of one partition deletes and restores the log directory's
  // clean-shutdown marker, and a restore is skipped while a sibling is open: interleaved, two
  // partitions would leave a marker that depends on --threads. Until the manager owns the marker,
  // writable runs open one partition at a time.
  const threads = access === 'write' ? 1 : opts.threads;
  const targets = selectPartitions(logDir, opts);
  const out = new Output();
  const bytesTotal = targets.reduce((n, t) => n + t.logBytes, 0);
  // The shared renderer: the label counts partitions, the count is bytes (rate and ETA from it).
  const progress = startProgress(`${command} ${logDir}: 0/${targets.length} partitions`, opts.progress !== false, { unit: 'bytes' });
  progress.count(0, bytesTotal);
  const outcomes: (Outcome | undefined)[] = new Array<Outcome | undefined>(targets.length);
  let next = 0;
  let printed = 0;
  let done = 0;
  let bytesDone = 0;
  const emitReady = async () => {
    while (printed < targets.length && outcomes[printed] !== undefined) {
      const o = outcomes[printed++]!; // claimed before the await: another worker never prints it twice
      if (opts.json) await out.json(lineOf(o));
    }
  };
  const record = async (i: number, o: Outcome) => {
    outcomes[i] = o;
    done++;
    bytesDone += targets[i]!.logBytes;
    progress.update(`${command} ${logDir}: ${done}/${targets.length} partitions`);
    progress.count(bytesDone, bytesTotal);
    await emitReady();
  };
  const worker = async () => {
    while (next < targets.length) {
      const i = next++;
      await record(i, await runOne(targets[i]!, fn));
    }
  };
  // Read-only work with a job form runs on worker threads; writes stay on this thread (above).
  const pool = job && access === 'read' ? new WorkerPool<PartitionJob, PartitionJobReply>(JOBS_ENTRY, threads, undefined, (j) => j.dir) : undefined;
  try {
    if (pool?.usesWorkers(targets.length)) await runOnWorkers(pool, targets, job!, record);
    else await Promise.all(Array.from({ length: Math.min(threads, Math.max(1, targets.length)) }, worker));
  } finally {
    progress.stop();
  }
  const all = outcomes as Outcome[];
  const count = (o: Outcome['outcome']) => all.filter((x) => x.outcome === o).length;
  const exitCode = count('failed') > 0 ? ExitCode.operational : count('problem') > 0 ? ExitCode.data : ExitCode.ok;
  const summary = { summary: true, command, logDir, broker: isBrokerLogDir(logDir), partitions: all.length, ok: count('ok'), problems: count('problem'), failed: count('failed'), skipped: count('skipped'), logBytes: bytesTotal, exitCode };
  try {
    if (opts.json) await out.json(summary);
    else {
      const rows = all.map((o) => [o.target.topic, o.target.partition, ...(o.cells.length > 0 ? o.cells : columns.map(() => '-')), escapeString(o.note === undefined ? o.outcome : `${o.outcome}: ${o.note}`)]);
      await out.line(`${escapeString(logDir)}${summary.broker ? ' (broker log directory)' : ''}: ${command} over ${all.length} partition(s)`);
      if (rows.length > 0) await out.line(renderTable(['topic', 'partition', ...columns, 'outcome'], rows, out.isTTY));
      await out.line(`${summary.ok} ok, ${summary.problems} with problems, ${summary.failed} failed, ${summary.skipped} skipped`);
    }
  } finally {
    await out.flush();
  }
  const skipNotes = new Map<string, number>();
  for (const o of all) if (o.outcome === 'skipped') skipNotes.set(o.note ?? '', (skipNotes.get(o.note ?? '') ?? 0) + 1);
  for (const [note, n] of skipNotes) warn(`${n} partition(s) of ${logDir} skipped: ${note}`);
  process.exitCode = exitCode;
}

function lineOf(o: Outcome): Record<string, unknown> {
  const { logDir, dir, topic, partition } = o.target;
  return { ...o.fields, logDir, dir, topic, partition, outcome: o.outcome, ...(o.note !== undefined ? { note: o.note } : {}), ...(o.error ? { error: o.error } : {}) };
}
