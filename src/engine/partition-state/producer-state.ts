/**
 * Producer state of a partition, rebuilt from its batch headers in log order (Kafka's
 * ProducerStateManager, ProducerAppendInfo and ProducerStateEntry; kafka-format.md §2.4, §6.3, §7):
 * per producer id its epoch, last data batch, last timestamp, coordinator epoch and open
 * transaction; the aborted transactions (what `.txnindex` records) and the last stable offset.
 * One model for the cleaner, the reader (read_committed) and the `transactions` command.
 *
 * Also Kafka's consumer-side filter of aborted transactions (CleanedTransactionMetadata in the
 * cleaner, the same rules as the consumer's CompletedFetch): TxnMetadata.
 *
 * Memory: one small entry per producer id plus one per aborted transaction.
 */
import { Attr, type BatchHeader } from '../format/record-batch.js';
import type { AbortedTxn } from './transaction-index.js';

export type { AbortedTxn };

/** Control record types of end-transaction markers (kafka-format.md §2.4). */
export const CONTROL_ABORT = 0;
export const CONTROL_COMMIT = 1;

/** A control batch's record: its type and, for COMMIT/ABORT, the coordinator epoch (−1 unknown). */
export interface ControlMarker {
  type: number;
  coordinatorEpoch: number;
}

/** Kafka's ProducerStateEntry, as logtool needs it. */
export interface ProducerState {
  producerId: number;
  epoch: number;
  /** Last offset of the producer's last data batch in its current epoch; −1 = none. */
  lastDataOffset: number;
  /** Sequence of the last record of that batch (−1 = none or not idempotent). */
  lastSequence: number;
  /** Last offset minus first offset of that batch (0 = none; Kafka's lastOffsetDelta). */
  lastOffsetDelta: number;
  lastTimestamp: number;
  /** Coordinator epoch of the producer's last end-transaction marker; −1 = none. */
  coordinatorEpoch: number;
  /** First offset of its open transaction; −1 = none. */
  txnFirst: number;
  /** Last offset of its open transaction's last data batch; −1 = none. */
  txnLast: number;
  /** Partition leader epoch of the producer's last batch. */
  partitionLeaderEpoch: number;
  /** Its last NUM_BATCHES_TO_RETAIN idempotent data batches in the current epoch, oldest first. */
  batches: BatchMetadata[];
}

/** Kafka's BatchMetadata: what identifies a retried batch. */
export interface BatchMetadata {
  firstSeq: number;
  lastSeq: number;
  firstOffset: number;
  lastOffset: number;
}

/** Kafka's producer.id.expiration.ms default: producers idle this long are no longer active. */
export const DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000;

/** Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN. */
export const NUM_BATCHES_TO_RETAIN = 5;

/** An open transaction (Kafka's ongoing TxnMetadata plus what `transactions list` shows). */
export interface OpenTransaction {
  producerId: number;
  producerEpoch: number;
  firstOffset: number;
  lastOffset: number;
  lastTimestamp: number;
}

/** Kafka's ProducerStateManager fed by every batch header of the log, in order. */
export class ProducerStateManager {
  readonly producers = new Map<number, ProducerState>();
  /** Aborted transactions in marker order (ascending lastOffset). */
  readonly aborted: AbortedTxn[] = [];
  /** Producers with an open transaction, in the order their transactions began. */
  private readonly ongoing = new Set<number>();
  /** First offset of the earliest completed transaction whose marker is not below the high watermark. */
  private unreplicatedFirst = Infinity;
  private readonly highWatermark: number;

  /**
   * `highWatermark`: a broker's checkpointed high watermark (default: none, the whole log is
   * replicated). A transaction whose marker is at or above it stays unstable, as in Kafka's
   * unreplicatedTxns.
   */
  constructor(highWatermark = Infinity) {
    this.highWatermark = highWatermark;
  }

  /**
   * One batch (Kafka's ProducerAppendInfo.append). `marker` is read only for a control batch
   * (undefined when it has no readable record: an emptied marker).
   */
  update(h: BatchHeader, marker: () => ControlMarker | undefined): void {
    const pid = h.producerId;
    if (pid < 0) return;
    let p = this.producers.get(pid);
    if (!p) {
      p = { producerId: pid, epoch: h.producerEpoch, lastDataOffset: -1, lastSequence: -1, lastOffsetDelta: 0, lastTimestamp: -1, coordinatorEpoch: -1, txnFirst: -1, txnLast: -1, partitionLeaderEpoch: -1, batches: [] };
      this.producers.set(pid, p);
    }
    // Kafka's maybeUpdateProducerEpoch: a new epoch clears the batch metadata.
    if (h.producerEpoch !== p.epoch) {
      p.lastDataOffset = -1;
      p.lastSequence = -1;
      p.lastOffsetDelta = 0;
      p.batches = [];
      p.epoch = h.producerEpoch;
    }
    p.lastTimestamp = h.maxTimestamp;
    p.partitionLeaderEpoch = h.partitionLeaderEpoch;
    const last = h.baseOffset + h.lastOffsetDelta;
    if ((h.attributes & Attr.control) !== 0) {
      const m = marker();
      if ((m?.type === CONTROL_ABORT || m?.type === CONTROL_COMMIT) && (h.attributes & Attr.transactional) !== 0) this.endTransaction(p, m, last);
      return;
    }
    p.lastDataOffset = last;
    p.lastOffsetDelta = h.lastOffsetDelta;
    p.lastSequence = h.baseSequence < 0 ? -1 : (h.baseSequence + h.lastOffsetDelta) % 0x80000000;
    if (h.baseSequence >= 0) {
      p.batches.push({ firstSeq: h.baseSequence, lastSeq: p.lastSequence, firstOffset: h.baseOffset, lastOffset: last });
      if (p.batches.length > NUM_BATCHES_TO_RETAIN) p.batches.shift();
    }
    if ((h.attributes & Attr.transactional) !== 0) {
      if (p.txnFirst < 0) {
        p.txnFirst = h.baseOffset;
        this.ongoing.add(pid);
      }
      p.txnLast = last;
    }
  }

  /**
   * Kafka's loadProducerEntry: one producer as a snapshot recorded it (its open transaction, if
   * any, becomes ongoing). Producers are loaded before any batch is replayed.
   */
  loadEntry(p: ProducerState): void {
    this.producers.set(p.producerId, p);
    if (p.txnFirst >= 0) this.ongoing.add(p.producerId);
  }

  /** Kafka's appendEndTxnMarker + completeTxn: only a non-empty transaction is completed. */
  private endTransaction(p: ProducerState, m: ControlMarker, markerOffset: number): void {
    this.ongoing.delete(p.producerId);
    if (p.txnFirst >= 0 && markerOffset >= this.highWatermark) this.unreplicatedFirst = Math.min(this.unreplicatedFirst, p.txnFirst);
    if (m.type === CONTROL_ABORT && p.txnFirst >= 0) {
      this.aborted.push({ producerId: p.producerId, firstOffset: p.txnFirst, lastOffset: markerOffset, lastStableOffset: this.firstUnstableOffset(markerOffset + 1) });
    }
    if (m.coordinatorEpoch >= 0) p.coordinatorEpoch = m.coordinatorEpoch;
    p.txnFirst = -1;
    p.txnLast = -1;
  }

  /** First offset of the earliest open transaction, else `ifNone`. */
  firstUnstableOffset(ifNone: number): number {
    let lso = ifNone;
    for (const pid of this.ongoing) lso = Math.min(lso, this.producers.get(pid)!.txnFirst);
    return lso;
  }

  /**
   * Kafka's UnifiedLog.lastStableOffset: the first unstable offset (open transactions, and completed
   * ones whose marker is not replicated yet) if below the high watermark, else the high watermark
   * (the log end offset without one).
   */
  lastStableOffset(logEndOffset: number): number {
    return Math.min(this.firstUnstableOffset(logEndOffset), this.unreplicatedFirst, this.highWatermark);
  }

  /** The open transactions, earliest first. */
  openTransactions(): OpenTransaction[] {
    const out: OpenTransaction[] = [];
    for (const pid of this.ongoing) {
      const p = this.producers.get(pid)!;
      out.push({ producerId: pid, producerEpoch: p.epoch, firstOffset: p.txnFirst, lastOffset: p.txnLast, lastTimestamp: p.lastTimestamp });
    }
    return out.sort((a, b) => a.firstOffset - b.firstOffset);
  }

  /** Aborted transactions by first offset (what the cleaner and the consumer filter walk). */
  abortedByFirstOffset(): AbortedTxn[] {
    return [...this.aborted].sort((a, b) => a.firstOffset - b.firstOffset);
  }

  /**
   * Kafka's lastRecordsOfActiveProducers: producers not expired at `nowMs` (or with an open
   * transaction).
   */
  activeProducers(nowMs: number, producerIdExpirationMs: number): Map<number, ProducerState> {
    const out = new Map<number, ProducerState>();
    for (const [pid, p] of this.producers) if (p.txnFirst >= 0 || nowMs - p.lastTimestamp < producerIdExpirationMs) out.set(pid, p);
    return out;
  }
}

/**
 * Which data batches belong to aborted transactions, walking batches in offset order with the
 * aborted transactions of the range sorted by first offset (Kafka's CleanedTransactionMetadata;
 * the consumer's CompletedFetch applies the same rules for read_committed).
 */
export class TxnMetadata {
  private readonly aborted: AbortedTxn[];
  private next = 0;
  private readonly ongoingCommitted = new Set<number>();
  private readonly ongoingAborted = new Map<number, { txn: AbortedTxn; lastObservedBatchOffset: number }>();
  /** Aborted transactions whose markers the cleaned segment keeps (its .txnindex). */
  cleanedIndex: AbortedTxn[] | undefined;

  constructor(aborted: AbortedTxn[]) {
    this.aborted = aborted; // sorted by firstOffset
  }

  private consumeUpTo(offset: number): void {
    while (this.next < this.aborted.length && this.aborted[this.next]!.firstOffset <= offset) {
      const t = this.aborted[this.next++]!;
      if (!this.ongoingAborted.has(t.producerId)) this.ongoingAborted.set(t.producerId, { txn: t, lastObservedBatchOffset: -1 });
    }
  }

  /** A control batch was read (type undefined: no record); true if it can be discarded. */
  onControlBatchRead(h: BatchHeader, type: number | undefined): boolean {
    this.consumeUpTo(h.baseOffset + h.lastOffsetDelta);
    if (type === undefined) return true; // an emptied control batch: already cleaned
    const pid = h.producerId;
    if (type === CONTROL_ABORT) {
      const m = this.ongoingAborted.get(pid);
      this.ongoingAborted.delete(pid);
      if (m && m.lastObservedBatchOffset >= 0) {
        this.cleanedIndex?.push(m.txn);
        return false;
      }
      return true;
    }
    if (type === CONTROL_COMMIT) return !this.ongoingCommitted.delete(pid);
    return false;
  }

  /** A data batch was read; true if it belongs to an aborted transaction. */
  onBatchRead(h: BatchHeader): boolean {
    const last = h.baseOffset + h.lastOffsetDelta;
    this.consumeUpTo(last);
    if ((h.attributes & Attr.transactional) === 0) return false;
    const m = this.ongoingAborted.get(h.producerId);
    if (m) {
      m.lastObservedBatchOffset = last;
      return true;
    }
    this.ongoingCommitted.add(h.producerId);
    return false;
  }
}
