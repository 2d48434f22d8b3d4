/**
 * Transactions that logtool itself writes into a partition (Kafka's transactional producer plus the
 * coordinator's markers, kafka-format.md §2.4): the batches of one transaction are transactional
 * batches of one producer with consecutive sequences, followed — once they are all durable — by a
 * COMMIT marker; or by an ABORT marker when the transaction is abandoned.
 *
 * Producer ids: logtool allocates its own from LOGTOOL_PRODUCER_ID_BASE (2^52) upward, far above the
 * ids a Kafka cluster allocates (blocks of 1000 from 0), one new id per transaction with epoch 0:
 * the next id is one above the highest logtool id in the partition's producer state. Nothing else is
 * persisted — the log itself records the ids used; an interrupted transaction that left no durable
 * batch left no id behind, and its id may be used again harmlessly.
 *
 * A transaction interrupted before its marker (a crash, SIGKILL) stays open in the log: readers
 * with read_committed never see it, and the next transaction or `recover` ends it with an ABORT
 * marker (endDanglingTransactions), as Kafka's coordinator aborts a transaction that timed out.
 * Only logtool's ids are ended this way: a broker's open transactions may already be prepared for
 * commit by their coordinator, and are ended only by an explicit `transactions abort`.
 */
import { encodeBatch, type RecordInput } from '../format/record-batch.js';
import { LogtoolError } from '../errors.js';
import { abortTransaction, endTxnMarkerRecord, type AbortReport, type MarkerWritableLog } from './abort-transaction.js';
import { partitionProducerState } from './isolation.js';
import { CONTROL_COMMIT, type ProducerStateManager } from './producer-state.js';

/** First producer id logtool allocates (2^52: exact in a double, far above a cluster's ids). */
export const LOGTOOL_PRODUCER_ID_BASE = 2 ** 52;

export const isLogtoolProducerId = (id: number): boolean => id >= LOGTOOL_PRODUCER_ID_BASE;

/** What a transaction needs of a writable log (a Log satisfies it). */
export interface TransactionalLog extends MarkerWritableLog {
  append(records: readonly RecordInput[], options: { producerId: number; producerEpoch: number; baseSequence: number; transactional: true; compression?: number; ackBeforeSync?: boolean }): Promise<{ baseOffset: number; lastOffset: number; count: number; status: string }>;
  flush(): Promise<void>;
}

/** Ends every open transaction of a logtool producer id with an ABORT marker; returns them. */
export async function endDanglingTransactions(log: TransactionalLog, state: ProducerStateManager = partitionProducerState(log)): Promise<AbortReport[]> {
  const out: AbortReport[] = [];
  for (const t of state.openTransactions()) if (isLogtoolProducerId(t.producerId)) out.push(await abortTransaction(log, { producerId: t.producerId }));
  return out;
}

/** The next logtool producer id for this producer state. */
export function allocateProducerId(state: ProducerStateManager): number {
  let next = LOGTOOL_PRODUCER_ID_BASE;
  for (const pid of state.producers.keys()) if (isLogtoolProducerId(pid) && pid >= next) next = pid + 1;
  if (!Number.isSafeInteger(next)) throw new LogtoolError('unsupported', 'no logtool producer id left below 2^53');
  return next;
}

/**
 * One transaction: begin() ends dangling logtool transactions and allocates a producer id; append()
 * writes transactional batches; commit() makes them durable, then appends the COMMIT marker (and
 * makes it durable); abort() appends an ABORT marker instead. Nothing written: no marker.
 */
export class LogTransaction {
  readonly producerId: number;
  readonly producerEpoch = 0;
  /** The dangling transactions begin() ended. */
  readonly endedDangling: AbortReport[];
  private nextSequence = 0;
  private written = false;
  private ended = false;

  private constructor(
    private readonly log: TransactionalLog,
    producerId: number,
    endedDangling: AbortReport[],
  ) {
    this.producerId = producerId;
    this.endedDangling = endedDangling;
  }

  static async begin(log: TransactionalLog): Promise<LogTransaction> {
    const state = partitionProducerState(log);
    const ended = await endDanglingTransactions(log, state);
    const after = ended.length > 0 ? partitionProducerState(log) : state;
    return new LogTransaction(log, allocateProducerId(after), ended);
  }

  /** Appends one transactional batch (offsets at once; acknowledged under the log's flush mode). */
  append(records: readonly RecordInput[], options: { compression?: number; ackBeforeSync?: boolean } = {}) {
    if (this.ended) throw new LogtoolError('invalid-state', `transaction of producer ${this.producerId} has ended`, { file: this.log.dir });
    const baseSequence = this.nextSequence;
    this.nextSequence = (this.nextSequence + records.length) % 0x80000000;
    this.written = true;
    return this.log.append(records, { ...options, producerId: this.producerId, producerEpoch: this.producerEpoch, baseSequence, transactional: true });
  }

  /** Every batch durable, then the COMMIT marker, durable. Returns the marker's offset (undefined: nothing was written). */
  async commit(nowMs = Date.now()): Promise<number | undefined> {
    if (this.ended) throw new LogtoolError('invalid-state', `transaction of producer ${this.producerId} has ended`, { file: this.log.dir });
    this.ended = true;
    if (!this.written) return undefined;
    await this.log.flush();
    const marker = encodeBatch([endTxnMarkerRecord(CONTROL_COMMIT, 0, nowMs)], {
      baseOffset: 0,
      producerId: this.producerId,
      producerEpoch: this.producerEpoch,
      baseSequence: -1,
      transactional: true,
      control: true,
    });
    const r = await this.log.appendEncoded(marker, { control: true, flushMode: 'sync' });
    if (r.status !== 'flushed') throw new LogtoolError('io', `the COMMIT marker at offset ${r.baseOffset} was not made durable (${r.status})`, { file: this.log.dir });
    return r.baseOffset;
  }

  /** Ends the transaction with an ABORT marker (none when nothing was written). */
  async abort(): Promise<AbortReport | undefined> {
    if (this.ended) return undefined;
    this.ended = true;
    if (!this.written) return undefined;
    await this.log.flush();
    return abortTransaction(this.log, { producerId: this.producerId });
  }
}
