/**
 * `logtool groups <dir…>`: every consumer group's committed offsets per topic-partition, read
 * offline from `__consumer_offsets-N` partition directories (or the log directories holding them,
 * found with src/engine/logdir/entries.ts), folded as Kafka's group coordinator loads the topic
 * (GroupMetadataManager.loadGroupsAndOffsets; src/engine/format/internal/group-state.ts). Read-only:
 * no lock, no file written. A record that does not decode is reported and makes the exit code 3.
 */
import path from 'node:path';
import { Command } from 'commander';
import { Output, warn } from '../render/output.js';
import { renderTable } from '../render/table.js';
import { escapeString } from '../render/escape.js';
import { formatTimestamp, timestampJson } from '../render/timestamp.js';
import { LogtoolError } from '../api/format.js';
import { type EntryWithSegment } from '../inspect/log.js';
import { classifyEntry, isPartitionDir, listLogDir } from '../inspect/logdir.js';
import { entryRecords, controlTypeOf, isControl, isTransactional } from '../inspect/format.js';
import { GroupStateBuilder, type GroupState } from '../api/groups.js';
import { openLog, type WarningCounter } from './shared.js';

const OFFSETS_TOPIC = '__consumer_offsets';

/** The `__consumer_offsets-N` partition directories a command-line argument names. */
function offsetsPartitions(given: string): string[] {
  const resolved = path.resolve(given);
  if (isPartitionDir(resolved)) {
    if (classifyEntry(path.basename(resolved), true).topicPartition?.topic !== OFFSETS_TOPIC) {
      throw new LogtoolError('usage', `not a ${OFFSETS_TOPIC} partition: give ${OFFSETS_TOPIC}-N directories or the log directories holding them`, { file: given });
    }
    return [given];
  }
  const found = listLogDir(given).filter((e) => e.kind === 'partition' && e.topicPartition?.topic === OFFSETS_TOPIC);
  if (found.length === 0) warn(`${given}: no ${OFFSETS_TOPIC} partitions`);
  return found.map((e) => path.join(given, e.name));
}

/**
 * Folds one partition into `builder`; returns how many records did not decode (each reported). A
 * partition that cannot be opened is reported and counted as one (the others are still listed, as ls does).
 */
async function foldPartition(dir: string, builder: GroupStateBuilder, counter: WarningCounter): Promise<number> {
  let log;
  try {
    log = openLog(dir, { readOnly: true }, counter);
  } catch (err) {
    if (!(err instanceof LogtoolError)) throw err;
    warn(`${dir}: cannot be read: ${err.describe()}`);
    return 1;
  }
  let undecodable = 0;
  try {
    for (const b of log.reader().batches({ verifyCrc: false })) undecodable += foldBatch(b, builder);
  } finally {
    await log.close();
  }
  return undecodable;
}

/**
 * One batch's records into `builder`: control markers end transactions, transactional records wait
 * for them. Returns how many records (or, for a batch whose records do not decode, 1) were reported.
 */
function foldBatch(b: EntryWithSegment, builder: GroupStateBuilder): number {
  const h = b.entry.header;
  let undecodable = 0;
  try {
    for (const r of entryRecords(b.entry, { file: b.segment.logPath })) {
      if (h && isControl(h)) {
        const type = controlTypeOf(r.key)?.type;
        if (type === 0 || type === 1) builder.endTransaction(h.producerId, type === 1);
        continue;
      }
      try {
        if (r.key === null) throw new LogtoolError('corrupt', 'record without a key');
        if (h && isTransactional(h)) builder.applyTransactional(h.producerId, r.offset, r.key, r.value);
        else builder.apply(r.offset, r.key, r.value);
      } catch (err) {
        if (!(err instanceof LogtoolError)) throw err;
        undecodable++;
        warn(`${b.segment.logPath}: record at offset ${r.offset} is not a ${OFFSETS_TOPIC} record: ${err.message}`);
      }
    }
  } catch (err) {
    if (!(err instanceof LogtoolError)) throw err;
    warn(`${b.segment.logPath} at byte ${b.entry.position}: the records of the batch at offset ${b.entry.baseOffset} do not decode (${err.message}); the batch is skipped`);
    return undecodable + 1;
  }
  return undecodable;
}

function groupJson(g: GroupState, partition: string) {
  return {
    group: g.group,
    partition,
    protocolType: g.protocolType ?? null,
    protocol: g.protocol ?? null,
    generation: g.generation ?? null,
    members: g.members ?? null,
    offsets: g.offsets.map((o) => ({
      topic: o.topic,
      partition: o.partition,
      offset: timestampJson(o.offset),
      leaderEpoch: o.leaderEpoch,
      metadata: o.metadata,
      commitTimestamp: timestampJson(o.commitTimestamp),
    })),
  };
}

function groupRows(g: GroupState): (string | number)[][] {
  const state = g.protocolType === undefined ? '-' : `${escapeString(g.protocolType || '-')}/${g.members ?? 0} members`;
  if (g.offsets.length === 0) return [[escapeString(g.group), state, '-', '-', '-', '-', '-']];
  return g.offsets.map((o) => [escapeString(g.group), state, escapeString(o.topic), o.partition, String(o.offset), formatTimestamp(o.commitTimestamp), escapeString(o.metadata)]);
}

export function groupsCommand(): Command {
  return new Command('groups')
    .description("consumer groups' committed offsets, read offline from __consumer_offsets partitions")
    .argument('<dir...>', '__consumer_offsets-N partition directories, or log directories holding them')
    .option('-g, --group <group>', 'only this group')
    .option('--json', 'one JSON object per group: {"group","partition","protocolType","protocol","generation","members","offsets":[…]}')
    .addHelpText(
      'after',
      `
Offsets are those of the latest records: an offset commit tombstone removes its offset, a group
metadata tombstone the group's metadata; transactional commits count once their COMMIT marker is in
the log. Exit 3 when a record does not decode.

Examples:
  logtool groups /var/lib/kafka/data
  logtool groups /var/lib/kafka/data/__consumer_offsets-12 --group orders-service --json`,
    )
    .action(async (dirs: string[], opts: { group?: string; json?: boolean }) => {
      const partitions = dirs.flatMap(offsetsPartitions);
      const counter: WarningCounter = { count: 0 };
      const out = new Output();
      const rows: (string | number)[][] = [];
      let undecodable = 0;
      try {
        for (const dir of partitions) {
          if (out.closed) break;
          const builder = new GroupStateBuilder();
          undecodable += await foldPartition(dir, builder, counter);
          for (const g of builder.groups()) {
            if (opts.group !== undefined && g.group !== opts.group) continue;
            if (opts.json) await out.json(groupJson(g, path.basename(path.resolve(dir))));
            else rows.push(...groupRows(g));
          }
        }
        if (!opts.json && rows.length > 0) await out.line(renderTable(['group', 'state', 'topic', 'partition', 'committed offset', 'commit time', 'metadata'], rows, out.isTTY));
      } finally {
        await out.flush();
      }
      if (undecodable > 0 || counter.count > 0) process.exitCode = 3;
    });
}
