/**
 * A Flume-style channel over one Log: put transactions append, take transactions read after a
 * consumer group's committed position (consumer-positions.ts), which is the take cursor.
 *
 * - A put transaction stages records in memory and appends them as ONE record batch on commit:
 *   a batch is all-or-nothing on disk (recovery truncates a torn batch whole), so a crash never
 *   leaves half a transaction. A commit too large for one batch (max.message.bytes) is a logtool
 *   transaction instead (partition-state/log-transaction.ts, as `append --transaction`):
 *   transactional batches, made durable, then a COMMIT marker; takes read as a read_committed
 *   consumer, so they see all of such a commit or none of it, and Channel.open ends a transaction
 *   a crash left open (ABORT). Rollback discards the staged records.
 * - A take transaction hands out records after the group's committed position. Commit persists
 *   the position after the last record taken; rollback leaves it, so the same records are taken
 *   again (by the next take transaction, or after a crash and reopen: at-least-once delivery).
 * - Capacity: the channel's size is the records between the committed take position and the log
 *   end offset. A put commit that would exceed `capacity` or `capacityBytes` waits up to
 *   `keepAliveMs` for take commits to free room, then fails with a `too-large` LogtoolError
 *   ("channel is full"); the transaction stays open to be retried or rolled back.
 *
 * Concurrency (one process, one event loop): any number of put transactions may be open; their
 * commits append in the order commit() was called, even while an earlier one waits for room.
 * At most one take transaction is open at a time per channel (the cursor cannot represent holes
 * left by a rolled-back take between two committed ones). One Channel per group: another process
 * committing the same group's position is detected (a take commit never moves it backwards) but
 * not coordinated.
 *
 * Durability: a put commit resolves with the Log's AppendResult (its `status` says flushed,
 * committed, written or timed-out under the log's flush mode). A take commit writes the positions
 * checkpoint durably before returning; the position may point past data that was not yet flushed,
 * so after a power loss that shortens the log the channel reopens at the log end.
 *
 * Split as Flume splits MemoryChannel: the put side is put-transaction.ts, the take side
 * take-transaction.ts, capacities, counters and size channel-capacity.ts; this file holds the
 * channel's state, the put commit (waiting for room, in commit() order) and the waits.
 */
import { LogtoolError } from '../errors.js';
import type { AppendOptions, AppendResult, Log } from '../log/log.js';
import type { RecordInput } from '../format/record-batch.js';
import { ConsumerPositions, validateGroupName } from './consumer-positions.js';
import { endDanglingTransactions } from '../partition-state/log-transaction.js';
import { scanProducerState } from '../partition-state/isolation.js';
import { MARKER_BATCH_BYTES, commitAsTransaction, splitIntoBatches } from './put-batches.js';
import { ChannelSize, POLL_INTERVAL_MS, channelCapacities, type ChannelCounters, type ChannelOptions } from './channel-capacity.js';
import { openPutTransaction, type PutTransaction } from './put-transaction.js';
import { openTakeTransaction, type TakeTransaction } from './take-transaction.js';

export type { ChannelCounters, ChannelOptions } from './channel-capacity.js';
export type { PutTransaction } from './put-transaction.js';
export type { TakeTransaction } from './take-transaction.js';

export class Channel {
  readonly log: Log;
  readonly group: string;
  readonly positions: ConsumerPositions;
  readonly capacity: number;
  readonly capacityBytes: number;
  readonly transactionCapacity: number;
  readonly transactionCapacityBytes: number;
  readonly keepAliveMs: number;
  private readonly appendOptions: AppendOptions;
  /** Committed take position (next offset to take), kept in step with the checkpoint. */
  private takePosition: number;
  private takeOpen = false;
  /**
   * Whether the log may hold transactions (any transactional batch when the channel was made, or
   * a put commit of several batches since): takes then read as read_committed, which scans the
   * producer state per read-ahead refill; a log without any is read plainly.
   */
  private readCommitted: boolean;
  /** Put commits queue here so they append in commit() order. */
  private putChain: Promise<void> = Promise.resolve();
  private readonly waiters = new Set<() => void>();
  private readonly stats = { putAttempts: 0, putSuccesses: 0, takeAttempts: 0, takeSuccesses: 0, rollbacks: 0 };
  private readonly size: ChannelSize;

  constructor(log: Log, options: ChannelOptions) {
    validateGroupName(options.group);
    if (log.readOnly) throw new LogtoolError('invalid-state', 'a channel needs a log opened for writing', { file: log.dir });
    this.log = log;
    this.group = options.group;
    const caps = channelCapacities(options);
    this.capacity = caps.capacity;
    this.capacityBytes = caps.capacityBytes;
    this.transactionCapacity = caps.transactionCapacity;
    this.transactionCapacityBytes = caps.transactionCapacityBytes;
    this.keepAliveMs = caps.keepAliveMs;
    this.size = new ChannelSize(log);
    this.appendOptions = options.appendOptions ?? {};
    this.positions = new ConsumerPositions(log);
    // Below the log start restarts at the start; beyond the readable end (a lost tail) at the end.
    this.takePosition = this.positions.resumePosition(this.group).offset;
    this.readCommitted = [...scanProducerState(log.segments).producers.values()].some((p) => p.coordinatorEpoch >= 0 || p.txnFirst >= 0);
  }

  /**
   * A channel whose log a crash left with an open logtool transaction (a put commit of several
   * batches cut short) first ends it with an ABORT marker, so takes are not held at it.
   */
  static async open(log: Log, options: ChannelOptions): Promise<Channel> {
    const channel = new Channel(log, options);
    await endDanglingTransactions(log);
    return channel;
  }

  private ensureOpen(): void {
    if (this.log.isClosed) throw new LogtoolError('closed', 'the channel\'s log is closed', { file: this.log.dir });
  }

  // -------------------------------------------------------------------------------------------
  // Size and counters

  /** Records between the committed take position and the log end (accepted appends included). */
  sizeRecords(): number {
    return this.size.records(this.takePosition);
  }

  /** Log bytes between the committed take position and the log end (write buffer included). */
  sizeBytes(): number {
    return this.size.bytes(this.takePosition);
  }

  counters(): ChannelCounters {
    return { ...this.stats, sizeRecords: this.sizeRecords(), sizeBytes: this.sizeBytes(), capacityRecords: this.capacity, capacityBytes: this.capacityBytes };
  }

  /** The committed take position (next offset a new take transaction starts from). */
  get committedTakePosition(): number {
    return this.takePosition;
  }

  // -------------------------------------------------------------------------------------------
  // Waiting

  /** Resolves on a notify() or after ms (whichever first). */
  private waitForChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.waiters.add(done);
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  // -------------------------------------------------------------------------------------------
  // Put

  putTransaction(): PutTransaction {
    this.ensureOpen();
    return openPutTransaction({
      transactionCapacity: this.transactionCapacity,
      transactionCapacityBytes: this.transactionCapacityBytes,
      stats: this.stats,
      commitPut: (records) => this.commitPut(records),
    });
  }

  private async commitPut(records: readonly RecordInput[]): Promise<AppendResult> {
    // Encoded here (at offset 0; the log rewrites the base offset) to know the exact batch sizes.
    const chunks = splitIntoBatches(records, { ...this.appendOptions, maxMessageBytes: this.log.config.maxMessageBytes });
    const batch = chunks.length === 1 ? chunks[0]!.batch : undefined;
    // Several batches: a transaction, whose COMMIT marker takes one more offset and batch.
    const bytes = chunks.reduce((n, c) => n + c.batch.length, 0) + (batch ? 0 : MARKER_BATCH_BYTES);
    const offsets = records.length + (batch ? 0 : 1);
    if (bytes > this.capacityBytes) {
      throw new LogtoolError('too-large', `put transaction of ${bytes} bytes can never fit the channel's capacityBytes (${this.capacityBytes})`, { file: this.log.dir });
    }
    const prev = this.putChain;
    let release!: () => void;
    this.putChain = new Promise<void>((r) => (release = r));
    let pending: Promise<AppendResult>;
    try {
      await prev; // earlier commits append first
      const deadline = Date.now() + this.keepAliveMs;
      for (;;) {
        this.ensureOpen();
        const roomRecords = this.sizeRecords() + offsets <= this.capacity;
        const roomBytes = this.sizeBytes() + bytes <= this.capacityBytes;
        if (roomRecords && roomBytes) break;
        const left = deadline - Date.now();
        if (left <= 0) {
          const why = !roomRecords
            ? `${this.sizeRecords()} of ${this.capacity} records are in the channel and ${offsets} more do not fit`
            : `${this.sizeBytes()} of ${this.capacityBytes} bytes are in the channel and ${bytes} more do not fit`;
          throw new LogtoolError('too-large', `channel is full: ${why}; no take freed room within keepAliveMs (${this.keepAliveMs})`, { file: this.log.dir });
        }
        await this.waitForChange(Math.min(left, POLL_INTERVAL_MS * 5));
      }
      if (batch) pending = this.log.appendEncoded(batch, this.appendOptions);
      else {
        this.readCommitted = true;
        await (pending = commitAsTransaction(this.log, chunks.map((c) => c.records), this.appendOptions.compression)); // the next commit appends after its marker
      }
    } finally {
      release();
    }
    const result = await pending;
    this.stats.putSuccesses += records.length;
    this.notify();
    return result;
  }

  // -------------------------------------------------------------------------------------------
  // Take

  takeTransaction(): TakeTransaction {
    this.ensureOpen();
    if (this.takeOpen) throw new LogtoolError('invalid-state', 'a take transaction is already open on this channel; commit or roll it back first');
    this.takeOpen = true;
    return openTakeTransaction({
      log: this.log,
      positions: this.positions,
      group: this.group,
      transactionCapacity: this.transactionCapacity,
      keepAliveMs: this.keepAliveMs,
      stats: this.stats,
      startPosition: this.takePosition,
      readCommitted: () => this.readCommitted,
      ensureOpen: () => this.ensureOpen(),
      waitForChange: (ms) => this.waitForChange(ms),
      notify: () => this.notify(),
      committed: (next) => {
        this.takePosition = next;
      },
      ended: () => {
        this.takeOpen = false;
      },
    });
  }
}
