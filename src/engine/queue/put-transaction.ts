/**
 * A channel's put transaction, the put side of Flume's MemoryChannel.MemoryTransaction (doPut,
 * doCommit, doRollback; org.apache.flume.channel.BasicTransactionSemantics): records are staged in
 * memory up to the transaction capacities, and commit hands them to the channel (channel.ts
 * commitPut), which appends them as one record batch — or a logtool transaction when they do not
 * fit one (put-batches.ts).
 */
import { LogtoolError } from '../errors.js';
import type { AppendResult } from '../log/log.js';
import type { RecordInput } from '../format/record-batch.js';
import type { ChannelStats, TxState } from './channel-capacity.js';

export interface PutTransaction {
  /** Stages one record; throws `too-large` past transactionCapacity or transactionCapacityBytes. */
  put(record: RecordInput): void;
  /** Appends the staged records as one batch (waiting up to keepAliveMs for room). */
  commit(): Promise<AppendResult>;
  /** Discards the staged records. */
  rollback(): void;
  readonly stagedRecords: number;
}

/** What a put transaction needs of its channel. */
export interface PutHost {
  readonly transactionCapacity: number;
  readonly transactionCapacityBytes: number;
  readonly stats: ChannelStats;
  /** Appends the records (in commit() order, waiting for room). */
  commitPut(records: readonly RecordInput[]): Promise<AppendResult>;
}

const recordBytes = (r: RecordInput): number => {
  let n = (r.key?.length ?? 0) + (r.value?.length ?? 0);
  for (const h of r.headers ?? []) n += Buffer.byteLength(h.key) + (h.value?.length ?? 0);
  return n;
};

/** A new, open put transaction of the channel `host`. */
export function openPutTransaction(host: PutHost): PutTransaction {
  const staged: RecordInput[] = [];
  let stagedBytes = 0;
  let state: TxState = 'open';
  const requireOpen = (what: string) => {
    if (state !== 'open') throw new LogtoolError('invalid-state', `cannot ${what} a put transaction that is ${state}`);
  };
  return {
    put: (record: RecordInput) => {
      requireOpen('put to');
      host.stats.putAttempts++;
      const bytes = recordBytes(record);
      if (staged.length + 1 > host.transactionCapacity) {
        throw new LogtoolError('too-large', `put transaction is full: it holds transactionCapacity (${host.transactionCapacity}) records; commit it and start another`);
      }
      if (stagedBytes + bytes > host.transactionCapacityBytes) {
        throw new LogtoolError('too-large', `put transaction is full: ${stagedBytes} + ${bytes} record bytes exceed transactionCapacityBytes (${host.transactionCapacityBytes})`);
      }
      staged.push(record);
      stagedBytes += bytes;
    },
    commit: async () => {
      requireOpen('commit');
      if (staged.length === 0) throw new LogtoolError('invalid-state', 'a put transaction needs at least one record to commit; roll back an empty one');
      state = 'committing';
      try {
        const result = await host.commitPut(staged);
        state = 'committed';
        return result;
      } catch (e) {
        if (state === 'committing') state = 'open'; // retry or roll back
        throw e;
      }
    },
    rollback: () => {
      if (state === 'rolled-back') return;
      requireOpen('roll back');
      staged.length = 0;
      stagedBytes = 0;
      state = 'rolled-back';
      host.stats.rollbacks++;
    },
    get stagedRecords() {
      return staged.length;
    },
  };
}
