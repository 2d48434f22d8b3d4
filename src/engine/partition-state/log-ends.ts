/**
 * Keeping a partition's leader epochs and producer-state snapshots inside the log's ends when a
 * command moves them (kafka-format.md §7, §12.3), by Kafka's rules:
 *
 *  - end (recover truncating a torn tail): LeaderEpochFileCache.truncateFromEnd removes every
 *    entry whose start offset is >= the new log end; ProducerStateManager.truncateAndReload
 *    removes every `<offset>.snapshot` above the new log end.
 *  - start (delete-records, retention): LeaderEpochFileCache.truncateFromStart removes the entries
 *    starting at or below the new log start and puts the last of them back starting at the new
 *    start (the epoch that still covers it); ProducerStateManager.deleteSnapshotsBefore removes
 *    the snapshots below the new log start (exclusive: the one at the start stays, a loader can
 *    start from it).
 *
 * The checkpoint is rewritten atomically (tmp + fsync + rename + directory fsync) and only when
 * its entries change; nothing is written or removed in a dry run.
 *
 * Every writable open follows the ends too (onLoad), as Kafka's LogLoader truncates the epoch
 * cache from the end and from the checkpointed start and drops out-of-range snapshots on every
 * load: a crash between a command's log change and these writes leaves a state the next open
 * finishes. One difference: on load an entry starting exactly at the log end stays (a leader's
 * fresh epoch with nothing written yet; Kafka drops it and re-assigns it when it leads again,
 * which logtool never does), so only entries beyond the end go.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { formatCheckpoint, writeFileAtomic } from '../checkpoint.js';
import { LEADER_EPOCH_CHECKPOINT, readLeaderEpochCheckpoint, type LeaderEpochEntry } from './leader-epochs.js';
import { listProducerSnapshots } from './snapshot-files.js';

/** LeaderEpochFileCache.truncateFromEnd: entries starting at or above `endOffset` go. */
export function truncateEpochsFromEnd(entries: readonly LeaderEpochEntry[], endOffset: number): LeaderEpochEntry[] {
  if (endOffset < 0) return [...entries];
  return entries.filter((e) => e.startOffset < endOffset);
}

/**
 * LeaderEpochFileCache.truncateFromStart: the leading entries starting at or below `startOffset`
 * go, and the last of them comes back starting at `startOffset` (exclusive: an entry at the start
 * is kept as it is).
 */
export function truncateEpochsFromStart(entries: readonly LeaderEpochEntry[], startOffset: number): LeaderEpochEntry[] {
  let removed = 0;
  while (removed < entries.length && entries[removed]!.startOffset <= startOffset) removed++;
  if (removed === 0) return [...entries];
  return [{ epoch: entries[removed - 1]!.epoch, startOffset }, ...entries.slice(removed)];
}

/** The checkpoint text Kafka's LeaderEpochCheckpointFile writes: version 0, `epoch startOffset` lines. */
export function formatLeaderEpochCheckpoint(entries: readonly LeaderEpochEntry[]): string {
  return formatCheckpoint(entries.map((e) => [String(e.epoch), String(e.startOffset)]));
}

/** The log's new ends; an end left undefined did not move. */
export interface LogEnds {
  logStartOffset?: number;
  logEndOffset?: number;
}

/** What keeping the partition state inside the ends changed (or, in a dry run, would change). */
export interface PartitionStateChange {
  /** Leader-epoch entries before and after, when the checkpoint's entries changed. */
  leaderEpochs?: { file: string; before: LeaderEpochEntry[]; after: LeaderEpochEntry[] };
  /** Producer-state snapshot files removed. */
  snapshotsRemoved: string[];
  /** Why the leader-epoch checkpoint was left alone (unreadable), if it was. */
  problem?: string;
}

/**
 * Truncates the partition's leader-epoch checkpoint and removes its producer snapshots beyond
 * `ends`, as Kafka does when the log's ends move. Returns what changed; a dry run changes nothing.
 */
export function followLogEnds(io: FileIO, dir: string, ends: LogEnds, opts: { dryRun?: boolean; onLoad?: boolean } = {}): PartitionStateChange {
  const { logStartOffset: start, logEndOffset: end } = ends;
  const change: PartitionStateChange = { snapshotsRemoved: [] };
  const file = path.join(dir, LEADER_EPOCH_CHECKPOINT);
  let before: LeaderEpochEntry[] = [];
  try {
    before = readLeaderEpochCheckpoint(io, file);
  } catch (e) {
    change.problem = `${LEADER_EPOCH_CHECKPOINT} left unchanged: ${(e as Error).message}`;
  }
  let after = before;
  if (end !== undefined) after = truncateEpochsFromEnd(after, opts.onLoad ? end + 1 : end);
  if (start !== undefined) after = truncateEpochsFromStart(after, start);
  if (!sameEntries(before, after)) {
    change.leaderEpochs = { file, before, after };
    if (!opts.dryRun) writeFileAtomic(io, file, formatLeaderEpochCheckpoint(after));
  }
  for (const s of listProducerSnapshots(io, dir)) {
    if ((end !== undefined && s.offset > end) || (start !== undefined && s.offset < start)) {
      if (!opts.dryRun) io.unlink(s.file);
      change.snapshotsRemoved.push(s.file);
    }
  }
  if (change.snapshotsRemoved.length > 0 && !opts.dryRun) io.syncDir(dir);
  return change;
}

function sameEntries(a: readonly LeaderEpochEntry[], b: readonly LeaderEpochEntry[]): boolean {
  return a.length === b.length && a.every((e, i) => e.epoch === b[i]!.epoch && e.startOffset === b[i]!.startOffset);
}

/** Whether followLogEnds changed (would change) anything. */
export function changedPartitionState(c: PartitionStateChange | undefined): boolean {
  return c !== undefined && (c.leaderEpochs !== undefined || c.snapshotsRemoved.length > 0);
}
