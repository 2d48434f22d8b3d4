/**
 * A fake ScheduleClock (cleaner/periodic-task.ts) for tests of *when* background work runs: time
 * moves only by advance(), which fires the due timers in order.
 */
import type { ScheduleClock } from '../../src/engine/cleaner/periodic-task.js';

export class FakeClock implements ScheduleClock {
  now = 1_000;
  private timers: { at: number; fn: () => void; live: boolean }[] = [];
  nowMs(): number {
    return this.now;
  }
  setTimer(fn: () => void, delayMs: number): () => void {
    const t = { at: this.now + delayMs, fn, live: true };
    this.timers.push(t);
    return () => {
      t.live = false;
    };
  }
  get armed(): number {
    return this.timers.filter((t) => t.live).length;
  }
  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      due.live = false;
      this.now = Math.max(this.now, due.at);
      due.fn();
    }
    this.now = end;
  }
}
