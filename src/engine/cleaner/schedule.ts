/**
 * When Kafka's cleaner picks a log (LogCleanerManager.grabFilthiestCompactedLog, LogToClean,
 * maxCompactionDelay; kafka-format.md §15.1): the dirty ratio at segment granularity, and whether
 * the log must be compacted now because max.compaction.lag.ms has passed.
 *
 * - first dirty offset: the cleaner checkpoint, else (or when < log start / > log end) the log start;
 * - first uncleanable offset: min(active segment base, base of the first dirty non-active segment
 *   whose largest timestamp is within min.compaction.lag.ms). The last stable offset is not
 *   considered here (it needs a scan of the log; the cleaner itself still stops at it);
 * - clean bytes: segments whose base offset is below the first dirty offset; cleanable bytes:
 *   segments from the one holding the first dirty offset up to the first uncleanable offset (as in
 *   Kafka, a segment straddling the first dirty offset counts on both sides);
 * - needed: dirty ratio > min.cleanable.dirty.ratio, or (cleanable bytes > 0 and) the earliest
 *   first-batch timestamp (> 0) of the dirty non-active segments is older than now −
 *   max.compaction.lag.ms.
 *
 * Cheap: no record is read except each dirty segment's first batch header (cached by the segment).
 * cleanup.policy is not checked here (the caller decides whether the log is a compacted one).
 */
import type { LogSegment } from '../segment/segment.js';
import { firstDirtyOffset, firstUncleanableOffset } from './cleanable-range.js';
import type { CleanableLog } from './types.js';

export interface CompactionSchedule {
  nowMs: number;
  firstDirtyOffset: number;
  firstUncleanableOffset: number;
  /** Bytes of the segments before the first dirty offset. */
  cleanBytes: number;
  /** Bytes of the segments in [first dirty, first uncleanable). */
  cleanableBytes: number;
  /** cleanableBytes / (cleanBytes + cleanableBytes); 0 for an empty log. */
  dirtyRatio: number;
  minCleanableDirtyRatio: number;
  maxCompactionLagMs: number;
  /** Earliest first-batch timestamp of the dirty non-active segments (undefined: none has one). */
  earliestDirtyTimestamp: number | undefined;
  /** How far past max.compaction.lag.ms that earliest dirty batch is (0 = not overdue). */
  maxCompactionDelayMs: number;
  /** max.compaction.lag.ms forces a compaction now. */
  compactNow: boolean;
  /** The cleaner would pick this log now. */
  needed: boolean;
  /** Why (or why not), in words. */
  reason: string;
}

export interface ScheduleOptions {
  /** Default Date.now(). */
  nowMs?: number;
  /** Treat the whole log as dirty (ignore cleaner-offset-checkpoint), like `compact --from-start`. */
  fromStart?: boolean;
}

/** Kafka's "never" for max.compaction.lag.ms (Long.MAX_VALUE) in JavaScript numbers. */
export const NEVER_MS = Number.MAX_SAFE_INTEGER;

export function compactionSchedule(log: CleanableLog, opts: ScheduleOptions = {}): CompactionSchedule {
  const now = opts.nowMs ?? Date.now();
  const c = log.config;
  const segments = log.segments;
  const firstDirty = firstDirtyOffset(log, opts.fromStart);

  // Dirty non-active segments: from the one holding firstDirty up to (not including) the active one.
  const nonActive = segments.slice(0, Math.max(segments.length - 1, 0));
  const dirtyNonActive: LogSegment[] = nonActive.filter((s, i) => (segments[i + 1]?.baseOffset ?? Infinity) > firstDirty);
  const firstUncleanable = firstUncleanableOffset(log, segments, firstDirty, now);

  let cleanBytes = 0;
  let cleanableBytes = 0;
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    const end = segments[i + 1]?.baseOffset ?? Infinity;
    if (s.baseOffset < firstDirty) cleanBytes += s.size;
    if (firstDirty < firstUncleanable && end > firstDirty && s.baseOffset < firstUncleanable) cleanableBytes += s.size;
  }
  const total = cleanBytes + cleanableBytes;
  const dirtyRatio = total > 0 ? cleanableBytes / total : 0;

  const maxLag = Math.max(c.maxCompactionLagMs, 0);
  let earliest: number | undefined;
  let delay = 0;
  if (maxLag < NEVER_MS) {
    for (const s of dirtyNonActive) {
      const ts = s.firstBatchMaxTimestamp();
      if (ts > 0 && (earliest === undefined || ts < earliest)) earliest = ts;
    }
    const cleanUntil = now - maxLag;
    if (earliest !== undefined && earliest < cleanUntil) delay = cleanUntil - earliest;
  }
  const compactNow = delay > 0;
  const byRatio = dirtyRatio > c.minCleanableDirtyRatio;
  const byLag = compactNow && cleanableBytes > 0;
  const ratioText = `dirty ratio ${dirtyRatio.toFixed(3)} (${cleanableBytes} cleanable of ${total} bytes)`;
  let reason: string;
  if (byRatio) reason = `${ratioText} > min.cleanable.dirty.ratio ${c.minCleanableDirtyRatio}`;
  else if (byLag) reason = `a dirty segment's first batch (timestamp ${earliest}) is ${delay} ms past max.compaction.lag.ms ${maxLag}; ${ratioText}`;
  else if (cleanableBytes === 0) reason = `nothing cleanable: ${ratioText}, offsets ${firstDirty} (first dirty) to ${firstUncleanable} (first uncleanable)`;
  else reason = `${ratioText} ≤ min.cleanable.dirty.ratio ${c.minCleanableDirtyRatio}${maxLag < NEVER_MS ? ` and no dirty batch is older than max.compaction.lag.ms ${maxLag}` : ''}`;
  return {
    nowMs: now,
    firstDirtyOffset: firstDirty,
    firstUncleanableOffset: firstUncleanable,
    cleanBytes,
    cleanableBytes,
    dirtyRatio,
    minCleanableDirtyRatio: c.minCleanableDirtyRatio,
    maxCompactionLagMs: maxLag,
    earliestDirtyTimestamp: earliest,
    maxCompactionDelayMs: delay,
    compactNow,
    needed: byRatio || byLag,
    reason,
  };
}
