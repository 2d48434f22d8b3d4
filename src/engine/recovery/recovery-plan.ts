/**
 * What a writable load recovers (Kafka's LogLoader.recoverLog decision, kafka-format.md §10.3):
 *
 * - the clean-shutdown decision: the marker (per log directory) is deleted durably as soon as it
 *   is seen, and trusted only if this partition's checkpointed recovery point reaches its log end
 *   offset (logtool's addition: a marker written when a sibling closed must not vouch for it);
 * - without a trusted marker, every segment from the one holding the recovery point onward is
 *   recovered, and a truncation in one drops the later ones; with it, only an active tail that
 *   does not end cleanly;
 * - index sanity: segments not recovered anyway whose indexes are missing or fail a check
 *   (index-sanity.ts, beyond Kafka's own) are recovered alone, their indexes rebuilt.
 */
import path from 'node:path';
import { CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, readCleanShutdownMarker } from '../checkpoint.js';
import type { ScanEnd } from '../segment/file-records.js';
import { TXN_INDEX_SUFFIX, segmentFileName, type LogSegment } from '../segment/segment.js';
import { SWAP_SUFFIX } from '../cleaner/swap.js';
import { checkOffsetIndex, checkTimeIndex, checkTxnIndex } from './index-sanity.js';
import type { LoadContext } from './load-context.js';
import { finalName, type IndexProblemReport } from './load-report.js';

/** Why a segment is recovered, and whether a truncation in it drops the later segments. */
export interface RecoveryTask {
  seg: LogSegment;
  /** In the range recovered after an unclean shutdown (or the active tail): Kafka's drop rule. */
  dropsLater: boolean;
}

export interface ShutdownState {
  /** The marker's content when found. */
  markerContent: Buffer | undefined;
  /** The marker was found and may vouch for this partition: sealed data is not scanned. */
  trusted: boolean;
  /** From the checkpoint (0 when absent). */
  recoveryPoint: number;
  /** From log-start-offset-checkpoint. */
  checkpointedStart: number | undefined;
  /** The log end read cheaply from the active segment's tail. */
  cheap: { nextOffset: number; tailEnd: ScanEnd };
}

/**
 * Whether an all-zero tail from `nextOffset` on stands where flushed data was: offsets from there
 * to the next segment's base lie below the recovery point. Then the zeros are damage, not
 * preallocated space (a writer preallocates only past its log end, which the recovery point never
 * passes).
 */
export function zerosLoseFlushedData(nextOffset: number, nextBaseOffset: number | undefined, recoveryPoint: number): boolean {
  return nextOffset < Math.min(recoveryPoint, nextBaseOffset ?? Infinity);
}

/** Log end offset without a full scan: from the active segment's last index entry. */
export function cheapLogEnd(segments: LogSegment[]): { nextOffset: number; tailEnd: ScanEnd } {
  const active = segments[segments.length - 1];
  if (!active) return { nextOffset: 0, tailEnd: { kind: 'end' } };
  if (active.size === 0) return { nextOffset: active.baseOffset, tailEnd: { kind: 'end' } };
  const tail = active.readNextOffset();
  return { nextOffset: tail.nextOffset ?? active.baseOffset, tailEnd: tail.end };
}

/** Reads (and, writable, deletes) the marker and the checkpoints; decides whether the marker is trusted. */
export function readShutdownState(ctx: LoadContext, segments: LogSegment[]): ShutdownState {
  const { io, report, opts } = ctx;
  const markerContent = opts.directoryMarker ? opts.directoryMarker.content : readCleanShutdownMarker(io, ctx.logDir);
  report.markerFound = markerContent !== undefined;
  if (report.markerFound && !ctx.dryRun && io.stat(path.join(ctx.logDir, CLEAN_SHUTDOWN_FILE))) {
    // Kafka deletes the marker as soon as it sees it (KAFKA-10471); the directory fsync makes
    // the deletion durable before this writer changes anything, so a crash cannot revive it.
    io.unlink(path.join(ctx.logDir, CLEAN_SHUTDOWN_FILE));
    io.syncDir(ctx.logDir);
  }
  const checkpointedRecoveryPoint = ctx.readCheckpoint(RECOVERY_POINT_CHECKPOINT);
  const checkpointedStart = ctx.readCheckpoint(LOG_START_OFFSET_CHECKPOINT);
  report.recoveryPoint = checkpointedRecoveryPoint ?? 0;

  const cheap = cheapLogEnd(segments);
  let trusted = report.markerFound && !opts.forceRecoverAll;
  if (trusted && opts.tp) {
    if (checkpointedRecoveryPoint === undefined || checkpointedRecoveryPoint < cheap.nextOffset) {
      trusted = false;
      report.markerNote =
        checkpointedRecoveryPoint === undefined
          ? 'the clean-shutdown marker was ignored: this partition has no recovery point in the checkpoint'
          : `the clean-shutdown marker was ignored: this partition's recovery point ${checkpointedRecoveryPoint} is below its log end offset ${cheap.nextOffset}, so it was not closed cleanly`;
    }
  } else if (report.markerFound && opts.forceRecoverAll) {
    report.markerNote = 'the clean-shutdown marker was ignored: full recovery was requested';
  }
  report.cleanShutdown = trusted;
  return { markerContent, trusted, recoveryPoint: checkpointedRecoveryPoint ?? 0, checkpointedStart, cheap };
}

/** The segments to recover, each with its task; index problems are reported (and warned) here. */
export function planRecovery(ctx: LoadContext, segments: LogSegment[], state: ShutdownState): Map<LogSegment, RecoveryTask> {
  const { report, opts } = ctx;
  const tasks = new Map<LogSegment, RecoveryTask>();
  if (segments.length > 0) {
    if (!state.trusted) {
      let startIdx = 0;
      if (!opts.forceRecoverAll) for (let i = 0; i < segments.length; i++) if (segments[i]!.baseOffset <= state.recoveryPoint) startIdx = i;
      for (let i = startIdx; i < segments.length; i++) tasks.set(segments[i]!, { seg: segments[i]!, dropsLater: true });
    } else if (state.cheap.tailEnd.kind !== 'end' || (state.cheap.tailEnd.zeroTail && zerosLoseFlushedData(state.cheap.nextOffset, undefined, state.recoveryPoint))) {
      const active = segments[segments.length - 1]!;
      tasks.set(active, { seg: active, dropsLater: true });
    }
  }
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const problems = indexProblems(ctx, seg, segments[i + 1], !tasks.has(seg));
    for (const p of problems) {
      report.indexProblems.push(p);
      opts.onWarning({ file: p.file, position: p.position, message: p.file.endsWith(TXN_INDEX_SUFFIX) ? p.reason : `${p.reason}; the segment ${ctx.dryRun ? 'would be' : 'is'} recovered and its indexes rebuilt` });
    }
    if (problems.length > 0 && !tasks.has(seg)) tasks.set(seg, { seg, dropsLater: false });
  }
  report.segmentsNotChecked = segments.filter((s) => !tasks.has(s)).map((s) => finalName(s.logPath));
  return tasks;
}

/** Missing or insane index files of a segment that recovery would otherwise not touch. */
function indexProblems(ctx: LoadContext, seg: LogSegment, next: LogSegment | undefined, checkContents: boolean): IndexProblemReport[] {
  const out: IndexProblemReport[] = [];
  for (const file of [seg.indexPath, seg.timeIndexPath].map(finalName)) {
    if (ctx.missingIndexes.has(file)) out.push({ file, reason: 'missing' });
  }
  if (!checkContents) return out;
  const limits = { baseOffset: seg.baseOffset, logSizeBytes: seg.size, nextBaseOffset: next?.baseOffset };
  if (out.length === 0) {
    const p = checkOffsetIndex(ctx.io, seg.indexPath, limits) ?? checkTimeIndex(ctx.io, seg.timeIndexPath, limits);
    if (p) out.push(p);
  }
  const txnName = segmentFileName(seg.baseOffset, TXN_INDEX_SUFFIX);
  const txn = path.join(ctx.dir, txnName + (ctx.swapped.has(txnName) ? SWAP_SUFFIX : ''));
  if (ctx.io.stat(txn)) {
    const p = checkTxnIndex(ctx.io, txn, seg.baseOffset);
    if (p) {
      out.push({ ...p, reason: `${p.reason}; logtool does not rebuild transaction indexes, so the file is left for Kafka, which rebuilds it when it recovers the segment` });
    }
  }
  return out;
}
