/**
 * The flush pipeline of one log: synchronous group commit (BookKeeper's journal), the asynchronous
 * flusher (Kafka's flush.ms / flush.messages, RocketMQ's dirty-bytes threshold), the committer of
 * the write buffer (RocketMQ's transient store pool) and the thorough flush (indexes and the
 * recovery-point checkpoint, Kafka's log.flush.offset.checkpoint.interval.ms). It only decides
 * *when*; the log commits and fsyncs through the FlushTarget. docs/durability.md states what each
 * acknowledgement promises.
 *
 * Positions are byte totals since the log was opened, monotonic across segments:
 *   written ≥ committed ≥ flushed.
 * A sync append is `written` into the log's write buffer and waits for the bytes up to its end to
 * be flushed. One flush runs at a time; appends arriving while it runs form the next group. A
 * group closes — its data is committed with one write and made durable with one fdatasync — when
 *   - the event loop has no more work queued (`flushWhenQueueEmpty`, default): the end of the tick —
 *     or at once for a lone producer (the last group was its one append, and nothing else waited) —
 *     then, while recent fdatasyncs were fast, with a blocking fdatasync on this thread
 *     (flush/blocking-fsync.ts says when, and why other callers never wait longer than one fsync);
 *   - its oldest append has waited `maxWaitMs`;
 *   - it holds `maxGroupBytes` or `maxGroupRecords` (then at once, without waiting for the tick);
 *   - halfway through a burst of re-appends expected to outlast an fdatasync (flush/group-overlap.ts).
 * While a flush is in flight the next group still forms and is committed (written to the file with
 * one write) at the end of each tick, as BookKeeper's journal writes while its ForceWriteThread
 * syncs: when the fdatasync returns, the next one starts without a write in front of it. A group
 * over `maxGroupBytes` is committed at once, so the write buffer stays bounded. The fdatasync in
 * flight covers only what was committed before it started (LogFlusher takes the total then).
 */
import type { LogConfig } from '../config.js';
import { LogtoolError } from '../errors.js';
import { BlockingFsyncGate } from './blocking-fsync.js';
import { GroupOverlap } from './group-overlap.js';
import { emptyFlushStats, DEFAULT_THOROUGH_FLUSH_INTERVAL_MS, type FlushOutcome, type FlushStats, type FlushTarget, type FlushTuning } from './flush-target.js';
import { SyncWaiters, type AckMaker } from './sync-waiters.js';

export type { AckStatus } from './sync-waiters.js';

export { emptyFlushStats, DEFAULT_THOROUGH_FLUSH_INTERVAL_MS } from './flush-target.js';
export type { FlushOutcome, FlushStats, FlushTarget, FlushTuning } from './flush-target.js';

export class FlushPipeline {
  private readonly target: FlushTarget;
  private readonly config: LogConfig;
  private readonly waiters: SyncWaiters;
  private readonly blocking: BlockingFsyncGate;
  /** When a burst of re-appends outlasts an fdatasync, groups overlap (flush/group-overlap.ts). */
  private readonly overlap = new GroupOverlap();
  /** Bytes / records of sync appends accepted since the last flush started. */
  private groupBytes = 0;
  private groupRecords = 0;
  /** The last group was one append and none arrived while it was flushed: the next is flushed at once. */
  private loneWriter = false;
  private groupTimer: NodeJS.Timeout | undefined;
  private intervalTimer: NodeJS.Timeout | undefined;
  private commitTimer: NodeJS.Timeout | undefined;
  private thoroughTimer: NodeJS.Timeout | undefined;
  /** Set while a flush (of any kind) runs; one at a time. */
  private busy: Promise<void> | undefined;
  private scheduled = false;
  /** Flush requested by a non-sync path (ackBeforeSync, async thresholds, roll, interval). */
  private wantFlush = false;
  private flushedBytes = 0;
  /** Committed total when the latest flush started: what it makes durable if it succeeds. */
  private flushingBytes = 0;
  private dirtyBytes = 0;
  private dirtyRecords = 0;
  private closed = false;
  /** Set by a failed commit or flush: the log is failed, no more background work is attempted. */
  private failed = false;
  readonly stats: FlushStats = emptyFlushStats();

  constructor(target: FlushTarget, config: LogConfig, tuning: FlushTuning = {}) {
    this.target = target;
    this.config = config;
    this.flushedBytes = target.committedBytes();
    this.waiters = new SyncWaiters(config.syncTimeoutMs, this.stats);
    this.blocking = new BlockingFsyncGate(config.syncBlockingFsyncMaxMs, config.syncTimeoutMs);
    this.commitTimer = setInterval(() => this.commitNow(), Math.max(1, config.commitIntervalMs));
    this.commitTimer.unref();
    if (tuning.ownerSchedules) return;
    this.intervalTimer = setInterval(() => this.onInterval(), Math.max(1, config.flushMs));
    this.intervalTimer.unref();
    const thorough = tuning.thoroughFlushIntervalMs ?? DEFAULT_THOROUGH_FLUSH_INTERVAL_MS;
    this.thoroughTimer = setInterval(() => {
      if (!this.failed) void this.flushNow({ commit: false, thorough: true }).catch(() => undefined);
    }, Math.max(1, thorough));
    this.thoroughTimer.unref();
  }

  /** Committed-byte total known to be durable. */
  get flushed(): number {
    return this.flushedBytes;
  }

  /** Sync appends waiting for their flush. */
  get pending(): number {
    return this.waiters.pending;
  }

  /**
   * Sync mode: whether an append accepted now is flushed at once (a lone producer, no flush
   * running), so the append path may write it before waiting instead of buffering a copy.
   */
  flushesAtOnce(): boolean {
    const c = this.config;
    return c.flushWhenQueueEmpty && this.loneWriter && this.pending === 0 && !this.busy && !this.blocking.acknowledging && !this.closed && !this.failed;
  }

  /**
   * Sync mode: the append's bytes are in the write buffer (or already committed, when
   * flushesAtOnce said so), ending at written total `target`.
   * Resolves with make('flushed', baseOffset, lastOffset, records) once they are durable, with
   * make('timed-out', …) after syncTimeoutMs; rejects if the flush fails (the log is then failed).
   */
  waitForFlush<T>(target: number, bytes: number, records: number, make: AckMaker<T>, baseOffset: number, lastOffset: number): Promise<T> {
    if (this.closed) return Promise.reject(new LogtoolError('closed', 'log is closed'));
    // Another append before a blocking flush's acknowledgement: the producer is not alone.
    if (this.blocking.acknowledging) this.loneWriter = false;
    else if (this.blocking.open && this.flushesAtOnce() && target <= this.target.committedBytes()) {
      const acked = this.flushBlocking(make, baseOffset, lastOffset, records);
      if (acked) return acked;
    }
    this.groupBytes += bytes;
    this.groupRecords += records;
    return this.waiters.add(target, make, baseOffset, lastOffset, records, this.closeGroup);
  }

  /**
   * A lone producer's committed append while recent fdatasyncs were fast: one blocking fdatasync
   * on this thread, acknowledged at the next turn of the event loop (flush/blocking-fsync.ts) —
   * `timed-out` if it took longer than syncTimeoutMs. Undefined when the flush needs more than
   * the active log's fdatasync (a roll, a new file): the append then waits as any other.
   */
  private flushBlocking<T>(make: AckMaker<T>, baseOffset: number, lastOffset: number, count: number): Promise<T> | undefined {
    const startedMs = performance.now();
    let out: FlushOutcome | undefined;
    try {
      out = this.target.flushCommittedBlocking?.();
    } catch (err) {
      this.fail(err);
      return Promise.reject(err);
    }
    if (!out) return undefined;
    const tookMs = performance.now() - startedMs;
    this.blocking.noteFsyncMs(tookMs, true);
    this.dirtyBytes = 0;
    this.dirtyRecords = 0;
    this.noteFlushed(out);
    this.countGroup(1);
    if (tookMs <= this.config.syncTimeoutMs) return this.blocking.acknowledge(make('flushed', baseOffset, lastOffset, count));
    this.stats.timedOut++;
    return this.blocking.acknowledge(make('timed-out', baseOffset, lastOffset, count));
  }

  /** maybeCloseGroup once an append joined the group (a failed commit rejects that append). */
  private readonly closeGroup = (): void => this.maybeCloseGroup();

  /**
   * Async mode (and ackBeforeSync, and the committer): counts dirty data; at flush.bytes or
   * flush.messages the flush starts at once (its fdatasync is dispatched before this returns, so
   * it proceeds even while the caller keeps the event loop busy), or right after the one in flight.
   */
  noteCommitted(bytes: number, records: number): void {
    this.dirtyBytes += bytes;
    this.dirtyRecords += records;
    if (this.dirtyBytes >= this.config.flushBytes || this.dirtyRecords >= this.config.flushMessages) {
      this.wantFlush = true;
      if (!this.busy) void this.runFlush();
    }
  }

  /** Buffered mode: an append was copied into the write buffer; commits at commitBytes. */
  noteBuffered(): void {
    if (this.target.bufferedBytes() >= this.config.commitBytes) this.commitNow();
  }

  /** Asks for a flush soon (end of this tick) without waiting for it. */
  requestFlush(): void {
    this.wantFlush = true;
    this.schedule();
  }

  private maybeCloseGroup(): void {
    if (this.pending === 0) return;
    const c = this.config;
    // A lone producer's append has nobody to share its fsync with: waiting for the end of the tick
    // would only add a turn of the event loop to its latency.
    const lone = c.flushWhenQueueEmpty && this.loneWriter && this.pending === 1;
    const early = !this.busy && c.flushWhenQueueEmpty && this.overlap.closeEarly(this.pending);
    if (lone || early || this.groupBytes >= c.maxGroupBytes || this.groupRecords >= c.maxGroupRecords) {
      if (this.busy) {
        // The disk is busy with the previous group: write this one now (bounded buffer), flush it next.
        if (this.groupBytes >= c.maxGroupBytes) this.commitForGroup();
      } else {
        void this.runFlush();
        return;
      }
    }
    if (c.flushWhenQueueEmpty) {
      this.schedule();
      return;
    }
    if (!this.groupTimer) {
      const delay = Math.max(0, this.waiters.oldestAcceptedMs() + c.maxWaitMs - Date.now());
      this.groupTimer = setTimeout(() => {
        this.groupTimer = undefined;
        void this.runFlush();
      }, delay);
    }
  }

  /** Commits the write buffer on behalf of sync appends (their data must reach the file). */
  private commitForGroup(): void {
    const c = this.target.commitBuffered();
    if (c.bytes > 0) this.stats.commits++;
  }

  /**
   * Runs a flush at the end of this tick (when no more synchronous work is queued) — or, while one
   * is in flight, writes the group formed so far, so the next flush only has to fdatasync it.
   */
  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    setImmediate(this.endOfTick);
  }

  private readonly endOfTick = (): void => {
    this.scheduled = false;
    this.overlap.endOfTick();
    if (!this.busy) {
      void this.runFlush();
      return;
    }
    if (this.pending === 0 || this.closed || this.failed) return;
    try {
      this.commitForGroup();
    } catch (err) {
      // The log is failed; the appends of this group learn why, the flush in flight may still succeed.
      this.failed = true;
      this.target.onBackgroundError(err);
      this.waiters.rejectAbove(this.flushingBytes, err);
    }
  };

  /** Starts a group / background flush unless one is running (then it follows that one). */
  private runFlush(): Promise<void> {
    if (this.busy || this.closed || this.failed) return Promise.resolve();
    if (this.pending === 0 && !this.wantFlush) return Promise.resolve();
    return this.exclusive(() => this.flushOnce(this.pending > 0, false)).catch(() => undefined);
  }

  /**
   * Runs fn with no other flush in flight. Called without a flush running, fn starts synchronously
   * (so a full group's fdatasync overlaps the rest of the caller's tick). The flush is over —
   * another may start — before the sync appends it covered are acknowledged, so a producer that
   * appends again on its acknowledgement finds the disk free.
   */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (this.busy) return this.busy.then(() => this.exclusive(fn));
    let release!: () => void;
    this.busy = new Promise<void>((r) => (release = r));
    const done = (): void => {
      this.busy = undefined;
      release();
      this.settle();
      if (this.closed) return;
      // A group formed during the flush starts its fdatasync now if the acknowledgements' burst would keep the disk idle for long.
      if (this.pending > 0 && this.config.flushWhenQueueEmpty && this.overlap.overlapping()) void this.runFlush();
      else if (this.pending > 0) this.maybeCloseGroup();
      else if (this.wantFlush) this.schedule();
    };
    return fn().then(
      (v) => (done(), v),
      (err: unknown) => {
        done();
        throw err;
      },
    );
  }

  /**
   * One flush: commit the write buffer if sync appends (or the caller) need it, make everything
   * committed durable, optionally the thorough part. The sync appends it covered are settled when
   * it ends (exclusive), or before the thorough part, which they need not wait for. Chained with
   * `then`, not async frames: each frame would add turns of the microtask queue between the
   * fdatasync's completion and the acknowledgements.
   */
  private flushOnce(commit: boolean, thorough: boolean): Promise<void> {
    if (this.groupTimer) {
      clearTimeout(this.groupTimer);
      this.groupTimer = undefined;
    }
    this.wantFlush = false;
    this.dirtyBytes = 0;
    this.dirtyRecords = 0;
    this.groupBytes = 0;
    this.groupRecords = 0;
    let flushing: Promise<FlushOutcome>;
    let startedMs: number;
    try {
      if (commit || this.pending > 0) this.commitForGroup();
      startedMs = performance.now();
      this.flushingBytes = this.target.committedBytes();
      flushing = this.target.flushCommitted();
    } catch (err) {
      this.fail(err);
      return Promise.reject(err);
    }
    return flushing.then(
      (out) => {
        if (out.fsyncs > 0) {
          const ms = (performance.now() - startedMs) / out.fsyncs;
          this.blocking.noteFsyncMs(ms, false);
          this.overlap.noteFsyncMs(ms);
        }
        this.noteFlushed(out);
        return thorough ? this.thoroughPart() : undefined;
      },
      (err: unknown) => {
        this.fail(err);
        throw err;
      },
    );
  }

  /** Counts a flushCommitted that ended and advances the durable position. */
  private noteFlushed(out: FlushOutcome): void {
    this.stats.flushes++;
    this.stats.fsyncs += out.fsyncs;
    if (out.bytes > this.flushedBytes) this.flushedBytes = out.bytes;
  }

  /** After a thorough flush's flushCommitted: acknowledge, then the indexes and the checkpoint. */
  private async thoroughPart(): Promise<void> {
    this.settle();
    try {
      this.stats.fsyncs += await this.target.thoroughFlush();
      this.stats.thoroughFlushes++;
    } catch (err) {
      this.fail(err);
      throw err;
    }
  }

  /**
   * A failed write or fsync leaves the file in an unknown state (and after a failed fsync the
   * kernel may have dropped the dirty pages): the log fails, every waiter learns why.
   */
  private fail(err: unknown): void {
    this.failed = true;
    this.target.onBackgroundError(err);
    this.waiters.rejectAll(err);
  }

  /** Acknowledges the sync appends whose bytes are now durable, and learns whether a producer is alone. */
  private settle(): void {
    const settled = this.waiters.settle(this.flushedBytes);
    if (settled === 0) return;
    this.countGroup(settled);
    this.loneWriter = settled === 1 && this.pending === 0;
    if (settled === 1 || !this.config.flushWhenQueueEmpty) return;
    this.overlap.acknowledged(settled, this.pending);
    this.schedule();
  }

  /** A group of `appends` sync appends was acknowledged. */
  private countGroup(appends: number): void {
    this.stats.groups++;
    this.stats.groupedAppends += appends;
    if (appends > this.stats.largestGroup) this.stats.largestGroup = appends;
  }

  /** Background flusher (flush.ms): committed data is never left unflushed for longer than this. */
  private onInterval(): void {
    if (!this.failed && this.target.committedBytes() > this.flushedBytes) this.requestFlush();
  }

  /** Commits the write buffer now (buffered mode's committer). */
  commitNow(): void {
    if (this.closed || this.failed || this.target.bufferedBytes() === 0) return;
    try {
      const c = this.target.commitBuffered();
      if (c.bytes === 0) return;
      this.stats.commits++;
      this.noteCommitted(c.bytes, c.records);
    } catch (err) {
      this.fail(err);
    }
  }

  /** Waits for any in-flight flush. */
  async drain(): Promise<void> {
    while (this.busy) await this.busy;
  }

  /**
   * Flushes now and waits: commits the write buffer (unless commit is false), makes everything
   * committed durable, and with `thorough` also the active indexes and the recovery-point
   * checkpoint. Throws if the flush fails.
   */
  flushNow(opts: { commit?: boolean; thorough?: boolean } = {}): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.exclusive(() => this.flushOnce(opts.commit !== false, opts.thorough === true));
  }

  /** Stops the timers. Sync appends still waiting resolve as timed-out (their fate is unknown). */
  close(): void {
    this.closed = true;
    if (this.groupTimer) clearTimeout(this.groupTimer);
    for (const t of [this.intervalTimer, this.commitTimer, this.thoroughTimer]) if (t) clearInterval(t);
    this.groupTimer = this.intervalTimer = this.commitTimer = this.thoroughTimer = undefined;
    this.waiters.closeAll(this.flushedBytes);
  }
}
