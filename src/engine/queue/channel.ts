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
 */
import { InvalidArgumentError, LogtoolError } from '../errors.js';
import type { AppendOptions, AppendResult, Log } from '../log/log.js';
import type { LogRecord, RecordInput } from '../format/record-batch.js';
import { ConsumerPositions, validateGroupName } from './consumer-positions.js';
import { endDanglingTransactions } from '../partition-state/log-transaction.js';
import { scanProducerState } from '../partition-state/isolation.js';
import { MARKER_BATCH_BYTES, commitAsTransaction, splitIntoBatches } from './put-batches.js';

export interface ChannelOptions {
  /** Consumer group whose committed position is the take cursor. */
  group: string;
  /** Most records between the take position and the log end (Flume `capacity`; default 10 000). */
  capacity?: number;
  /**
   * Most log bytes (encoded batches, as on disk) between the take position and the log end
   * (Flume `byteCapacity`; default 64 MiB).
   */
  capacityBytes?: number;
  /** Most records put or taken in one transaction (Flume `transactionCapacity`; default 1000). */
  transactionCapacity?: number;
  /**
   * Most record bytes (key + value + header keys and values) staged in one put transaction
   * (default 1 MiB; the encoded batch must also fit the log's max.message.bytes).
   */
  transactionCapacityBytes?: number;
  /** How long a full put commit waits for room, and takeWait() for a record (Flume `keepAlive`; default 3000 ms). */
  keepAliveMs?: number;
  /** Options of every append a put commit makes (flush mode, compression …). */
  appendOptions?: AppendOptions;
}

/** Flume's channel counters (ChannelCounter), plus the current size. */
export interface ChannelCounters {
  /** put() calls. */
  putAttempts: number;
  /** Records appended by committed put transactions. */
  putSuccesses: number;
  /** take() calls (takeWait counts once per call). */
  takeAttempts: number;
  /** Records whose take was committed. */
  takeSuccesses: number;
  /** Put and take transactions rolled back. */
  rollbacks: number;
  /** Records between the committed take position and the log end offset. */
  sizeRecords: number;
  /** Log bytes between the committed take position and the log end. */
  sizeBytes: number;
  capacityRecords: number;
  capacityBytes: number;
}

export interface PutTransaction {
  /** Stages one record; throws `too-large` past transactionCapacity or transactionCapacityBytes. */
  put(record: RecordInput): void;
  /** Appends the staged records as one batch (waiting up to keepAliveMs for room). */
  commit(): Promise<AppendResult>;
  /** Discards the staged records. */
  rollback(): void;
  readonly stagedRecords: number;
}

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

type TxState = 'open' | 'committing' | 'committed' | 'rolled-back';

export const DEFAULT_CHANNEL_CAPACITY = 10_000;
export const DEFAULT_CHANNEL_CAPACITY_BYTES = 64 * 1024 * 1024;
export const DEFAULT_TRANSACTION_CAPACITY = 1000;
export const DEFAULT_TRANSACTION_CAPACITY_BYTES = 1024 * 1024;
export const DEFAULT_KEEP_ALIVE_MS = 3000;
/** How often waits re-check (a put by another writer path, or buffered data reaching the file). */
const POLL_INTERVAL_MS = 20;
/** Records read from the log per refill of a take transaction's read-ahead. */
const READ_AHEAD_RECORDS = 256;

const recordBytes = (r: RecordInput): number => {
  let n = (r.key?.length ?? 0) + (r.value?.length ?? 0);
  for (const h of r.headers ?? []) n += Buffer.byteLength(h.key) + (h.value?.length ?? 0);
  return n;
};

function positiveInt(name: string, v: number | undefined, def: number): number {
  const n = v ?? def;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError([name], `${name} must be a positive integer, not ${v}`);
  return n;
}

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
  /** Byte position of takePosition, cached while it and the segment list stay the same. */
  private takeBytesCache: { offset: number; segments: unknown; segmentBase: number; position: number } | undefined;

  constructor(log: Log, options: ChannelOptions) {
    validateGroupName(options.group);
    if (log.readOnly) throw new LogtoolError('invalid-state', 'a channel needs a log opened for writing', { file: log.dir });
    this.log = log;
    this.group = options.group;
    this.capacity = positiveInt('capacity', options.capacity, DEFAULT_CHANNEL_CAPACITY);
    this.capacityBytes = positiveInt('capacityBytes', options.capacityBytes, DEFAULT_CHANNEL_CAPACITY_BYTES);
    this.transactionCapacity = positiveInt('transactionCapacity', options.transactionCapacity, DEFAULT_TRANSACTION_CAPACITY);
    this.transactionCapacityBytes = positiveInt('transactionCapacityBytes', options.transactionCapacityBytes, DEFAULT_TRANSACTION_CAPACITY_BYTES);
    const keepAlive = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
    if (!Number.isSafeInteger(keepAlive) || keepAlive < 0) throw new InvalidArgumentError(['keepAliveMs'], `keepAliveMs must be a non-negative integer, not ${options.keepAliveMs}`);
    this.keepAliveMs = keepAlive;
    if (this.transactionCapacity > this.capacity) throw new InvalidArgumentError(['transactionCapacity', 'capacity'], `transactionCapacity (${this.transactionCapacity}) must not exceed capacity (${this.capacity})`);
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
    return Math.max(0, this.log.nextOffset - Math.max(this.takePosition, this.log.logStartOffset));
  }

  /** Log bytes between the committed take position and the log end (write buffer included). */
  sizeBytes(): number {
    const p = this.log.positions();
    const buffered = p.bytes.written - p.bytes.committed;
    const from = Math.max(this.takePosition, this.log.logStartOffset);
    if (from >= p.committed.offset) return buffered;
    const segs = this.log.segments;
    let c = this.takeBytesCache;
    if (!c || c.offset !== from || c.segments !== segs) {
      const seg = this.log.segmentFor(from) ?? segs[0]!;
      const t = seg.translateOffset(from);
      c = this.takeBytesCache = { offset: from, segments: segs, segmentBase: seg.baseOffset, position: t ? t.position : seg.size };
    }
    let bytes = buffered;
    for (const s of segs) {
      if (s.baseOffset < c.segmentBase) continue;
      bytes += s.baseOffset === c.segmentBase ? Math.max(0, s.size - c.position) : s.size;
    }
    return bytes;
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
    const staged: RecordInput[] = [];
    let stagedBytes = 0;
    let state: TxState = 'open';
    const requireOpen = (what: string) => {
      if (state !== 'open') throw new LogtoolError('invalid-state', `cannot ${what} a put transaction that is ${state}`);
    };
    return {
      put: (record: RecordInput) => {
        requireOpen('put to');
        this.stats.putAttempts++;
        const bytes = recordBytes(record);
        if (staged.length + 1 > this.transactionCapacity) {
          throw new LogtoolError('too-large', `put transaction is full: it holds transactionCapacity (${this.transactionCapacity}) records; commit it and start another`);
        }
        if (stagedBytes + bytes > this.transactionCapacityBytes) {
          throw new LogtoolError('too-large', `put transaction is full: ${stagedBytes} + ${bytes} record bytes exceed transactionCapacityBytes (${this.transactionCapacityBytes})`);
        }
        staged.push(record);
        stagedBytes += bytes;
      },
      commit: async () => {
        requireOpen('commit');
        if (staged.length === 0) throw new LogtoolError('invalid-state', 'a put transaction needs at least one record to commit; roll back an empty one');
        state = 'committing';
        try {
          const result = await this.commitPut(staged);
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
        this.stats.rollbacks++;
      },
      get stagedRecords() {
        return staged.length;
      },
    };
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
    let state: TxState = 'open';
    let next = this.takePosition;
    let taken = 0;
    let ahead: LogRecord[] = [];
    const requireOpen = (what: string) => {
      if (state !== 'open') throw new LogtoolError('invalid-state', `cannot ${what} a take transaction that is ${state}`);
    };
    const takeNow = (): LogRecord | undefined => {
      if (taken >= this.transactionCapacity) {
        throw new LogtoolError('too-large', `take transaction is full: it holds transactionCapacity (${this.transactionCapacity}) records; commit it and start another`);
      }
      if (ahead.length === 0) {
        this.ensureOpen();
        if (next < this.log.logStartOffset) next = this.log.logStartOffset;
        if (next >= this.positions.logEndOffset()) return undefined;
        // read_committed: a put commit of several batches is seen whole once its marker is there.
        ahead = [...this.log.read({ fromOffset: next, maxRecords: Math.min(READ_AHEAD_RECORDS, this.transactionCapacity - taken), isolationLevel: this.readCommitted ? 'read_committed' : 'read_uncommitted' })].reverse();
        if (ahead.length === 0) return undefined;
      }
      const r = ahead.pop()!;
      next = r.offset + 1;
      taken++;
      return r;
    };
    const end = (s: TxState) => {
      state = s;
      ahead = [];
      this.takeOpen = false;
    };
    return {
      take: () => {
        requireOpen('take from');
        this.stats.takeAttempts++;
        return takeNow();
      },
      takeWait: async (maxWaitMs = this.keepAliveMs) => {
        requireOpen('take from');
        this.stats.takeAttempts++;
        const deadline = Date.now() + maxWaitMs;
        for (;;) {
          const r = takeNow();
          if (r) return r;
          const left = deadline - Date.now();
          if (left <= 0) return undefined;
          await this.waitForChange(Math.min(left, POLL_INTERVAL_MS));
          requireOpen('take from');
        }
      },
      commit: () => {
        requireOpen('commit');
        if (taken > 0) {
          try {
            this.positions.commit(this.group, next);
          } catch (e) {
            end('rolled-back'); // the position stays; the records will be taken again
            this.stats.rollbacks++;
            throw e;
          }
          this.takePosition = next;
          this.stats.takeSuccesses += taken;
        }
        end('committed');
        this.notify();
      },
      rollback: () => {
        if (state === 'rolled-back') return;
        requireOpen('roll back');
        end('rolled-back');
        this.stats.rollbacks++;
      },
      get takenRecords() {
        return taken;
      },
    };
  }
}
