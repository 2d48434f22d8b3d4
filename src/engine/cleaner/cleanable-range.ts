/**
 * The part of the log a compaction may clean (Kafka's LogCleanerManager.cleanableOffsets,
 * kafka-format.md §15.1): from the first dirty offset (cleaner-offset-checkpoint, else — or when
 * outside the log — the log start offset) to the first uncleanable offset = min(last stable offset,
 * active segment base, base of the first dirty segment younger than min.compaction.lag.ms), and
 * never below the first dirty offset. Shared by the cleaner and by the schedule (schedule.ts).
 */
import type { FileIO } from '../io.js';
import type { LogSegment } from '../segment/segment.js';
import type { CleanableLog } from './types.js';

export function segmentMtime(io: FileIO, seg: LogSegment): number {
  return io.stat(seg.logPath)?.mtimeMs ?? 0;
}

/** Kafka's LogSegment.largestTimestamp: max timestamp from the time index/appends, else mtime. */
export function largestTimestamp(io: FileIO, seg: LogSegment): { timestamp: number; source: 'records' | 'mtime' } {
  const ts = seg.largestTimestamp;
  if (ts >= 0) return { timestamp: ts, source: 'records' };
  return { timestamp: segmentMtime(io, seg), source: 'mtime' };
}

/** The cleaner checkpoint (unless `fromStart`), else or when outside [log start, log end] the log start. */
export function firstDirtyOffset(log: CleanableLog, fromStart: boolean | undefined): number {
  const checkpoint = fromStart ? undefined : log.readCleanerCheckpoint();
  const firstDirty = checkpoint ?? log.logStartOffset;
  return firstDirty < log.logStartOffset || firstDirty > log.nextOffset ? log.logStartOffset : firstDirty;
}

/**
 * The first uncleanable offset (≥ firstDirty). `lastStableOffset` is the scanned one; without it
 * (the schedule does not scan records) only the segments bound the range.
 */
export function firstUncleanableOffset(log: CleanableLog, segments: readonly LogSegment[], firstDirty: number, nowMs: number, lastStableOffset = Infinity): number {
  // No segment at all (a reader of an empty partition directory): the empty log ends at its start.
  let u = Math.min(lastStableOffset, segments[segments.length - 1]?.baseOffset ?? log.nextOffset);
  const lag = Math.max(log.config.minCompactionLagMs, 0);
  if (lag > 0) {
    for (let i = 0; i < segments.length - 1; i++) {
      const s = segments[i]!;
      if (segments[i + 1]!.baseOffset <= firstDirty) continue; // not dirty
      if (largestTimestamp(log.io, s).timestamp > nowMs - lag) {
        u = Math.min(u, s.baseOffset);
        break;
      }
    }
  }
  return Math.max(firstDirty, u);
}

/** Why a range [firstDirty, firstUncleanable) that is empty has nothing to clean. */
export function nothingToCleanReason(log: CleanableLog, firstDirty: number, firstUncleanable: number): string {
  return firstUncleanable === (log.segments[log.segments.length - 1]?.baseOffset ?? log.nextOffset)
    ? `nothing dirty: everything before the active segment (offset ${firstUncleanable}) is already clean (cleaner-offset-checkpoint ${firstDirty})`
    : `nothing dirty below the first uncleanable offset ${firstUncleanable}`;
}
