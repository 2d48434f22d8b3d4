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
 * The last stable offset needs the producer state of the whole log: one scan of its batches.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import type { LogSegment } from '../segment/segment.js';
import { TXN_INDEX_SUFFIX, segmentFileName } from '../segment/segment-files.js';
import type { LogEntry } from '../segment/file-records.js';
import { decodeEntryRecords } from '../format/entry-records.js';
import { controlTypeOf, isControl } from '../format/record-batch.js';
import { REPLICATION_OFFSET_CHECKPOINT, readOffsetCheckpoint, tpKey } from '../checkpoint.js';
import { isBrokerLogDir } from '../logdir/entries.js';
import type { TopicPartition } from '../log/topic-partition.js';
import { CONTROL_ABORT, CONTROL_COMMIT, ProducerStateManager, TxnMetadata, type ControlMarker } from './producer-state.js';
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

/** The control record of a control batch (undefined: no readable record). */
export function entryControlMarker(entry: LogEntry): ControlMarker | undefined {
  try {
    const r = decodeEntryRecords(entry)[0];
    return r ? markerOf(r.key, r.value) : undefined;
  } catch {
    return undefined;
  }
}

/** A control record's marker from its key and value. */
export function markerOf(key: Buffer | null, value: Buffer | null): ControlMarker | undefined {
  const t = controlTypeOf(key);
  if (!t) return undefined;
  const endTxn = (t.type === CONTROL_ABORT || t.type === CONTROL_COMMIT) && value !== null && value.length >= 6;
  return { type: t.type, coordinatorEpoch: endTxn ? value.readInt32BE(2) : -1 };
}

/**
 * The producer state after every whole batch of the log (Kafka's loader replaying the log into
 * its ProducerStateManager). Stops quietly at a torn or corrupt entry: readers report those.
 */
export function scanProducerState(segments: readonly LogSegment[], highWatermark?: number): ProducerStateManager {
  const state = new ProducerStateManager(highWatermark);
  for (const seg of segments) {
    const scanner = seg.scanner({});
    for (const entry of scanner.entries()) {
      if (entry.header) state.update(entry.header, () => entryControlMarker(entry));
    }
    if (scanner.end.kind !== 'end') break;
  }
  return state;
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
  const state = scanProducerState(log.segments, highWatermark);
  const lastStableOffset = state.lastStableOffset(log.nextOffset);
  const upperBound = lastStableOffset;
  const recoveryPoint = log.positions().recoveryPoint;
  const aborted: AbortedTxn[] = [];
  // Below the recovery point: the segments' .txnindex (UnifiedLog.collectAbortedTransactions).
  const segs = log.segments;
  let first = 0;
  for (let i = 0; i < segs.length; i++) if (segs[i]!.baseOffset <= fetchOffset) first = i;
  for (let i = first; i < segs.length && segs[i]!.baseOffset < recoveryPoint; i++) {
    const file = path.join(log.dir, segmentFileName(segs[i]!.baseOffset, TXN_INDEX_SUFFIX));
    const found = collectAbortedTxns(log.io, file, fetchOffset, upperBound);
    aborted.push(...found.aborted.filter((t) => t.lastOffset < recoveryPoint));
    if (found.complete) break;
  }
  // At and above it: from the markers.
  for (const t of state.aborted) if (t.lastOffset >= recoveryPoint && t.lastOffset >= fetchOffset && t.firstOffset < upperBound) aborted.push(t);
  aborted.sort((a, b) => a.firstOffset - b.firstOffset);
  return { lastStableOffset, highWatermark, upperBound, aborted, state };
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
