/**
 * The producer-state side of a partition's appends (Kafka's UnifiedLog.append:
 * analyzeAndValidateProducerState before the write, the ProducerStateManager update and the
 * .txnindex entry of an ABORT marker after it, and the producer snapshots UnifiedLog.roll and
 * close take). The write itself stays with the append path (append-path.ts).
 */
import type { RecordInput } from '../format/record-batch.js';
import { AppendGuard } from '../partition-state/idempotence.js';
import { partitionProducerState } from '../partition-state/isolation.js';
import { ProducerSnapshotKeeper } from '../partition-state/snapshot-keeper.js';
import { indexAbortedTxn } from '../partition-state/abort-transaction.js';
import type { ProducerStateSource } from '../partition-state/producer-state-load.js';
import type { AppendPath, AppendOptions, AppendResult, ValueSliceAppendOptions } from './append-path.js';
import type { ValueSlices } from '../format/value-slices.js';
import type { LogWarning } from './log-types.js';

/** The log as the producer state sees it. */
export interface ProducerLog extends ProducerStateSource {
  positions(): { recoveryPoint: number };
  warn(w: LogWarning): void;
}

export class ProducerAppends {
  private readonly guard: AppendGuard;
  /** Producer-state snapshots at roll and close (undefined when read-only). */
  readonly snapshots: ProducerSnapshotKeeper | undefined;

  constructor(
    private readonly log: ProducerLog,
    /** Throws when the log is closed, read-only or failed. */
    private readonly ensureWritable: () => void,
    readOnly: boolean,
    recoveryPoint: number,
  ) {
    this.guard = new AppendGuard(() => partitionProducerState(log), log.dir);
    this.snapshots = readOnly ? undefined : new ProducerSnapshotKeeper(log, recoveryPoint, (file, message) => log.warn({ file, message: `producer snapshot passed over: ${message}` }));
  }

  /** Log.append: idempotent producer fields checked as Kafka's broker checks them (partition-state/idempotence.ts). */
  append(appender: AppendPath, records: readonly RecordInput[], options: AppendOptions): Promise<AppendResult> {
    if (options.producerId === undefined) {
      // No producer (id −1): nothing to check or record, only the snapshot's note (no batch description per append).
      const baseOffset = appender.nextOffset;
      const result = appender.append(records, options);
      this.snapshots?.noteAppend(-1, baseOffset, appender.nextOffset - 1);
      return result;
    }
    const b = { producerId: options.producerId ?? -1, producerEpoch: options.producerEpoch ?? -1, baseSequence: options.control ? -1 : (options.baseSequence ?? -1), count: records.length, transactional: options.transactional, control: options.control ? records[0] : undefined };
    if (b.producerId >= 0) this.ensureWritable();
    const dup = this.guard.check(b);
    if (dup) return Promise.resolve({ baseOffset: dup.firstOffset, lastOffset: dup.lastOffset, count: records.length, status: 'written', duplicate: true });
    const baseOffset = appender.nextOffset;
    const result = appender.append(records, options);
    this.guard.appended(b, baseOffset);
    this.snapshots?.noteAppend(b.producerId, baseOffset, baseOffset + records.length - 1);
    return result;
  }

  /** Log.appendValueSlices: no producer (id -1), so no idempotence check, only the snapshot's note. */
  appendValueSlices(appender: AppendPath, slices: ValueSlices, options: ValueSliceAppendOptions): Promise<AppendResult> {
    const baseOffset = appender.nextOffset;
    const result = appender.appendValueSlices(slices, options);
    this.snapshots?.noteAppend(-1, baseOffset, appender.nextOffset - 1);
    return result;
  }

  /** Log.appendEncoded. */
  appendEncoded(appender: AppendPath, batch: Buffer, options: AppendOptions): Promise<AppendResult> {
    this.guard.beforeEncoded(batch);
    const result = appender.appendEncoded(batch, options);
    const aborted = this.guard.appendedEncoded(batch);
    this.snapshots?.noteEncoded(batch);
    // Kafka's append adds an ABORT marker's completed transaction to its segment's .txnindex.
    return aborted ? result.then((r) => (indexAbortedTxn(this.log, aborted), r)) : result;
  }
}
