/**
 * A channel's take transaction, the take side of Flume's MemoryChannel.MemoryTransaction (doTake,
 * doCommit, doRollback; org.apache.flume.channel.BasicTransactionSemantics): records are handed
 * out after the consumer group's committed position (consumer-positions.ts, Kafka's committed
 * offset), read ahead in chunks; commit persists the position after the last record taken,
 * rollback leaves it so the same records are taken again (at-least-once delivery).
 */
import { LogtoolError } from '../errors.js';
import type { Log } from '../log/log.js';
import type { LogRecord } from '../format/record-batch.js';
import type { ConsumerPositions } from './consumer-positions.js';
import { POLL_INTERVAL_MS, type ChannelStats, type TxState } from './channel-capacity.js';

export interface TakeTransaction {
  /** The next record after those already taken, or undefined if there is none now. */
  take(): LogRecord | undefined;
  /** Like take(), but waits up to maxWaitMs (default keepAliveMs) for a record to be put. */
  takeWait(maxWaitMs?: number): Promise<LogRecord | undefined>;
  /** Persists the position after the last record taken. */
  commit(): void;
  /** Forgets the takes: the same records are taken again. */
  rollback(): void;
  readonly takenRecords: number;
}

/** What a take transaction needs of its channel. */
export interface TakeHost {
  readonly log: Log;
  readonly positions: ConsumerPositions;
  readonly group: string;
  readonly transactionCapacity: number;
  readonly keepAliveMs: number;
  readonly stats: ChannelStats;
  /** The committed take position when the transaction starts. */
  readonly startPosition: number;
  /** Whether takes read as read_committed now (a put commit may turn it on during a take). */
  readCommitted(): boolean;
  ensureOpen(): void;
  /** Resolves when a put commits or after ms. */
  waitForChange(ms: number): Promise<void>;
  notify(): void;
  /** The take position is now `next` (its checkpoint written). */
  committed(next: number): void;
  /** The transaction is over: another may open. */
  ended(): void;
}

/** Records read from the log per refill of a take transaction's read-ahead. */
const READ_AHEAD_RECORDS = 256;

interface TakeCursor {
  state: TxState;
  /** The offset after the last record taken. */
  next: number;
  taken: number;
  /** Read-ahead records, the next to take last. */
  ahead: LogRecord[];
}

/** The next record for the transaction, refilling the read-ahead from the log when it is empty. */
function takeNext(host: TakeHost, cur: TakeCursor): LogRecord | undefined {
  if (cur.taken >= host.transactionCapacity) {
    throw new LogtoolError('too-large', `take transaction is full: it holds transactionCapacity (${host.transactionCapacity}) records; commit it and start another`);
  }
  if (cur.ahead.length === 0) {
    host.ensureOpen();
    if (cur.next < host.log.logStartOffset) cur.next = host.log.logStartOffset;
    if (cur.next >= host.positions.logEndOffset()) return undefined;
    // read_committed: a put commit of several batches is seen whole once its marker is there.
    cur.ahead = [...host.log.read({ fromOffset: cur.next, maxRecords: Math.min(READ_AHEAD_RECORDS, host.transactionCapacity - cur.taken), isolationLevel: host.readCommitted() ? 'read_committed' : 'read_uncommitted' })].reverse();
    if (cur.ahead.length === 0) return undefined;
  }
  const r = cur.ahead.pop()!;
  cur.next = r.offset + 1;
  cur.taken++;
  return r;
}

/** A new, open take transaction of the channel `host` (which allows one at a time). */
export function openTakeTransaction(host: TakeHost): TakeTransaction {
  const cur: TakeCursor = { state: 'open', next: host.startPosition, taken: 0, ahead: [] };
  const requireOpen = (what: string) => {
    if (cur.state !== 'open') throw new LogtoolError('invalid-state', `cannot ${what} a take transaction that is ${cur.state}`);
  };
  const end = (s: TxState) => {
    cur.state = s;
    cur.ahead = [];
    host.ended();
  };
  return {
    take: () => {
      requireOpen('take from');
      host.stats.takeAttempts++;
      return takeNext(host, cur);
    },
    takeWait: async (maxWaitMs = host.keepAliveMs) => {
      requireOpen('take from');
      host.stats.takeAttempts++;
      const deadline = Date.now() + maxWaitMs;
      for (;;) {
        const r = takeNext(host, cur);
        if (r) return r;
        const left = deadline - Date.now();
        if (left <= 0) return undefined;
        await host.waitForChange(Math.min(left, POLL_INTERVAL_MS));
        requireOpen('take from');
      }
    },
    commit: () => {
      requireOpen('commit');
      if (cur.taken > 0) {
        try {
          host.positions.commit(host.group, cur.next);
        } catch (e) {
          end('rolled-back'); // the position stays; the records will be taken again
          host.stats.rollbacks++;
          throw e;
        }
        host.committed(cur.next);
        host.stats.takeSuccesses += cur.taken;
      }
      end('committed');
      host.notify();
    },
    rollback: () => {
      if (cur.state === 'rolled-back') return;
      requireOpen('roll back');
      end('rolled-back');
      host.stats.rollbacks++;
    },
    get takenRecords() {
      return cur.taken;
    },
  };
}
