/**
 * Ending an open transaction with an ABORT marker, as Kafka's transaction coordinator does when a
 * transaction times out (TransactionMarkerChannelManager → WriteTxnMarkers; the marker format of
 * kafka-format.md §2.4), or as `kafka-transactions.sh abort` has the broker do
 * (TransactionsCommand.AbortTransactionCommand):
 *
 * - producer epoch: the producer's current one (a given epoch must not be older: Kafka fences it);
 * - coordinator epoch: the producer's last known one (Kafka's tool: `orElse(0)`, never negative) —
 *   a higher one would make the broker refuse the real coordinator's later marker;
 * - partition leader epoch: the latest in `leader-epoch-checkpoint`, else the producer's last batch's;
 * - then Kafka's TransactionIndex.append of the aborted transaction to the marker's segment: the
 *   log's appendEncoded adds it for every ABORT marker (indexAbortedTxn), once the marker is written.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { LogtoolError } from '../errors.js';
import type { LogSegment } from '../segment/segment.js';
import { TXN_INDEX_SUFFIX, segmentFileName } from '../segment/segment-files.js';
import { encodeBatch, readBatchHeader } from '../format/record-batch.js';
import { LEADER_EPOCH_CHECKPOINT, readLeaderEpochCheckpoint } from './leader-epochs.js';
import { partitionProducerState } from './isolation.js';
import { CONTROL_ABORT, type ProducerState, type ProducerStateManager } from './producer-state.js';
import { appendTxnIndex, type AbortedTxn } from './transaction-index.js';

/** What aborting needs of a writable log (a Log satisfies it). */
export interface MarkerWritableLog {
  readonly dir: string;
  readonly io: FileIO;
  readonly segments: readonly LogSegment[];
  positions(): { recoveryPoint: number };
  appendEncoded(batch: Buffer, options: { control?: boolean; flushMode?: 'sync' }): Promise<{ baseOffset: number; status: string }>;
}

export interface AbortOptions {
  producerId: number;
  /** Default: the producer's current epoch. */
  producerEpoch?: number;
  /** The marker's timestamp (default now). */
  nowMs?: number;
}

export interface AbortReport {
  partition: string;
  producerId: number;
  producerEpoch: number;
  coordinatorEpoch: number;
  partitionLeaderEpoch: number;
  /** First offset of the aborted transaction. */
  firstOffset: number;
  markerOffset: number;
  /** The aborted transaction as `.txnindex` records it. */
  txnIndexEntry: AbortedTxn;
}

/** The end-transaction marker's key and value (kafka-format.md §2.4). */
export function endTxnMarkerRecord(type: number, coordinatorEpoch: number, timestamp: number) {
  const key = Buffer.alloc(4);
  key.writeInt16BE(type, 2);
  const value = Buffer.alloc(6);
  value.writeInt32BE(coordinatorEpoch, 2);
  return { key, value, timestamp };
}

/**
 * The producer's state and the marker's producer epoch, or a `refused` error naming `dir` when there is
 * nothing to abort (an epoch beyond int16: `invalid-argument`) (commands check this on a read-only open first, so a refusal writes nothing).
 */
export function abortTarget(state: ProducerStateManager, opts: AbortOptions, dir: string): { p: ProducerState; producerEpoch: number } {
  const p = state.producers.get(opts.producerId);
  if (!p || p.txnFirst < 0) {
    const open = state.openTransactions().map((t) => t.producerId);
    throw new LogtoolError('refused', `producer ${opts.producerId} has no open transaction in this partition (open: ${open.length > 0 ? open.join(', ') : 'none'})`, { file: dir });
  }
  const producerEpoch = opts.producerEpoch ?? p.epoch;
  if (producerEpoch < p.epoch || producerEpoch > 0x7fff)
    throw new LogtoolError(producerEpoch < p.epoch ? 'refused' : 'invalid-argument', `producer epoch ${producerEpoch} is ${producerEpoch < p.epoch ? `older than the producer's current epoch ${p.epoch} (Kafka fences it)` : 'beyond int16'}`, { file: dir });
  return { p, producerEpoch };
}

/**
 * Kafka's TransactionIndex.append of an aborted transaction to the `.txnindex` of the segment
 * holding its marker (the append path calls it for every ABORT marker that completes one).
 */
export function indexAbortedTxn(log: { readonly io: FileIO; readonly dir: string; readonly segments: readonly LogSegment[] }, entry: AbortedTxn): void {
  let seg = log.segments[0]!;
  for (const s of log.segments) if (s.baseOffset <= entry.lastOffset) seg = s;
  appendTxnIndex(log.io, path.join(log.dir, segmentFileName(seg.baseOffset, TXN_INDEX_SUFFIX)), entry);
}

/**
 * The partition leader epoch of the producer's last batch: from its state, else (a state loaded
 * from a snapshot, which does not record it) from that batch's header.
 */
function lastBatchLeaderEpoch(segments: readonly LogSegment[], p: ProducerState): number {
  if (p.partitionLeaderEpoch >= 0) return p.partitionLeaderEpoch;
  const offset = Math.max(p.lastDataOffset, p.txnFirst);
  let seg: LogSegment | undefined;
  for (const s of segments) if (s.baseOffset <= offset) seg = s;
  return seg?.translateOffset(offset)?.entry.header?.partitionLeaderEpoch ?? p.partitionLeaderEpoch;
}

/** Appends an ABORT marker for the producer's open transaction and indexes it; see the header. */
export async function abortTransaction(log: MarkerWritableLog, opts: AbortOptions): Promise<AbortReport> {
  const state = partitionProducerState(log);
  const { p, producerEpoch } = abortTarget(state, opts, log.dir);
  const epochs = readLeaderEpochCheckpoint(log.io, path.join(log.dir, LEADER_EPOCH_CHECKPOINT));
  const partitionLeaderEpoch = epochs.length > 0 ? epochs[epochs.length - 1]!.epoch : lastBatchLeaderEpoch(log.segments, p);
  const coordinatorEpoch = Math.max(p.coordinatorEpoch, 0);
  const batch = encodeBatch([endTxnMarkerRecord(CONTROL_ABORT, coordinatorEpoch, opts.nowMs ?? Date.now())], {
    baseOffset: 0,
    partitionLeaderEpoch,
    producerId: opts.producerId,
    producerEpoch,
    baseSequence: -1,
    transactional: true,
    control: true,
  });
  const r = await log.appendEncoded(batch, { control: true, flushMode: 'sync' });
  if (r.status !== 'flushed') throw new LogtoolError('io', `the ABORT marker at offset ${r.baseOffset} was not made durable (${r.status})`, { file: log.dir });
  const header = { ...readBatchHeader(batch, 0), baseOffset: r.baseOffset };
  state.update(header, () => ({ type: CONTROL_ABORT, coordinatorEpoch }));
  // The log's appendEncoded added the entry to the marker's segment's .txnindex (indexAbortedTxn).
  const entry = state.aborted[state.aborted.length - 1]!;
  return { partition: log.dir, producerId: opts.producerId, producerEpoch, coordinatorEpoch, partitionLeaderEpoch, firstOffset: entry.firstOffset, markerOffset: r.baseOffset, txnIndexEntry: entry };
}
