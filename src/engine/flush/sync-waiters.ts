/**
 * The sync appends waiting for their flush (BookKeeper's journal acknowledgement queue; Kafka's
 * producer `acks` wait has the same shape): in acceptance order, each with the written-byte total
 * it needs flushed and its deadline (`syncTimeoutMs`). A flush settles the prefix it made durable;
 * a deadline resolves its append as timed-out. flush/group-commit.ts decides when flushes run.
 *
 * One timer serves every deadline: deadlines are non-decreasing, so a timer armed for an earlier
 * waiter's deadline fires no later than the next one's, and is then re-armed. It is not cleared
 * when the queue empties (a lone producer would arm and clear one per append), only unref'd, so it
 * never keeps the process alive without a waiter.
 *
 * Nothing is allocated per append beyond its waiter and its promise (with the two functions that
 * settle it): the append's numbers ride in the waiter and one shared `make` turns them into its
 * result, and the promise's executor is one function per queue, not a closure per append.
 */
export type AckStatus = 'flushed' | 'committed' | 'written' | 'timed-out';

/** Makes an append's result from its status and its numbers: one function for every append. */
export type AckMaker<T> = (status: AckStatus, baseOffset: number, lastOffset: number, count: number) => T;

interface Waiter {
  /** Written-byte total this append needs flushed. */
  target: number;
  /** Deadline, in ms since the queue's `epochMs` (a small integer: no number box per waiter). */
  deadlineMs: number;
  baseOffset: number;
  lastOffset: number;
  count: number;
  /** What the append resolves with, made from its status and the numbers above. */
  make: AckMaker<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** Resolves a waiter with its status. */
function resolveWith(waiter: Waiter, status: AckStatus): void {
  waiter.resolve(waiter.make(status, waiter.baseOffset, waiter.lastOffset, waiter.count));
}

const noop = (): void => undefined;

export class SyncWaiters {
  /** In acceptance order; targets and deadlines are both non-decreasing. */
  private waiters: Waiter[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires, since epochMs (Infinity when none is armed). */
  private timerAt = Infinity;
  private readonly timeoutMs: number;
  /** When the queue was made: deadlines count from here. */
  private readonly epochMs = Date.now();
  /** The pipeline's counters (FlushStats): timed-out appends are counted here. */
  private readonly stats: { timedOut: number };
  /** The settling functions of the promise add() just made, left here by `capture`. */
  private resolveNext: (value: unknown) => void = noop;
  private rejectNext: (err: unknown) => void = noop;
  /** Every waiter's promise executor (one function, not a closure per append). */
  private readonly capture = (resolve: (value: unknown) => void, reject: (err: unknown) => void): void => {
    this.resolveNext = resolve;
    this.rejectNext = reject;
  };

  constructor(timeoutMs: number, stats: { timedOut: number }) {
    this.timeoutMs = timeoutMs;
    this.stats = stats;
  }

  /** Milliseconds since epochMs (deadlines are kept in these). */
  private nowMs(): number {
    return Date.now() - this.epochMs;
  }

  /** Appends waiting. */
  get pending(): number {
    return this.waiters.length - this.head;
  }

  /** When the oldest waiting append was accepted (pending > 0). */
  oldestAcceptedMs(): number {
    return this.waiters[this.head]!.deadlineMs - this.timeoutMs + this.epochMs;
  }

  /**
   * Queues an append of `count` records at [baseOffset, lastOffset] needing written total `target`
   * flushed; resolves with make(status, baseOffset, lastOffset, count). Then runs `queued`: if it
   * throws, this append's promise rejects with that (the others wait on).
   */
  add<T>(target: number, make: AckMaker<T>, baseOffset: number, lastOffset: number, count: number, queued: () => void): Promise<T> {
    const promise = new Promise<T>(this.capture as (resolve: (value: T) => void, reject: (err: unknown) => void) => void);
    const resolve = this.resolveNext;
    const reject = this.rejectNext;
    this.resolveNext = this.rejectNext = noop;
    const deadlineMs = this.nowMs() + this.timeoutMs;
    this.waiters.push({ target, deadlineMs, baseOffset, lastOffset, count, make, resolve, reject });
    this.arm(deadlineMs);
    try {
      queued();
    } catch (err) {
      reject(err);
    }
    return promise;
  }

  /** Resolves as flushed the waiters whose bytes are within `flushedBytes`; returns how many. */
  settle(flushedBytes: number): number {
    const w = this.waiters;
    const from = this.head;
    while (this.head < w.length && w[this.head]!.target <= flushedBytes) resolveWith(w[this.head++]!, 'flushed');
    const n = this.head - from;
    if (n > 0) this.compact();
    return n;
  }

  /** Rejects every waiter with err (a failed write or fsync). */
  rejectAll(err: unknown): void {
    const w = this.waiters;
    const from = this.head;
    this.waiters = [];
    this.head = 0;
    for (let i = from; i < w.length; i++) w[i]!.reject(err);
    this.compact();
  }

  /**
   * Rejects with err the waiters needing more than `bytes` (a failed write of their group), and
   * leaves those within it waiting for the flush in flight, which may still make them durable.
   */
  rejectAbove(bytes: number, err: unknown): void {
    const w = this.waiters;
    let from = w.length;
    while (from > this.head && w[from - 1]!.target > bytes) from--;
    const rejected = w.splice(from);
    for (const waiter of rejected) waiter.reject(err);
    this.compact();
  }

  /** Close: the waiters within flushedBytes resolve flushed, the others timed-out (their fate is unknown). */
  closeAll(flushedBytes: number): void {
    const w = this.waiters;
    for (let i = this.head; i < w.length; i++) {
      const waiter = w[i]!;
      if (waiter.target <= flushedBytes) resolveWith(waiter, 'flushed');
      else {
        this.stats.timedOut++;
        resolveWith(waiter, 'timed-out');
      }
    }
    this.waiters = [];
    this.head = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  /** Makes sure the timer fires by deadlineMs, and keeps the process alive while anyone waits. */
  private arm(deadlineMs: number): void {
    if (this.timer && this.timerAt <= deadlineMs) {
      if (this.pending === 1) this.timer.ref();
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = deadlineMs;
    this.timer = setTimeout(() => this.onTimer(), Math.max(0, deadlineMs - this.nowMs()));
  }

  private onTimer(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.nowMs();
    const w = this.waiters;
    // The bytes stay in the pipeline and ride the next flush; only their callers stop waiting.
    while (this.head < w.length && w[this.head]!.deadlineMs <= now) {
      this.stats.timedOut++;
      resolveWith(w[this.head++]!, 'timed-out');
    }
    this.compact();
    if (this.pending > 0) this.arm(w[this.head]!.deadlineMs);
  }

  private compact(): void {
    if (this.head === this.waiters.length) {
      this.waiters.length = 0;
      this.head = 0;
      this.timer?.unref();
    } else if (this.head > 1024 && this.head * 2 > this.waiters.length) {
      this.waiters = this.waiters.slice(this.head);
      this.head = 0;
    }
  }
}
