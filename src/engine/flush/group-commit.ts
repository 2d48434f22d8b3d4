/**
 * The flush pipeline of one log: synchronous group commit (BookKeeper's journal), the asynchronous
 * flusher (Kafka's flush.ms / flush.messages, RocketMQ's dirty-bytes threshold) and the committer
 * of the write buffer (RocketMQ's transient store pool). It only decides *when*; the log does the
 * committing and fsyncing through the FlushTarget.
 *
 * One fsync is in flight at a time. Appends arriving while it runs form the next group, which
 * closes when its oldest append has waited maxWaitMs, or it reaches maxGroupBytes /
 * maxGroupRecords, or (flushWhenQueueEmpty) as soon as the event loop has no more appends to hand
 * it — the end of the current tick.
 */
import type { LogConfig } from '../config.js';

export type AckStatus = 'flushed' | 'committed' | 'written' | 'timed-out';

export interface FlushTarget {
  /** Writes the write buffer (if any) to the file. Returns the committed byte total. */
  commitBuffered(): void;
  /** Total bytes committed so far (monotonic, across segments). */
  committedBytes(): number;
  /** Makes everything committed durable; returns the committed byte total it covered. */
  flushCommitted(): Promise<number>;
  /** Called after each successful flush (recovery point, checkpoints). */
  afterFlush(flushedBytes: number): void;
  /** Reports a background failure (the log records it and fails later appends). */
  onBackgroundError(err: unknown): void;
}

interface Waiter {
  /** Committed-byte total this append needs flushed. */
  target: number;
  bytes: number;
  records: number;
  enqueuedMs: number;
  deadlineMs: number;
  resolve(status: AckStatus): void;
  settled: boolean;
}

export interface FlushStats {
  fsyncs: number;
  groups: number;
  timedOut: number;
  commits: number;
}

export class FlushPipeline {
  private readonly target: FlushTarget;
  private readonly config: LogConfig;
  private waiters: Waiter[] = [];
  private groupBytes = 0;
  private groupRecords = 0;
  private flushing: Promise<void> | undefined;
  private scheduled = false;
  private groupTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private intervalTimer: NodeJS.Timeout | undefined;
  private commitTimer: NodeJS.Timeout | undefined;
  /** Flush requested by a non-sync path (ackBeforeSync, async thresholds). */
  private wantFlush = false;
  private flushedBytes = 0;
  private dirtyBytes = 0;
  private dirtyRecords = 0;
  private bufferedBytes = 0;
  private closed = false;
  readonly stats: FlushStats = { fsyncs: 0, groups: 0, timedOut: 0, commits: 0 };

  constructor(target: FlushTarget, config: LogConfig) {
    this.target = target;
    this.config = config;
    this.flushedBytes = target.committedBytes();
    this.intervalTimer = setInterval(() => this.onInterval(), Math.max(1, config.flushMs));
    this.intervalTimer.unref();
    this.commitTimer = setInterval(() => this.commitNow(), Math.max(1, config.commitIntervalMs));
    this.commitTimer.unref();
  }

  get flushed(): number {
    return this.flushedBytes;
  }

  /** Sync mode: resolves once the bytes up to `target` are flushed, or times out. */
  waitForFlush(target: number, bytes: number, records: number): Promise<AckStatus> {
    if (target <= this.flushedBytes) return Promise.resolve('flushed');
    return new Promise((resolve) => {
      const now = Date.now();
      const w: Waiter = { target, bytes, records, enqueuedMs: now, deadlineMs: now + this.config.syncTimeoutMs, resolve, settled: false };
      this.waiters.push(w);
      this.groupBytes += bytes;
      this.groupRecords += records;
      this.armTimeout();
      this.maybeCloseGroup();
    });
  }

  /** Async mode (and ackBeforeSync): counts dirty data and triggers a flush at the thresholds. */
  noteCommitted(bytes: number, records: number): void {
    this.dirtyBytes += bytes;
    this.dirtyRecords += records;
    if (this.dirtyBytes >= this.config.flushBytes || this.dirtyRecords >= this.config.flushMessages) this.requestFlush();
  }

  /** Buffered mode: counts buffered data and commits at the threshold. */
  noteBuffered(bytes: number): void {
    this.bufferedBytes += bytes;
    if (this.bufferedBytes >= this.config.commitBytes) this.commitNow();
  }

  /** Asks for a flush soon (next tick) without waiting for it. */
  requestFlush(): void {
    this.wantFlush = true;
    this.schedule();
  }

  private maybeCloseGroup(): void {
    if (this.groupBytes >= this.config.maxGroupBytes || this.groupRecords >= this.config.maxGroupRecords || this.config.flushWhenQueueEmpty) {
      this.schedule();
      return;
    }
    if (!this.groupTimer && this.waiters.length > 0) {
      const oldest = this.waiters[0]!.enqueuedMs;
      const delay = Math.max(0, oldest + this.config.maxWaitMs - Date.now());
      this.groupTimer = setTimeout(() => {
        this.groupTimer = undefined;
        this.schedule();
      }, delay);
    }
  }

  /** Runs a flush at the end of this tick (when the queue of synchronous work is empty). */
  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.runFlush();
    });
  }

  private async runFlush(): Promise<void> {
    if (this.flushing) {
      // The next group forms while this fsync runs; it is started when this one ends.
      return;
    }
    if (this.waiters.length === 0 && !this.wantFlush) return;
    if (this.groupTimer) {
      clearTimeout(this.groupTimer);
      this.groupTimer = undefined;
    }
    this.wantFlush = false;
    this.groupBytes = 0;
    this.groupRecords = 0;
    this.dirtyBytes = 0;
    this.dirtyRecords = 0;
    const run = (async () => {
      try {
        const reached = await this.target.flushCommitted();
        this.stats.fsyncs++;
        this.stats.groups++;
        if (reached > this.flushedBytes) this.flushedBytes = reached;
        this.target.afterFlush(this.flushedBytes);
        this.settleFlushed();
      } catch (err) {
        this.target.onBackgroundError(err);
        // Waiters stay pending until their timeout reports them: the data may or may not be durable.
      }
    })();
    this.flushing = run;
    await run;
    this.flushing = undefined;
    if (this.waiters.some((w) => !w.settled) || this.wantFlush) {
      const pending = this.waiters.filter((w) => !w.settled);
      this.groupBytes = pending.reduce((n, w) => n + w.bytes, 0);
      this.groupRecords = pending.reduce((n, w) => n + w.records, 0);
      if (this.wantFlush) this.schedule();
      else this.maybeCloseGroup();
    }
  }

  private settleFlushed(): void {
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.settled) continue;
      if (w.target <= this.flushedBytes) {
        w.settled = true;
        w.resolve('flushed');
      } else still.push(w);
    }
    this.waiters = still;
    this.armTimeout();
  }

  private armTimeout(): void {
    if (this.timeoutTimer || this.waiters.length === 0) return;
    const head = this.waiters.find((w) => !w.settled);
    if (!head) return;
    this.timeoutTimer = setTimeout(() => {
      this.timeoutTimer = undefined;
      const now = Date.now();
      const still: Waiter[] = [];
      for (const w of this.waiters) {
        if (w.settled) continue;
        if (w.deadlineMs <= now) {
          w.settled = true;
          this.stats.timedOut++;
          w.resolve('timed-out');
        } else still.push(w);
      }
      // Timed-out appends still ride the next flush; only their callers stopped waiting.
      this.waiters = still;
      this.armTimeout();
    }, Math.max(0, head.deadlineMs - Date.now()));
  }

  private onInterval(): void {
    if (this.target.committedBytes() > this.flushedBytes) this.requestFlush();
  }

  /** Commits the write buffer now (buffered mode). */
  commitNow(): void {
    if (this.bufferedBytes === 0 || this.closed) return;
    try {
      this.target.commitBuffered();
      this.stats.commits++;
      const committed = this.bufferedBytes;
      this.bufferedBytes = 0;
      this.noteCommitted(committed, 0);
    } catch (err) {
      this.target.onBackgroundError(err);
    }
  }

  /** Waits for any in-flight flush; used by close and explicit flush. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Flushes everything committed now and waits for it. */
  async flushNow(): Promise<void> {
    await this.drain();
    this.commitNow();
    const reached = await this.target.flushCommitted();
    this.stats.fsyncs++;
    if (reached > this.flushedBytes) this.flushedBytes = reached;
    this.target.afterFlush(this.flushedBytes);
    this.settleFlushed();
  }

  close(): void {
    this.closed = true;
    for (const t of [this.groupTimer, this.timeoutTimer]) if (t) clearTimeout(t);
    for (const t of [this.intervalTimer, this.commitTimer]) if (t) clearInterval(t);
    this.groupTimer = this.timeoutTimer = this.intervalTimer = this.commitTimer = undefined;
    for (const w of this.waiters) if (!w.settled) {
      w.settled = true;
      w.resolve(w.target <= this.flushedBytes ? 'flushed' : 'timed-out');
    }
    this.waiters = [];
  }
}
