/**
 * Open-time rules (Kafka's LogLoader, kafka-format.md §10), in Kafka's order of passes:
 *
 *  1. temporary files: `*.deleted` removed (and logtool's own stale `*.index.tmp`), `*.cleaned`
 *     removed, `*.swap` at or above the lowest `.cleaned` base offset removed (an unfinished
 *     clean/split);
 *  2. interrupted swaps: every file numbered inside the remaining `.log.swap` segments' offset
 *     range removed;
 *  3. the remaining `.swap` files renamed into place;
 *  4. segments: orphan index files removed; each `.log` opened; missing or insane indexes noted;
 *  5. recovery: without a trusted clean-shutdown marker, every segment from the one holding the
 *     recovery point onward is validated batch by batch and its indexes rebuilt; the first invalid
 *     batch truncates its segment and every later segment is dropped. Segments noted in pass 4 are
 *     recovered too (truncated alone, as Kafka does, if they lie below the recovery point).
 *
 * logtool's additions, all on the side of not losing or hiding data:
 *  - the clean-shutdown marker is per log directory (the parent), so a marker written when a
 *    sibling closed must not vouch for this partition: it is trusted only if this partition's
 *    checkpointed recovery point reaches its log end offset (a clean close always writes it so),
 *    and the active segment's tail is still checked (cheaply: from its last index entry);
 *  - deleting the marker is made durable (directory fsync) before anything is written, so a
 *    crash later cannot resurrect it;
 *  - a missing `.timeindex` is rebuilt too (Kafka starts an empty one), and indexes of segments
 *    not recovered anyway pass sanity checks beyond Kafka's own (index-sanity.ts);
 *  - what is cut off or dropped goes to lost+found/ (unless discarding), saved durably before the
 *    truncation;
 *  - a dry run computes the same report with every file opened read-only;
 *  - changes are bracketed by the partition's generation (cleaner/generation.ts) for readers in
 *    other processes.
 *
 * Everything it does (or would do) is recorded in a LoadReport; `logtool recover` renders it.
 *
 * This file runs the passes: leftovers.ts (1–3), load-segments.ts (4), recovery-plan.ts (the
 * clean-shutdown and recovery-point decision, index sanity), segment-recovery.ts (5: scan,
 * truncate, lost+found); load-context.ts holds what they share, load-report.ts what they report.
 */
import path from 'node:path';
import { InvalidDirectoryError } from '../errors.js';
import { DirectoryLock } from '../log/lock.js';
import { FileDescriptorCache } from '../segment/fd-cache.js';
import { parseTopicPartition, requireUnambiguousPartition } from '../log/topic-partition.js';
import { LogSegment } from '../segment/segment.js';
import { CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT } from '../checkpoint.js';
import { LoadContext } from './load-context.js';
import type { LoadOptions, LoadResult } from './load-report.js';
import { resolveLeftovers } from './leftovers.js';
import { openSegments } from './load-segments.js';
import { cheapLogEnd, planRecovery, readShutdownState, zerosLoseFlushedData, type ShutdownState } from './recovery-plan.js';
import { recoverSegments, trimZeroTail } from './segment-recovery.js';
import { lookAgainBesideWriter } from './live-writer.js';
import { changedPartitionState, followLogEnds } from '../partition-state/log-ends.js';

export type { DroppedFileReport, IndexProblemReport, LoadOptions, LoadProgress, LoadReport, LoadResult, TruncationReport } from './load-report.js';

/**
 * After a kill -9 the page cache may still hold data that never reached the disk: a writable load
 * syncs what lies past the recovery point once, so the flushed position reported from then on is
 * true (cheap after a clean shutdown: nothing is dirty).
 */
export function syncPastRecoveryPoint(opts: Pick<LoadOptions, 'io' | 'dir'>, loaded: LoadResult): void {
  const segs = loaded.segments;
  for (let i = 0; i < segs.length; i++) if (i === segs.length - 1 || segs[i + 1]!.baseOffset > loaded.recoveryPoint) segs[i]!.flushLog();
  opts.io.syncDir(opts.dir);
}

export function loadLog(opts: LoadOptions): LoadResult {
  // Checkpoint entries are keyed by topic and partition number: refuse a second directory naming it.
  if (opts.tp) requireUnambiguousPartition(opts.dir, opts.tp, opts.directory?.names ?? opts.io.readdir(path.dirname(opts.dir)));
  // Without a log's cache (a command loading on its own), one for this load: the segments' files
  // leave it as they close.
  return new LogLoader({ ...opts, files: opts.files ?? new FileDescriptorCache(opts.io) }).load();
}

class LogLoader {
  private readonly ctx: LoadContext;

  constructor(opts: LoadOptions) {
    this.ctx = new LoadContext(opts);
  }

  load(): LoadResult {
    const ctx = this.ctx;
    if (ctx.opts.readOnly) return this.loadReadOnly();
    try {
      const removed = resolveLeftovers(ctx);
      const segments = openSegments(ctx, removed);
      try {
        return this.recover(segments);
      } catch (e) {
        for (const s of segments) s.closeQuietly();
        throw e;
      }
    } finally {
      ctx.endChanging();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Marker, checkpoints, recovery (pass 5)

  private recover(segments: LogSegment[]): LoadResult {
    const ctx = this.ctx;
    const state = readShutdownState(ctx, segments);
    const done = ctx.opts.recovered;
    if (done && this.leftAsRecovered(segments, state)) {
      return { ...this.finish(segments, state, state.cheap.nextOffset), report: done.report, recoveryPoint: done.recoveryPoint };
    }
    const tasks = planRecovery(ctx, segments, state);
    const activeResult = recoverSegments(ctx, segments, tasks);
    const tail = state.cheap.tailEnd;
    if (!activeResult && tail.kind === 'end' && tail.zeroTail) trimZeroTail(ctx, segments[segments.length - 1]!, tail.zeroTail.position, state.cheap.nextOffset);

    // The log end offset: from the active segment's recovery if it ran, else the cheap tail read.
    let nextOffset: number | undefined;
    const active = segments[segments.length - 1];
    if (active) nextOffset = activeResult ? (activeResult.nextOffset ?? active.baseOffset) : state.cheap.nextOffset;
    return this.finish(segments, state, nextOffset);
  }

  /** The partition is as the load on a worker left it (opts.recovered): nothing was left over, the same segments and log end. */
  private leftAsRecovered(segments: LogSegment[], state: ShutdownState): boolean {
    const { report, missingIndexes } = this.ctx;
    const before = this.ctx.opts.recovered!.report;
    return (
      report.tempFilesRemoved.length === 0 &&
      report.swapsCompleted.length === 0 &&
      missingIndexes.size === 0 &&
      segments.length === before.segments &&
      state.cheap.tailEnd.kind === 'end' &&
      (segments.length === 0 ? before.logEndOffset === before.logStartOffset : state.cheap.nextOffset === before.logEndOffset)
    );
  }

  /** Log start and end, an empty segment for an empty log (as Kafka), the report's totals. */
  private finish(segments: LogSegment[], state: ShutdownState, recoveredEnd: number | undefined): LoadResult {
    const { io, opts, report, dryRun } = this.ctx;
    let nextOffset = recoveredEnd;
    let logStartOffset = Math.max(state.checkpointedStart ?? 0, segments[0]?.baseOffset ?? 0);
    if (segments.length === 0) {
      // Kafka: an empty log gets an empty segment at the log start offset.
      if (!dryRun) {
        segments.push(
          new LogSegment({
            io,
            dir: opts.dir,
            baseOffset: logStartOffset,
            indexIntervalBytes: opts.config.indexIntervalBytes,
            maxIndexBytes: opts.config.segmentIndexBytes,
            writable: true,
            create: true,
            files: opts.files,
          }),
        );
        io.syncDir(opts.dir);
      }
      nextOffset = logStartOffset;
    }
    nextOffset ??= logStartOffset;
    // Kafka deletes every segment when the log end is below the checkpointed start offset; a
    // checkpoint that disagrees with the data is more likely wrong than the data, so clamp.
    if (logStartOffset > nextOffset) logStartOffset = nextOffset;
    if (!dryRun) segments[segments.length - 1]!.resizeIndexes();

    report.logStartOffset = logStartOffset;
    report.logEndOffset = nextOffset;
    report.segments = segments.length;
    // Kafka's loader truncates leader epochs and producer snapshots to the log's ends: by its
    // rule where this open cut the end, else (onLoad) whatever a crash left beyond the ends.
    const cut = report.truncated.length > 0 || report.segmentsDropped.length > 0;
    const followed = followLogEnds(io, opts.dir, { logEndOffset: nextOffset, logStartOffset: state.checkpointedStart === undefined ? undefined : Math.min(state.checkpointedStart, nextOffset) }, { dryRun, onLoad: !cut });
    if (cut || changedPartitionState(followed)) report.partitionState = followed;
    report.repaired =
      report.truncated.length > 0 ||
      report.segmentsDropped.length > 0 ||
      report.tempFilesRemoved.length > 0 ||
      report.swapsCompleted.length > 0 ||
      report.indexProblems.length > 0 ||
      changedPartitionState(report.partitionState);
    const recoveryPoint = state.trusted ? nextOffset : Math.min(state.recoveryPoint, nextOffset);
    return { segments, logStartOffset, nextOffset, recoveryPoint, report, markerContent: state.markerContent };
  }

  // -------------------------------------------------------------------------------------------
  // Readers

  /**
   * A partition directory without segments is an empty log. A directory without segments that is
   * not one (a broker's log directory, a mistyped path) must not read as an empty, healthy log.
   */
  private requirePartitionDirectory(): void {
    const { io, dir, opts } = this.ctx;
    const logDirEntry = io.readdir(dir).find((n) => n === 'meta.properties' || (parseTopicPartition(n) !== undefined && io.stat(path.join(dir, n))?.isDirectory));
    if (opts.tp && logDirEntry === undefined) return;
    throw new InvalidDirectoryError(
      logDirEntry !== undefined
        ? `this is a broker's log directory (it holds ${logDirEntry}), not a partition directory; give one of its partition directories, such as ${dir}/<topic>-<partition>`
        : 'not a partition directory: it holds no segments and is not named <topic>-<partition> as Kafka names them',
      dir,
    );
  }

  /**
   * Read-only open: no pass changes anything; only the active tail is read for the log end. The
   * segments are exactly those passes 1–4 would keep (an interrupted swap resolved as the loader
   * resolves it: a `.swap` whose old segment is gone is the live segment, old files in its range
   * are not), opened under the names they have now.
   */
  private loadReadOnly(): LoadResult {
    const ctx = this.ctx;
    const { io, opts, report } = ctx;
    const segments = openSegments(ctx, resolveLeftovers(ctx));
    if (segments.length === 0) this.requirePartitionDirectory();
    report.markerFound = io.stat(path.join(ctx.logDir, CLEAN_SHUTDOWN_FILE)) !== undefined;
    report.cleanShutdown = report.markerFound;
    const checkpointedRecoveryPoint = ctx.readCheckpoint(RECOVERY_POINT_CHECKPOINT) ?? 0;
    const checkpointedStart = ctx.readCheckpoint(LOG_START_OFFSET_CHECKPOINT);
    report.recoveryPoint = checkpointedRecoveryPoint;
    // Over preallocated zeros, a batch a live writer is copying in reads as a CRC mismatch (not
    // as a file still growing): look again before calling it damage.
    const cheap = lookAgainBesideWriter(ctx.dir, 3, () => cheapLogEnd(segments), (c) => c.tailEnd.kind === 'corrupt');
    const last = segments[segments.length - 1];
    const zeroTail = cheap.tailEnd.kind === 'end' ? cheap.tailEnd.zeroTail : undefined;
    if (last && zeroTail && zerosLoseFlushedData(cheap.nextOffset, undefined, checkpointedRecoveryPoint)) {
      opts.onWarning({ file: last.logPath, position: zeroTail.position, message: `${zeroTail.bytes} zero bytes where data below the recovery point ${checkpointedRecoveryPoint} was flushed` });
      last.size = zeroTail.position;
    } else if (last && zeroTail) {
      // Preallocated zeros (a live writer's, or left by a crash): the log ends where they begin.
      last.size = zeroTail.position;
    } else if (last && cheap.tailEnd.kind === 'partial' && DirectoryLock.isHeld(ctx.dir)) {
      // A writer holds the partition, so an incomplete last batch is one it is writing now (a
      // file grows page by page during a write), not a torn tail: the view ends before it.
      last.size = cheap.tailEnd.position;
    } else if (last && cheap.tailEnd.kind !== 'end') opts.onWarning({ file: last.logPath, position: cheap.tailEnd.position, message: cheap.tailEnd.reason });
    let logStartOffset = Math.max(checkpointedStart ?? 0, segments[0]?.baseOffset ?? 0);
    const nextOffset = last ? cheap.nextOffset : logStartOffset;
    if (logStartOffset > nextOffset) logStartOffset = nextOffset;
    report.logStartOffset = logStartOffset;
    report.logEndOffset = nextOffset;
    report.segments = segments.length;
    return { segments, logStartOffset, nextOffset, recoveryPoint: Math.min(checkpointedRecoveryPoint, nextOffset), report };
  }
}
