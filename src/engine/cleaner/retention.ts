/**
 * Retention by Kafka's rules (UnifiedLog.deleteOldSegments / deletableSegments, kafka-format.md
 * §14), as a pure plan over segment descriptions so it can be dry-run and tested exactly:
 *
 *   1. log start offset: a segment goes when the next segment's base offset ≤ the log start offset;
 *   2. retention.bytes (policy delete): with diff = total − retention.bytes, oldest first while
 *      diff − size ≥ 0;
 *   3. retention.ms (policy delete): while now − largestTimestamp > retention.ms, where the largest
 *      timestamp is the segment's max record timestamp (time index / appends), its `.log` mtime
 *      only when it has none. Future timestamps are never old enough.
 *
 * Each rule deletes a prefix only: it stops at the first segment that does not qualify, at a
 * segment reaching past the high watermark, and at the last segment if it is empty. When every
 * segment goes, the log first rolls an empty segment at the log end offset, so it is never left
 * without one.
 */
import type { FileIO } from '../io.js';
import type { LogSegment } from '../segment/segment.js';
import { keepAside, DELETED_SUFFIX, type RemovedFile, type StepHook } from './swap.js';

export type RetentionReason = 'log-start-offset' | 'retention.bytes' | 'retention.ms';

export interface SegmentView {
  baseOffset: number;
  sizeBytes: number;
  /** Max record timestamp, or −1 if the segment has none. */
  maxTimestamp: number;
  /** The `.log` file's modification time (the fallback). */
  mtimeMs: number;
}

export interface RetentionRules {
  logStartOffset: number;
  logEndOffset: number;
  /** Offline there is no replication: the high watermark is the log end offset. */
  highWatermark: number;
  nowMs: number;
  /** −1 = off. */
  retentionMs: number;
  /** −1 = off. */
  retentionBytes: number;
  /** cleanup.policy contains delete (size and time rules apply only then). */
  deletePolicy: boolean;
}

export interface PlannedDeletion {
  baseOffset: number;
  /** Next segment's base offset, or the log end offset (the segment's upper bound). */
  upperBound: number;
  sizeBytes: number;
  reason: RetentionReason;
  /** The timestamp the time rule compared (max record timestamp, else mtime). */
  largestTimestamp: number;
  timestampSource: 'records' | 'mtime';
}

export interface RetentionPlan {
  deletions: PlannedDeletion[];
  /** Every segment goes: an empty segment is rolled at the log end offset first. */
  rollFirst: boolean;
  /** Log start offset afterwards. */
  logStartOffset: number;
}

export function largestTimestampOf(s: SegmentView): { timestamp: number; source: 'records' | 'mtime' } {
  return s.maxTimestamp >= 0 ? { timestamp: s.maxTimestamp, source: 'records' } : { timestamp: s.mtimeMs, source: 'mtime' };
}

/** Kafka's three retention steps in order, each on what the previous ones left. */
export function planRetention(segments: readonly SegmentView[], rules: RetentionRules): RetentionPlan {
  let remaining = [...segments];
  const deletions: PlannedDeletion[] = [];
  let rolled = false;
  let logStartOffset = rules.logStartOffset;

  const step = (reason: RetentionReason, predicate: (s: SegmentView, next: SegmentView | undefined) => boolean) => {
    let n = 0;
    while (n < remaining.length) {
      const s = remaining[n]!;
      const next = remaining[n + 1];
      const upperBound = next ? next.baseOffset : rules.logEndOffset;
      const lastAndEmpty = next === undefined && s.sizeBytes === 0;
      if (lastAndEmpty || rules.highWatermark < upperBound || !predicate(s, next)) break;
      const lt = largestTimestampOf(s);
      deletions.push({ baseOffset: s.baseOffset, upperBound, sizeBytes: s.sizeBytes, reason, largestTimestamp: lt.timestamp, timestampSource: lt.source });
      n++;
    }
    if (n === 0) return;
    if (n === remaining.length) {
      // Kafka's deleteSegments: roll first so the log keeps a segment.
      rolled = true;
      remaining = [{ baseOffset: rules.logEndOffset, sizeBytes: 0, maxTimestamp: -1, mtimeMs: rules.nowMs }];
    } else remaining = remaining.slice(n);
    logStartOffset = Math.max(logStartOffset, remaining[0]!.baseOffset);
  };

  step('log-start-offset', (_s, next) => next !== undefined && next.baseOffset <= logStartOffset);
  if (rules.deletePolicy && rules.retentionBytes >= 0) {
    const total = remaining.reduce((n, s) => n + s.sizeBytes, 0);
    if (total >= rules.retentionBytes) {
      let diff = total - rules.retentionBytes;
      step('retention.bytes', (s) => {
        if (diff - s.sizeBytes < 0) return false;
        diff -= s.sizeBytes;
        return true;
      });
    }
  }
  if (rules.deletePolicy && rules.retentionMs >= 0) {
    step('retention.ms', (s) => rules.nowMs - largestTimestampOf(s).timestamp > rules.retentionMs);
  }
  return { deletions, rollFirst: rolled, logStartOffset };
}

export function segmentView(io: FileIO, seg: LogSegment): SegmentView {
  return { baseOffset: seg.baseOffset, sizeBytes: seg.size, maxTimestamp: seg.largestTimestamp, mtimeMs: io.stat(seg.logPath)?.mtimeMs ?? 0 };
}

/**
 * Kafka's asynchronous segment deletion, first half: each file renamed to `<name>.deleted` (after
 * a copy was kept aside, when asked). Returns the `.deleted` paths and what left the log.
 */
export function retireSegmentFiles(io: FileIO, files: string[], keepDir: string | undefined, hook?: StepHook): { deleted: string[]; removed: RemovedFile[] } {
  const removed: RemovedFile[] = [];
  const kept = keepDir ? keepAside(io, files, keepDir) : [];
  files.forEach((file, i) => {
    removed.push({ file, keptAt: kept[i] });
    if (keepDir) hook?.({ phase: 'kept-aside', file: kept[i] });
  });
  const deleted: string[] = [];
  for (const f of files) {
    const to = f + DELETED_SUFFIX;
    io.rename(f, to);
    deleted.push(to);
    hook?.({ phase: 'old-to-deleted', file: to });
  }
  return { deleted, removed };
}
