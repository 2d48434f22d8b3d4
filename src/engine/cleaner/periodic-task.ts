/**
 * When a log's background retention and compaction run (Kafka's LogManager scheduler for
 * log.retention.check.interval.ms, the cleaner thread's log.cleaner.backoff.ms), shaped like
 * flush/group-commit.ts: this policy only decides *when* — the interval, the next due time,
 * whether a run is in progress, and that stop() waits for it — and acts on the log through one
 * narrow callback (`{ run() }`), so it can be tested with a fake clock and a fake log.
 *
 * Rules: one run at a time; a tick that finds the previous run still going, or `busy()` true (a
 * compaction of the log in progress), is skipped; ticks keep a fixed cadence (a late tick does not
 * shift later ones, skipped ones are not made up); timers never keep the process alive.
 */
import { assert } from '../errors.js';

/** Time source and timers (tests substitute a fake one). */
export interface ScheduleClock {
  nowMs(): number;
  /** Calls fn once after delayMs; returns a cancel function. Must not keep the process alive. */
  setTimer(fn: () => void, delayMs: number): () => void;
}

export const realClock: ScheduleClock = {
  nowMs: () => Date.now(),
  setTimer(fn, delayMs) {
    const t = setTimeout(fn, delayMs);
    t.unref();
    return () => clearTimeout(t);
  },
};

/** The narrow interface the schedule acts through. */
export interface PeriodicWork<R> {
  /** One round (applyRetention, compactIfNeeded …); may be asynchronous. */
  run(): R | Promise<R>;
  /** True skips this tick (for example while a foreground compaction runs). */
  busy?(): boolean;
  /** Called with each round's result. */
  onResult?(result: R): void;
  /** Called when a round throws or rejects; the schedule keeps going. */
  onError(err: unknown): void;
}

export class PeriodicTask<R> {
  private readonly work: PeriodicWork<R>;
  private readonly clock: ScheduleClock;
  readonly intervalMs: number;
  private cancel: (() => void) | undefined;
  private dueMs: number | undefined;
  private current: Promise<void> | undefined;
  /** Rounds started so far. */
  runs = 0;

  constructor(work: PeriodicWork<R>, intervalMs: number, clock: ScheduleClock = realClock) {
    assert(Number.isFinite(intervalMs) && intervalMs > 0, `a periodic task needs a positive interval, not ${intervalMs} ms`);
    this.work = work;
    this.intervalMs = intervalMs;
    this.clock = clock;
  }

  /** When the next round is due (undefined when stopped). */
  get nextDueMs(): number | undefined {
    return this.dueMs;
  }

  get started(): boolean {
    return this.cancel !== undefined;
  }

  /** A round is in progress. */
  get running(): boolean {
    return this.current !== undefined;
  }

  /** Starts ticking every intervalMs from now (restarts when already started). */
  start(): void {
    this.halt();
    this.arm(this.clock.nowMs() + this.intervalMs);
  }

  /** Stops the ticks; the returned promise settles when a round in progress has ended (never rejects). */
  stop(): Promise<void> {
    this.halt();
    return this.current ?? Promise.resolve();
  }

  private halt(): void {
    this.cancel?.();
    this.cancel = undefined;
    this.dueMs = undefined;
  }

  private arm(dueMs: number): void {
    this.dueMs = dueMs;
    this.cancel = this.clock.setTimer(() => this.tick(), Math.max(0, dueMs - this.clock.nowMs()));
  }

  private tick(): void {
    const now = this.clock.nowMs();
    let next = (this.dueMs ?? now) + this.intervalMs;
    while (next <= now) next += this.intervalMs;
    this.arm(next);
    if (this.current || this.work.busy?.()) return;
    this.runs++;
    let pending: Promise<R>;
    try {
      const result = this.work.run();
      if (!isPromise(result)) {
        this.work.onResult?.(result);
        return;
      }
      pending = result;
    } catch (e) {
      this.work.onError(e);
      return;
    }
    this.current = pending
      .then((r) => this.work.onResult?.(r))
      .catch((e: unknown) => this.work.onError(e))
      .finally(() => {
        this.current = undefined;
      });
  }
}

function isPromise<R>(v: R | Promise<R>): v is Promise<R> {
  return typeof (v as { then?: unknown } | undefined)?.then === 'function';
}
