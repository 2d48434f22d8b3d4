/**
 * Kafka's isolation levels for reading a partition (IsolationLevel; the broker's fetch path in
 * UnifiedLog.read / collectAbortedTransactions and the consumer's CompletedFetch):
 *
 * - read_uncommitted: every data record up to the log end;
 * - read_committed: data records of non-transactional batches and of committed transactions, up
 *   to the last stable offset (the first offset of the earliest open transaction) — and, in a
 *   broker's log directory (its parent holds meta.properties), the high watermark recorded in
 *   `replication-offset-checkpoint`, whichever is lower. Batches of aborted transactions are
 *   skipped; control records are never returned.
 *
 * Aborted transactions come from `.txnindex` for markers below the recovery point (as Kafka's
 * fetch reads them) and, above it, from the markers themselves (data no recovery has indexed).
 * The last stable offset needs the producer state at the log end: the newest usable producer
 * snapshot plus the batches after it (producer-state-load.ts).
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import type { LogSegment } from '../segment/segment.js';
import { TXN_INDEX_SUFFIX, segmentFileName } from '../segment/segment-files.js';
import type { LogEntry } from '../segment/file-records.js';
import { isControl } from '../format/record-batch.js';
import { REPLICATION_OFFSET_CHECKPOINT, readOffsetCheckpoint, tpKey } from '../checkpoint.js';
import { isBrokerLogDir } from '../logdir/entries.js';
import type { TopicPartition } from '../log/topic-partition.js';
import { ProducerStateManager, TxnMetadata } from './producer-state.js';
import { entryControlMarker, loadProducerState, markerOf, replayBatches, type ProducerStateSource } from './producer-state-load.js';
import { collectAbortedTxns, type AbortedTxn } from './transaction-index.js';

export type IsolationLevel = 'read_uncommitted' | 'read_committed';
export const ISOLATION_LEVELS: readonly IsolationLevel[] = ['read_uncommitted', 'read_committed'];

/** What a committed read needs of a log (a Log satisfies it). */
export interface PartitionSource {
  readonly dir: string;
  readonly io: FileIO;
  readonly segments: readonly LogSegment[];
  readonly nextOffset: number;
  readonly topicPartition?: TopicPartition;
  positions(): { recoveryPoint: number };
}

export { entryControlMarker, markerOf };

/**
 * The producer state after every whole batch of the log (Kafka's loader replaying the whole log
 * into its ProducerStateManager, no snapshot). Stops quietly at a torn or corrupt entry: readers
 * report those.
 */
export function scanProducerState(segments: readonly LogSegment[], highWatermark?: number): ProducerStateManager {
  const state = new ProducerStateManager(highWatermark);
  replayBatches(state, segments, -Infinity, Infinity);
  return state;
}

/**
 * The producer state of a partition at its end, loaded as Kafka's loader does: the newest usable
 * snapshot at or below the recovery point (and the high watermark: a transaction completed above
 * it stays unstable, which a snapshot does not record), then the batches after it.
 */
export function partitionProducerState(log: ProducerStateSource & { positions(): { recoveryPoint: number } }, highWatermark?: number, onCorrupt?: (file: string, message: string) => void): ProducerStateManager {
  const maxSnapshotOffset = Math.min(log.positions().recoveryPoint, highWatermark ?? Infinity);
  return loadProducerState(log, { maxSnapshotOffset, highWatermark, onCorrupt }).state;
}

/**
 * The high watermark a broker checkpointed for this partition: `<parent>/replication-offset-checkpoint`
 * when the parent is a broker's log directory; undefined otherwise or when it has no entry.
 */
export function checkpointedHighWatermark(io: FileIO, partitionDir: string, tp: TopicPartition | undefined): number | undefined {
  if (!tp) return undefined;
  const parent = path.dirname(path.resolve(partitionDir));
  if (!isBrokerLogDir(parent, io)) return undefined;
  return readOffsetCheckpoint(io, path.join(parent, REPLICATION_OFFSET_CHECKPOINT)).get(tpKey(tp.topic, tp.partition));
}

export interface CommittedView {
  lastStableOffset: number;
  /** undefined outside a broker's log directory (or without a checkpointed entry). */
  highWatermark: number | undefined;
  /** Where read_committed stops (exclusive): the last stable offset (at most the high watermark). */
  upperBound: number;
  /** Aborted transactions overlapping [fetchOffset, upperBound), by first offset. */
  aborted: AbortedTxn[];
  state: ProducerStateManager;
}

/** What a read_committed fetch from `fetchOffset` sees of the log (Kafka's fetch path). */
export function committedView(log: PartitionSource, fetchOffset: number): CommittedView {
  const highWatermark = checkpointedHighWatermark(log.io, log.dir, log.topicPartition);
  const state = partitionProducerState(log, highWatermark);
  const lastStableOffset = state.lastStableOffset(log.nextOffset);
  const upperBound = lastStableOffset;
  const aborted = collectAborted(log, state, fetchOffset, upperBound);
  return { lastStableOffset, highWatermark, upperBound, aborted, state };
}

/**
 * The aborted transactions overlapping [fetchOffset, upperBound), by first offset: below the
 * recovery point from the segments' `.txnindex` (UnifiedLog.collectAbortedTransactions), at and
 * above it from the markers `state` replayed (it was loaded from a snapshot at or below it).
 */
export function collectAborted(log: PartitionSource, state: ProducerStateManager, fetchOffset: number, upperBound: number): AbortedTxn[] {
  const recoveryPoint = log.positions().recoveryPoint;
  const aborted: AbortedTxn[] = [];
  const segs = log.segments;
  let first = 0;
  for (let i = 0; i < segs.length; i++) if (segs[i]!.baseOffset <= fetchOffset) first = i;
  for (let i = first; i < segs.length && segs[i]!.baseOffset < recoveryPoint; i++) {
    const file = path.join(log.dir, segmentFileName(segs[i]!.baseOffset, TXN_INDEX_SUFFIX));
    const found = collectAbortedTxns(log.io, file, fetchOffset, upperBound);
    aborted.push(...found.aborted.filter((t) => t.lastOffset < recoveryPoint));
    if (found.complete) break;
  }
  for (const t of state.aborted) if (t.lastOffset >= recoveryPoint && t.lastOffset >= fetchOffset && t.firstOffset < upperBound) aborted.push(t);
  return aborted.sort((a, b) => a.firstOffset - b.firstOffset);
}

/** The consumer's read_committed filter over batches in offset order (CompletedFetch). */
export class ReadCommittedFilter {
  private readonly txn: TxnMetadata;

  constructor(aborted: AbortedTxn[]) {
    this.txn = new TxnMetadata(aborted);
  }

  /** True when the entry's records are not returned: a control batch, or an aborted transaction's. */
  skip(entry: LogEntry): boolean {
    const h = entry.header;
    if (!h) return false;
    if (isControl(h)) {
      this.txn.onControlBatchRead(h, entryControlMarker(entry)?.type);
      return true;
    }
    return h.producerId >= 0 && this.txn.onBatchRead(h);
  }
}
