/**
 * `logtool doctor`'s checks, all read-only: per log directory, the entries Kafka renames a
 * partition to (LocalLog.scala: `-delete`, `-future`, `-stray`) and the offset checkpoints
 * against the partitions there (LogManager: recovery-point-offset-checkpoint,
 * log-start-offset-checkpoint); per partition, verify's CRC / offset / index checks
 * (recovery/log-verifier.ts), the leader-epoch checkpoint (LeaderEpochFileCache), producer-state
 * snapshots (ProducerStateManager), hanging transactions (open longer than Kafka's
 * transaction.max.timeout.ms, as `kafka-transactions.sh find-hanging` reports them), whether Kafka
 * would recover it at startup, and segments past
 * retention when the topic's retention is known (logtool.properties). Each finding says how bad it
 * is and, where one exists, the command that fixes it.
 */
import path from 'node:path';
import { realIO, LogtoolError } from '../api/format.js';
import { Log, LEADER_EPOCH_CHECKPOINT, readProducerSnapshot } from '../api/log.js';
import { verifyLog, type VerifyProblem } from '../api/verify.js';
import { CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, readOffsetCheckpoint, tpKey, type OffsetCheckpoint, loadRememberedConfig, PRODUCER_SNAPSHOT_SUFFIX, committedView } from '../inspect/log.js';
import type { LogDirEntry } from '../inspect/logdir.js';

/** Kafka's transaction.max.timeout.ms default: an open transaction older than this is hanging. */
export const HANGING_TRANSACTION_MS = 900_000;

export type Severity = 'error' | 'warning' | 'note';

export interface Finding {
  severity: Severity;
  /** The partition directory or log-directory entry the finding is about. */
  where: string;
  file?: string;
  position?: number;
  message: string;
  /** The command that would fix it, when there is one. */
  fix?: string;
}

/** What one partition adds to the report beside its findings. */
export interface PartitionSummary {
  dir: string;
  topic: string;
  sizeBytes: number;
}

const quote = (p: string) => (/^[\w./@%+=:,-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`);

/** The log directory's own entries: renamed partitions, and checkpoint entries without a partition. */
export function checkLogDirEntries(logDir: string, entries: readonly LogDirEntry[]): Finding[] {
  const findings: Finding[] = [];
  for (const e of entries) {
    const where = path.join(logDir, e.name);
    if (e.kind === 'stray') findings.push({ severity: 'warning', where, message: 'a stray partition directory: the broker found this replica not assigned to it and renamed it (KIP-858); its data is not served', fix: `rm -r ${quote(where)}  # once no other replica needs it` });
    if (e.kind === 'delete') findings.push({ severity: 'note', where, message: 'a deleted partition directory the broker has not removed yet (it does after file.delete.delay.ms)', fix: `rm -r ${quote(where)}` });
    if (e.kind === 'future') findings.push({ severity: 'note', where, message: 'a replica being moved between log directories (alter-replica-log-dirs); the broker finishes or cancels the move' });
  }
  const partitions = new Set(entries.filter((e) => e.kind === 'partition').map((e) => tpKey(e.topicPartition!.topic, e.topicPartition!.partition)));
  for (const name of [RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT]) {
    const file = path.join(logDir, name);
    let cp: OffsetCheckpoint;
    try {
      cp = readOffsetCheckpoint(realIO, file);
    } catch (e) {
      findings.push({ severity: 'error', where: file, file, message: e instanceof LogtoolError ? e.message : String(e), fix: `logtool recover <each partition of ${quote(logDir)}>  # Kafka then rewrites the checkpoint` });
      continue;
    }
    const orphans = [...cp.keys()].filter((k) => !partitions.has(k));
    if (orphans.length > 0) findings.push({ severity: 'note', where: file, file, message: `${orphans.length} entr${orphans.length === 1 ? 'y names a partition' : 'ies name partitions'} not in this directory (${orphans.slice(0, 3).join(', ')}${orphans.length > 3 ? ', …' : ''}); Kafka drops them at its next checkpoint` });
  }
  return findings;
}

/** Checkpoint values of one log directory, read once for all its partitions. */
export interface LogDirState {
  recoveryPoints: OffsetCheckpoint;
  logStarts: OffsetCheckpoint;
  cleanShutdown: boolean;
}

export function readLogDirState(logDir: string): LogDirState {
  const read = (name: string) => {
    try {
      return readOffsetCheckpoint(realIO, path.join(logDir, name));
    } catch {
      return new Map<string, number>(); // reported by checkLogDirEntries
    }
  };
  return { recoveryPoints: read(RECOVERY_POINT_CHECKPOINT), logStarts: read(LOG_START_OFFSET_CHECKPOINT), cleanShutdown: realIO.stat(path.join(logDir, CLEAN_SHUTDOWN_FILE)) !== undefined };
}

/** Every check of one partition directory; never throws for a problem in the data. */
export async function checkPartition(dir: string, topic: string, partition: number, state: LogDirState, onProgress?: (done: number, total: number) => void): Promise<{ findings: Finding[]; summary: PartitionSummary }> {
  const findings: Finding[] = [];
  const summary: PartitionSummary = { dir, topic, sizeBytes: 0 };
  const fixRecover = `logtool recover ${quote(dir)}`;
  let log: Log;
  try {
    log = Log.openStableSync(dir, { onWarning: (w) => findings.push({ severity: 'error', where: dir, file: w.file, position: w.position, message: w.message, fix: fixRecover }) });
  } catch (e) {
    findings.push({ severity: 'error', where: dir, message: e instanceof LogtoolError ? e.describe() : String(e), fix: fixRecover });
    return { findings, summary };
  }
  try {
    const report = verifyLog(log, { onProgress });
    summary.sizeBytes = report.bytes;
    for (const p of report.problems) {
      if (path.basename(p.file) === LEADER_EPOCH_CHECKPOINT) {
        findings.push(leaderEpochFinding(dir, p));
        continue;
      }
      // Kafka rebuilds a bad index itself; the records are intact: a warning. Anything in the .log is an error.
      const isIndex = /\.(index|timeindex)$/.test(p.file);
      findings.push({ severity: isIndex ? 'warning' : 'error', where: dir, file: p.file, position: p.position, message: `${p.entry !== undefined ? `entry ${p.entry}: ` : ''}${p.message}`, fix: isIndex ? `logtool rebuild-index ${quote(dir)}` : fixRecover });
    }
    const key = tpKey(topic, partition);
    const rp = state.recoveryPoints.get(key);
    if (rp !== undefined && rp > log.nextOffset) findings.push({ severity: 'warning', where: dir, message: `the recovery point ${rp} is beyond the log end offset ${log.nextOffset}: data the broker flushed is missing`, fix: fixRecover });
    else if (!state.cleanShutdown && (rp ?? 0) < log.nextOffset) findings.push({ severity: 'note', where: dir, message: `no clean shutdown: Kafka will recover offsets ${rp ?? 0}..${log.nextOffset - 1} when it starts`, fix: fixRecover });
    const ls = state.logStarts.get(key);
    if (ls !== undefined && ls > log.nextOffset) findings.push({ severity: 'warning', where: dir, message: `log-start-offset-checkpoint says ${ls}, beyond the log end offset ${log.nextOffset}`, fix: fixRecover });
    findings.push(...snapshotFindings(dir, log.nextOffset));
    findings.push(...transactionFindings(dir, log, Date.now()));
    findings.push(...retentionFindings(dir, log));
  } finally {
    await log.close();
  }
  return { findings, summary };
}

/** A leader-epoch-checkpoint problem of verify's report (checkLeaderEpochFile, BatchEpochCheck). */
function leaderEpochFinding(dir: string, p: VerifyProblem): Finding {
  const where = `${p.line !== undefined ? `line ${p.line}: ` : ''}${p.message}`;
  // Kafka's CheckpointFile refuses a malformed file: the broker cannot load the partition.
  if (p.unreadable) return { severity: 'error', where: dir, file: p.file, message: `${where}; the broker cannot load the partition with it`, fix: `rm ${quote(p.file)}  # the broker starts an empty epoch cache and fills it from the batches it recovers` };
  return { severity: 'warning', where: dir, file: p.file, message: where };
}

/**
 * Open transactions: one open longer than transaction.max.timeout.ms is hanging (its producer is
 * gone; it pins the last stable offset, so read_committed consumers stall and the cleaner stops):
 * a warning with the abort that ends it. A younger one is a note.
 */
function transactionFindings(dir: string, log: Log, nowMs: number): Finding[] {
  const view = committedView(log, log.logStartOffset);
  return view.state.openTransactions().map((t) => {
    const ageMs = nowMs - t.lastTimestamp;
    const what = `transaction of producer ${t.producerId} (epoch ${t.producerEpoch}) open since offset ${t.firstOffset}, last written ${Math.round(ageMs / 1000)} s ago; it holds the last stable offset at ${view.lastStableOffset}`;
    return ageMs > HANGING_TRANSACTION_MS
      ? { severity: 'warning' as const, where: dir, message: `hanging ${what}: read_committed consumers stall there and the cleaner stops`, fix: `logtool transactions abort ${quote(dir)} --producer-id ${t.producerId} --producer-epoch ${t.producerEpoch}` }
      : { severity: 'note' as const, where: dir, message: `open ${what}` };
  });
}

function snapshotFindings(dir: string, logEnd: number): Finding[] {
  const findings: Finding[] = [];
  for (const name of realIO.readdir(dir).filter((n) => n.endsWith(PRODUCER_SNAPSHOT_SUFFIX)).sort()) {
    const file = path.join(dir, name);
    const offset = Number(name.slice(0, -PRODUCER_SNAPSHOT_SUFFIX.length));
    try {
      readProducerSnapshot(realIO, file);
    } catch (e) {
      findings.push({ severity: 'warning', where: dir, file, message: `${e instanceof LogtoolError ? e.message : String(e)}; Kafka deletes it and rebuilds producer state from the log`, fix: `rm ${quote(file)}` });
      continue;
    }
    if (Number.isSafeInteger(offset) && offset > logEnd) findings.push({ severity: 'warning', where: dir, file, message: `snapshot at offset ${offset} is beyond the log end offset ${logEnd}; Kafka deletes it when it loads the log`, fix: `rm ${quote(file)}` });
  }
  return findings;
}

/** Segments past retention.ms / retention.bytes, only when the topic's retention is known (logtool.properties). */
function retentionFindings(dir: string, log: Log): Finding[] {
  let remembered;
  try {
    remembered = loadRememberedConfig(realIO, dir);
  } catch {
    return [];
  }
  if (remembered.retentionMs === undefined && remembered.retentionBytes === undefined) return [];
  const r = log.applyRetention({ dryRun: true });
  if (r.deleted.length === 0) return [];
  const bytes = r.deleted.reduce((n, d) => n + d.sizeBytes, 0);
  return [{ severity: 'note', where: dir, message: `${r.deleted.length} segment(s), ${bytes} bytes, past retention (${[...new Set(r.deleted.map((d) => d.reason))].join(', ')})`, fix: `logtool retention ${quote(dir)}` }];
}
