/**
 * What a flush of one partition does on disk (Kafka's LocalLog.flush and UnifiedLog's
 * recovery-point bookkeeping); *when* it runs is flush/group-commit.ts's decision. Tracks the
 * segments sealed since the last flush, whether the directory needs a sync, and the flushed position.
 * docs/durability.md gives the order.
 */
import type { FileIO } from '../io.js';
import type { FlushOutcome } from '../flush/group-commit.js';
import type { LogSegment } from '../segment/segment.js';
import type { LogSegments } from './log-segments.js';
import type { LogPosition } from './log-types.js';

export interface FlushHost {
  readonly io: FileIO;
  readonly dir: string;
  readonly segments: LogSegments;
  /** Committed byte total since open and the committed log end offset. */
  committed(): { bytes: number; offset: number };
  /** The flush made everything below offset durable. */
  advanceRecoveryPoint(offset: number): void;
  /** Persists the recovery point when it changed since last persisted; returns the fsyncs issued. */
  checkpointRecoveryPoint(): Promise<number>;
  /** fdatasync of the producer snapshots rolls wrote unsynced; returns the fsyncs issued. */
  syncRolledSnapshots?(): Promise<number>;
}

export class LogFlusher {
  private readonly host: FlushHost;
  /** Committed bytes made durable by the last successful flush. */
  flushedTotal = 0;
  flushedPos: LogPosition;
  /** Segments rolled since the last flush whose indexes still need fsync. */
  private sealedUnflushed: LogSegment[] = [];
  private dirDirty = false;
  /** The flushCommitted in progress (its fsyncs may be queued on a sealed segment's descriptors). */
  private inFlight: Promise<FlushOutcome> | undefined;
  /** What the active segment's indexes held when last fsynced (thorough flush). */
  private indexesFlushed: { segment: LogSegment | undefined; entries: number } = { segment: undefined, entries: -1 };

  constructor(host: FlushHost, nextOffset: number) {
    this.host = host;
    const active = host.segments.last;
    this.flushedPos = { offset: nextOffset, segment: active?.baseOffset ?? nextOffset, position: active?.size ?? 0 };
  }

  /** A roll sealed this segment: the next flush syncs its log and indexes. */
  noteSealed(seg: LogSegment): void {
    this.sealedUnflushed.push(seg);
  }

  /** A segment file was created: the next flush syncs the directory. */
  noteDirChanged(): void {
    this.dirDirty = true;
  }

  /** Everything is durable up to offset at the end of the active segment (close). */
  markFlushedAt(offset: number): void {
    const active = this.host.segments.active;
    this.flushedPos = { offset, segment: active.baseOffset, position: active.size };
  }

  /**
   * Makes everything committed durable, in this order (docs/durability.md):
   *   1. each segment sealed since the last flush: fdatasync `.log`, then `.index`, `.timeindex`;
   *      then the producer snapshots those rolls wrote;
   *   2. fdatasync of the active `.log` (its indexes are rebuilt by recovery; the thorough flush
   *      syncs them too);
   *   3. fsync of the partition directory if segment files were created since the last flush.
   * Then the flushed position and the in-memory recovery point advance to what was committed
   * when the flush started. Returns that committed byte total and the fsyncs issued.
   */
  flushCommitted(): Promise<FlushOutcome> {
    const run = this.syncCommitted();
    this.inFlight = run;
    // Cleared before the caller's continuation runs (reactions run in the order they were added),
    // without another promise between the fdatasync and the sync appends it acknowledges.
    const ended = (): void => {
      if (this.inFlight === run) this.inFlight = undefined;
    };
    run.then(ended, ended);
    return run;
  }

  /**
   * flushCommitted's common case done with a blocking fdatasync of the active `.log` on this thread
   * (a lone sync producer on a fast disk; flush/blocking-fsync.ts): only when no segment was sealed
   * and no file created since the last flush, no flush is in flight, and there is something to
   * flush. Returns undefined, having done nothing, otherwise.
   */
  flushActiveBlocking(): FlushOutcome | undefined {
    if (this.inFlight || this.sealedUnflushed.length > 0 || this.dirDirty) return undefined;
    const { bytes: total, offset } = this.host.committed();
    const active = this.host.segments.active;
    if (total <= this.flushedTotal || active.size === 0) return undefined;
    active.flushLog();
    return this.flushedUpTo(total, { offset, segment: active.baseOffset, position: active.size }, 1);
  }

  /**
   * Segments that left the log (retention, delete-records, a swap): no later flush syncs them, and
   * they are closed once a flush in progress — which may have an fdatasync of theirs queued — has
   * ended, never under it. Closed at once when no flush runs (a failure throws, as a removal's
   * always did); a deferred close reports a failure to onError.
   */
  closeRetired(segments: readonly LogSegment[], onError: (e: unknown) => void): void {
    this.sealedUnflushed = this.sealedUnflushed.filter((s) => !segments.includes(s));
    if (!this.inFlight) {
      for (const s of segments) s.closeQuietly();
      return;
    }
    const close = () => {
      for (const s of segments) {
        try {
          s.closeQuietly();
        } catch (e) {
          onError(e);
        }
      }
    };
    void this.inFlight.then(close, close);
  }

  private syncCommitted(): Promise<FlushOutcome> {
    const { bytes: total, offset } = this.host.committed();
    const active = this.host.segments.active;
    const pos: LogPosition = { offset, segment: active.baseOffset, position: active.size };
    if (this.sealedUnflushed.length > 0 || this.dirDirty) return this.syncSealedAndActive(total, pos);
    // The common case (every group commit between rolls): one fdatasync of the active log, chained
    // directly to what it makes durable.
    if (total === this.flushedTotal) return Promise.resolve({ bytes: total, fsyncs: 0 });
    if (total < this.flushedTotal || active.size === 0) return Promise.resolve(this.flushedUpTo(total, pos, 0));
    return active.flushLogAsync().then(() => this.flushedUpTo(total, pos, 1));
  }

  /** syncCommitted after a roll or a segment file's creation: sealed segments, the active log, the directory. */
  private async syncSealedAndActive(total: number, pos: LogPosition): Promise<FlushOutcome> {
    const active = this.host.segments.active;
    const sealed = this.sealedUnflushed;
    const dirDirty = this.dirDirty;
    this.sealedUnflushed = [];
    this.dirDirty = false;
    let fsyncs = 0;
    try {
      // Every fsync here is asynchronous: appends keep being accepted while the disk works.
      for (const s of sealed) {
        await s.flushLogAsync();
        await s.offsetIndex.flushAsync();
        await s.timeIndex.flushAsync();
        s.dirty = false;
        fsyncs += 3;
      }
      if (sealed.length > 0) fsyncs += (await this.host.syncRolledSnapshots?.()) ?? 0;
      if (total > this.flushedTotal && active.size > 0) {
        await active.flushLogAsync();
        fsyncs++;
      }
      if (dirDirty) {
        await this.host.io.syncDirAsync(this.host.dir);
        fsyncs++;
      }
    } catch (e) {
      this.sealedUnflushed = sealed.concat(this.sealedUnflushed);
      this.dirDirty ||= dirDirty;
      throw e;
    }
    return this.flushedUpTo(total, pos, fsyncs);
  }

  /** The flush made the committed bytes up to `total` (ending at `pos`) durable. */
  private flushedUpTo(total: number, pos: LogPosition, fsyncs: number): FlushOutcome {
    // The active segment's index entries appends left pending are written before the recovery point moves.
    const active = this.host.segments.active;
    active.offsetIndex.writePending();
    active.timeIndex.writePending();
    this.flushedTotal = total;
    this.flushedPos = pos;
    // Every segment below the one holding `pos.offset` was sealed before this flush began, so it is
    // now durable with its indexes; recovery re-validates the segment holding the recovery point.
    this.host.advanceRecoveryPoint(pos.offset);
    return { bytes: total, fsyncs };
  }

  /**
   * The thorough part of a flush (after flushCommitted): fdatasync of the active segment's
   * `.index` and `.timeindex`, then the recovery-point checkpoint (tmp file, fsync, rename,
   * directory fsync). Skips what has not changed. Returns the fsyncs issued.
   */
  async thoroughFlush(): Promise<number> {
    let fsyncs = 0;
    const active = this.host.segments.active;
    const entries = active.offsetIndex.entries + active.timeIndex.entries;
    if (this.indexesFlushed.segment !== active || this.indexesFlushed.entries !== entries) {
      await active.offsetIndex.flushAsync();
      await active.timeIndex.flushAsync();
      this.indexesFlushed = { segment: active, entries };
      fsyncs += 2;
    }
    return fsyncs + (await this.host.checkpointRecoveryPoint());
  }
}
