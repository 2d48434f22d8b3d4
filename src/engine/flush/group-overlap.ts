/**
 * Overlap of a group commit's fdatasync with the CPU of the next group (BookKeeper's journal keeps
 * its disk busy the same way: its ForceWriteThread syncs one batch while the journal thread writes
 * the next). flush/group-commit.ts asks this when to close a group early; it still decides
 * everything else, and an append is still acknowledged only after an fdatasync covering it.
 *
 * The producers a flush acknowledges append again in the same tick. That burst of CPU
 * (acknowledgement, encoding, CRC: a few µs per append) leaves the disk idle, and with hundreds of
 * producers it can outlast an fdatasync: the cycle is then fdatasync + burst. When a burst is
 * expected to take clearly longer than an fdatasync (OVERLAP_FACTOR), the group closes halfway
 * through the burst, so its fdatasync runs under the second half, which forms the next group; and
 * when a flush ends with such a group waiting, its fdatasync starts at once instead of at the end
 * of the tick. Two groups then alternate, each synced while the other's producers run. Bursts
 * shorter than that (a few producers, a slow disk) keep one group per tick as before.
 */

/** Data fdatasyncs whose shortest duration the overlap goes by. */
const FSYNC_WINDOW = 8;
/** Shorter fdatasyncs (tmpfs, a write-back cache) are not overlapped: a group's own cost outweighs them. */
const MIN_OVERLAP_FSYNC_MS = 0.1;
/** A burst overlaps only when expected to take this many fdatasyncs (a margin for the extra group's cost). */
const OVERLAP_FACTOR = 1.5;

export class GroupOverlap {
  /** The last FSYNC_WINDOW data fdatasyncs' durations (ms; Infinity until measured), and which is next. */
  private readonly fsyncMs: number[] = new Array<number>(FSYNC_WINDOW).fill(Infinity);
  private fsyncMsNext = 0;
  /** When the current burst of acknowledgements began (performance.now(); -1: none this tick), how many. */
  private burstStartMs = -1;
  private burstAppends = 0;
  /** The burst's expected CPU time (ms), from the last burst's time per append. */
  private burstExpectedMs = 0;
  /** CPU time per append of the last burst, from its acknowledgements to the end of its tick. */
  private perAppendMs = 0;

  /** A data fdatasync took `ms` (from its dispatch to its completion seen on the event loop). */
  noteFsyncMs(ms: number): void {
    this.fsyncMs[this.fsyncMsNext] = ms;
    this.fsyncMsNext = (this.fsyncMsNext + 1) % FSYNC_WINDOW;
  }

  /**
   * A flush acknowledged `settled` appends (more than one), with `waiting` appends already queued
   * behind it; the caller makes sure the end of this tick is scheduled (endOfTick).
   */
  acknowledged(settled: number, waiting: number): void {
    if (this.burstStartMs < 0) this.burstStartMs = performance.now();
    this.burstAppends += settled;
    this.burstExpectedMs = this.perAppendMs * (this.burstAppends + waiting);
  }

  /** Whether the current burst is expected to outlast an fdatasync clearly enough to overlap them. */
  overlapping(): boolean {
    if (this.burstStartMs < 0) return false;
    const fsyncMs = Math.min(...this.fsyncMs);
    return fsyncMs >= MIN_OVERLAP_FSYNC_MS && this.burstExpectedMs >= OVERLAP_FACTOR * fsyncMs;
  }

  /**
   * With no flush in flight and `waiting` appends in the forming group: whether to close it now,
   * halfway through an overlapping burst. Checks the clock on every 8th append only.
   */
  closeEarly(waiting: number): boolean {
    if (this.burstStartMs < 0 || (waiting & 7) !== 0 || !this.overlapping()) return false;
    return performance.now() - this.burstStartMs >= (this.perAppendMs * this.burstAppends) / 2;
  }

  /** The end of the tick: the burst (if any) is over; its CPU time per append is measured. */
  endOfTick(): void {
    if (this.burstStartMs < 0) return;
    this.perAppendMs = (performance.now() - this.burstStartMs) / this.burstAppends;
    this.burstStartMs = -1;
    this.burstAppends = 0;
  }
}
