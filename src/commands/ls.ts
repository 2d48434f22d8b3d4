/**
 * `logtool ls <logdir…>`: one row per partition of each log directory (read-only: no locks, no
 * writes), then the entries that are not partitions, classified (src/engine/logdir/entries.ts).
 * Partitions are opened one at a time with the read-only open and closed before the next, so a
 * broker directory with thousands of partitions needs no more descriptors than one.
 */
import path from 'node:path';
import { Command } from 'commander';
import { Output } from '../render/output.js';
import { renderTable } from '../render/table.js';
import { escapeString } from '../render/escape.js';
import { formatTimestamp, timestampJson } from '../render/timestamp.js';
import { type Timestamp, realIO, LogtoolError } from '../api/format.js';
import { CLEAN_SHUTDOWN_FILE, RECOVERY_POINT_CHECKPOINT, readOffsetCheckpointTolerant, tpKey } from '../inspect/log.js';
import { isBrokerLogDir, logDirTarget, type LogDirEntry } from '../inspect/logdir.js';
import { openLog, type WarningCounter } from './shared.js';
import { cleanupPolicyOf } from './topic-configs.js';
import { LEADER_EPOCH_CHECKPOINT, readLeaderEpochCheckpoint } from '../api/log.js';

interface PartitionRow {
  logDir: string;
  dir: string;
  topic: string;
  partition: number;
  segments?: number;
  sizeBytes?: number;
  logStartOffset?: number;
  logEndOffset?: number;
  recoveryPoint: number | null;
  lastTimestamp?: Timestamp;
  cleanupPolicy: string;
  cleanShutdown: boolean;
  /** The latest epoch of leader-epoch-checkpoint (null: no entries) and how many entries it holds. */
  leaderEpoch?: number | null;
  leaderEpochEntries?: number;
  needsRecovery?: boolean;
  error?: string;
}

interface ListedDir {
  logDir: string;
  broker: boolean;
  partitions: PartitionRow[];
  others: LogDirEntry[];
}

async function listPartition(logDir: string, entry: LogDirEntry, recoveryPoints: Map<string, number>, cleanShutdown: boolean, counter: WarningCounter): Promise<PartitionRow> {
  const tp = entry.topicPartition!;
  const dir = path.join(logDir, entry.name);
  const rp = recoveryPoints.get(tpKey(tp.topic, tp.partition));
  const row: PartitionRow = { logDir, dir, topic: tp.topic, partition: tp.partition, recoveryPoint: rp ?? null, cleanupPolicy: cleanupPolicyOf(dir, tp.topic), cleanShutdown };
  const before = counter.count;
  let log;
  try {
    log = openLog(dir, { readOnly: true }, counter);
  } catch (err) {
    row.error = err instanceof LogtoolError ? err.describe() : String(err);
    counter.count++;
    return row;
  }
  try {
    const infos = log.segmentInfos();
    row.segments = infos.length;
    row.sizeBytes = infos.reduce((n, s) => n + s.sizeBytes, 0);
    row.logStartOffset = log.logStartOffset;
    row.logEndOffset = log.nextOffset;
    const epochs = readLeaderEpochCheckpoint(realIO, path.join(dir, LEADER_EPOCH_CHECKPOINT));
    row.leaderEpoch = epochs.length > 0 ? epochs[epochs.length - 1]!.epoch : null;
    row.leaderEpochEntries = epochs.length;
    for (const s of infos) if (s.maxTimestamp !== undefined && (row.lastTimestamp === undefined || s.maxTimestamp > row.lastTimestamp)) row.lastTimestamp = s.maxTimestamp;
    // Kafka recovers from the recovery point (0 without an entry) unless it shut down cleanly; a
    // recovery point below the log end is listed as needing recovery either way.
    const point = rp ?? 0;
    row.needsRecovery = row.logEndOffset > point;
  } catch (err) {
    // A malformed leader-epoch-checkpoint: the broker could not load the partition.
    if (!(err instanceof LogtoolError) || err.kind !== 'corrupt') throw err;
    row.error = err.describe();
    counter.count++;
  } finally {
    await log.close();
  }
  if (counter.count > before && row.error === undefined) row.error = 'warnings when opened (see stderr)';
  return row;
}

async function listDir(given: string, counter: WarningCounter): Promise<ListedDir> {
  const target = logDirTarget(given);
  if (target.single) {
    const rows = await partitionRows(target.logDir, target.partitions, counter);
    rows[0]!.dir = given;
    return { logDir: given, broker: false, partitions: rows, others: [] };
  }
  const broker = isBrokerLogDir(given);
  const others = target.entries.filter((e) => e.kind !== 'partition');
  return { logDir: given, broker, partitions: await partitionRows(given, target.partitions, counter), others };
}

/** The log directory's checkpoint and marker are read once; its partitions are opened one after another. */
async function partitionRows(logDir: string, entries: LogDirEntry[], counter: WarningCounter): Promise<PartitionRow[]> {
  const recoveryPoints = readOffsetCheckpointTolerant(realIO, path.join(logDir, RECOVERY_POINT_CHECKPOINT));
  const cleanShutdown = realIO.stat(path.join(logDir, CLEAN_SHUTDOWN_FILE)) !== undefined;
  const rows: PartitionRow[] = [];
  for (const e of entries) rows.push(await listPartition(logDir, e, recoveryPoints, cleanShutdown, counter));
  return rows;
}

/** The latest leader epoch and the checkpoint's entry count: `78 (33 entries)`, `-` without entries. */
const epochCell = (r: PartitionRow): string => (r.leaderEpoch === undefined || r.leaderEpoch === null ? '-' : `${r.leaderEpoch} (${r.leaderEpochEntries} entr${r.leaderEpochEntries === 1 ? 'y' : 'ies'})`);

export function lsCommand(): Command {
  return new Command('ls')
    .description('list the partitions of log directories (read-only) and classify everything else in them')
    .argument('<logdir...>', "log directories (a broker's log.dirs entry, or a partition directory)")
    .option('--json', 'one JSON object per partition, plus a summary line')
    .addHelpText('after', '\nExamples:\n  logtool ls /var/lib/kafka/data\n  logtool ls logdata --json | jq -c \'select(.needsRecovery)\'')
    .action(async (dirs: string[], opts: { json?: boolean }) => {
      const out = new Output();
      const counter: WarningCounter = { count: 0 };
      const listed: ListedDir[] = [];
      for (const d of dirs) listed.push(await listDir(d, counter));
      const ts = (t: Timestamp | undefined) => (t === undefined || t < 0 ? '-' : formatTimestamp(t));
      try {
        if (opts.json) {
          for (const l of listed) {
            for (const r of l.partitions) {
              await out.json({ ...r, lastTimestamp: r.lastTimestamp === undefined ? null : timestampJson(r.lastTimestamp) });
            }
          }
          const rows = listed.flatMap((l) => l.partitions);
          await out.json({
            summary: true,
            logDirs: listed.map((l) => ({ logDir: l.logDir, broker: l.broker, partitions: l.partitions.length, entries: l.others.map((e) => ({ name: e.name, kind: e.kind })) })),
            partitions: rows.length,
            errors: rows.filter((r) => r.error !== undefined).length,
            needsRecovery: rows.filter((r) => r.needsRecovery).length,
            sizeBytes: rows.reduce((n, r) => n + (r.sizeBytes ?? 0), 0),
          });
        } else {
          for (const l of listed) {
            await out.line(`${escapeString(l.logDir)}${l.broker ? ' (broker log directory)' : ''}: ${l.partitions.length} partition(s)`);
            const rows = l.partitions.map((r) =>
              r.error !== undefined && r.logEndOffset === undefined
                ? [r.topic, r.partition, '-', '-', '-', '-', r.recoveryPoint ?? '-', '-', escapeString(r.cleanupPolicy), '-', `error: ${escapeString(r.error)}`]
                : [r.topic, r.partition, r.segments!, r.sizeBytes!, r.logStartOffset!, r.logEndOffset!, r.recoveryPoint ?? '-', ts(r.lastTimestamp), escapeString(r.cleanupPolicy), epochCell(r), r.error !== undefined ? escapeString(r.error) : (r.needsRecovery ? 'yes' : 'no')],
            );
            if (rows.length > 0) await out.line(renderTable(['topic', 'partition', 'segments', 'bytes', 'log start', 'log end', 'recovery point', 'last timestamp', 'cleanup policy', 'leader epoch', 'needs recovery'], rows, out.isTTY));
            for (const e of l.others) await out.line(`  ${escapeString(e.name)}${e.isDirectory ? '/' : ''}\t${e.kind}`);
          }
        }
      } finally {
        await out.flush();
      }
      if (counter.count > 0) process.exitCode = 3;
    });
}
