/**
 * Sync mode's blocking path for a lone producer (issue 15, sync-1-producer): BookKeeper's journal
 * with a single writer, or SQLite's synchronous=FULL, fsync on the writing thread. When exactly one
 * sync append waits, no group is forming, no flush runs and the recent fdatasyncs were fast, its
 * fdatasync runs on the event loop's thread instead of hopping through the thread pool (flush/
 * group-commit.ts decides; log/log-flush.ts's flushActiveBlocking does it). This gate holds the two
 * rules that keep that honest:
 *   - other callers on the event loop never wait longer than one fsync: the append's
 *     acknowledgement waits for the next turn of the event loop (setImmediate), and no second
 *     blocking fsync starts before it is given, so timers and I/O callbacks run between two;
 *   - `syncTimeoutMs` keeps its meaning: a blocking call cannot time out, so the path is open only
 *     while the last FAST_IN_A_ROW data fsyncs (blocking or not) each took at most `maxMs` (the
 *     config's syncBlockingFsyncMaxMs, and never more than a tenth of syncTimeoutMs); one slower
 *     fsync closes it until that many fast ones were seen again through the thread pool. A
 *     blocking fsync that still took longer than syncTimeoutMs resolves its append `timed-out`.
 */

/** Consecutive fast fdatasyncs needed before (and after a slow one, again before) blocking. */
export const FAST_IN_A_ROW = 8;

export class BlockingFsyncGate {
  /** Longest fdatasync (ms) that still counts as fast; 0 never opens the gate. */
  readonly maxMs: number;
  private fastInARow = 0;
  /** A blocking fsync's acknowledgement waits for the next turn of the event loop. */
  private ackPending = false;

  constructor(maxMs: number, syncTimeoutMs: number) {
    this.maxMs = Math.max(0, Math.min(maxMs, syncTimeoutMs / 10));
  }

  /** Whether the next lone sync append may fdatasync on this thread. */
  get open(): boolean {
    return this.maxMs > 0 && !this.ackPending && this.fastInARow >= FAST_IN_A_ROW;
  }

  /** A blocking fsync's acknowledgement has not been given yet (its append is not alone any more if another arrives). */
  get acknowledging(): boolean {
    return this.ackPending;
  }

  /** An fdatasync of the log's data (per fsync, when a flush issued several) took `ms`. */
  noteFsyncMs(ms: number): void {
    this.fastInARow = ms <= this.maxMs ? this.fastInARow + 1 : 0;
  }

  /** Resolves with `value` at the next turn of the event loop; the gate stays shut until then. */
  acknowledge<T>(value: T): Promise<T> {
    this.ackPending = true;
    return new Promise<T>((resolve) =>
      setImmediate(() => {
        this.ackPending = false;
        resolve(value);
      }),
    );
  }
}
