/**
 * Idempotent appends, checked as Kafka's broker checks a producer's batch (UnifiedLog
 * .analyzeAndValidateProducerState; ProducerStateEntry.findDuplicateBatch; ProducerAppendInfo
 * .checkProducerEpoch / checkSequence), against the producer state of the log
 * (producer-state.ts), loaded at the first idempotent append (newest usable snapshot plus the
 * batches after it) and kept up to date:
 *
 * - a batch whose producer epoch and sequence range equal one of the producer's last five batches
 *   is a retried duplicate: it is not written again, the original offsets are returned;
 * - an epoch older than the producer's is refused (Kafka: InvalidProducerEpochException);
 * - a new epoch must start at sequence 0, unless the producer had no epoch yet;
 * - within an epoch the first sequence must follow the last one (int32 wraps to 0), unless the log
 *   knows nothing of the producer (Kafka accepts any sequence then: its records may have been
 *   deleted). Anything else is a gap: OutOfOrderSequenceException, a clear error here.
 */
import { LogtoolError } from '../errors.js';
import { Attr, decodeRecords, readBatchHeader, RECORD_BATCH_OVERHEAD, type BatchHeader } from '../format/record-batch.js';
import { markerOf } from './producer-state-load.js';
import type { AbortedTxn, BatchMetadata, ProducerStateManager } from './producer-state.js';

export interface IdempotentBatch {
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  count: number;
  transactional?: boolean;
  /** A control batch's (first) record: no sequence check; its marker updates the state. */
  control?: { key?: Buffer | null; value: Buffer | null };
}

const lastSeqOf = (b: IdempotentBatch) => (b.baseSequence + b.count - 1) % 0x80000000;

/**
 * The duplicate batch this one retries (its original offsets), or undefined when it is to be
 * appended; a LogtoolError ('refused') naming `dir` when Kafka would refuse it.
 */
export function checkIdempotentBatch(state: ProducerStateManager, b: IdempotentBatch, dir: string): BatchMetadata | undefined {
  const p = state.producers.get(b.producerId);
  if (!p) return undefined;
  const refuse = (why: string) => new LogtoolError('refused', `producer ${b.producerId}: ${why}; nothing was appended`, { file: dir });
  if (b.producerEpoch < p.epoch) throw refuse(`producer epoch ${b.producerEpoch} is older than its current epoch ${p.epoch} (fenced)`);
  if (b.producerEpoch === p.epoch) {
    const lastSeq = lastSeqOf(b);
    const dup = p.batches.find((m) => m.firstSeq === b.baseSequence && m.lastSeq === lastSeq);
    if (dup) return dup;
    const next = p.lastSequence === 0x7fffffff ? 0 : p.lastSequence + 1;
    if (b.baseSequence !== next) throw refuse(`out of order sequence ${b.baseSequence} in epoch ${b.producerEpoch}: the next is ${next} (last sequence ${p.lastSequence})`);
  } else if (b.baseSequence !== 0) throw refuse(`the first batch of new epoch ${b.producerEpoch} must have sequence 0, not ${b.baseSequence}`);
  return undefined;
}

/** Feeds an appended batch into the state (the fields the producer state reads of a header). */
export function recordIdempotentBatch(state: ProducerStateManager, b: IdempotentBatch, baseOffset: number, maxTimestamp: number): void {
  const h: BatchHeader = {
    baseOffset,
    batchLength: 0,
    partitionLeaderEpoch: -1,
    magic: 2,
    crc: 0,
    attributes: (b.transactional ? Attr.transactional : 0) | (b.control ? Attr.control : 0),
    lastOffsetDelta: b.count - 1,
    baseTimestamp: maxTimestamp,
    maxTimestamp,
    producerId: b.producerId,
    producerEpoch: b.producerEpoch,
    baseSequence: b.baseSequence,
    recordsCount: b.count,
  };
  state.update(h, () => (b.control ? markerOf(b.control.key ?? null, b.control.value) : undefined));
}

/**
 * The producer state a writable log keeps for its idempotent appends: built from the log's files
 * before the first append that carries a producer id (earlier appends of this session carry none),
 * then fed every such append — idempotent batches through check/appended, already-encoded batches
 * (markers included) through beforeEncoded/appendedEncoded.
 */
export class AppendGuard {
  private state: ProducerStateManager | undefined;

  /** `load`: the producer state of the log's files (producer-state-load.ts: snapshot plus tail). */
  constructor(
    private readonly load: () => ProducerStateManager,
    private readonly dir: string,
  ) {}

  private ensure(): ProducerStateManager {
    return (this.state ??= this.load());
  }

  /** Before append(): the duplicate's offsets, undefined to append; throws when Kafka would refuse. */
  check(b: IdempotentBatch): BatchMetadata | undefined {
    if (b.producerId < 0) return undefined;
    const state = this.ensure();
    return b.baseSequence >= 0 ? checkIdempotentBatch(state, b, this.dir) : undefined;
  }

  /** After append() assigned `baseOffset`. */
  appended(b: IdempotentBatch, baseOffset: number): void {
    if (b.producerId >= 0) recordIdempotentBatch(this.ensure(), b, baseOffset, Date.now());
  }

  /** Before appendEncoded(). */
  beforeEncoded(batch: Buffer): void {
    if (batch.length >= RECORD_BATCH_OVERHEAD && readBatchHeader(batch, 0).producerId >= 0) this.ensure();
  }

  /**
   * After appendEncoded() set the batch's base offset. Returns the transaction an ABORT marker
   * completed (what Kafka's append adds to the segment's `.txnindex`), if it completed one.
   */
  appendedEncoded(batch: Buffer): AbortedTxn | undefined {
    const h = readBatchHeader(batch, 0);
    if (h.producerId < 0 || !this.state) return undefined;
    const abortedBefore = this.state.aborted.length;
    this.state.update(h, () => {
      const r = decodeRecords(batch, 0, h)[0];
      return r ? markerOf(r.key, r.value) : undefined;
    });
    return this.state.aborted.length > abortedBefore ? this.state.aborted[this.state.aborted.length - 1] : undefined;
  }
}
