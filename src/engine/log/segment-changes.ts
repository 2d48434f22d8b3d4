/**
 * Changes to a partition's segment list other than append and roll (Kafka's
 * UnifiedLog.deleteOldSegments / deleteSegments / replaceSegments and LocalLog.removeAndDeleteSegments):
 * retention and delete-records applied by plan, swaps of cleaned segments, and the physical
 * removal of retired files after file.delete.delay.ms. Every change runs inside the generation
 * seqlock (cleaner/generation.ts) so openStable never sees half of one. The rules live in
 * src/engine/cleaner/ (kafka-format.md §14–15).
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { InvalidArgumentError, LogtoolError } from '../errors.js';
import { cleanupPolicy, type LogConfig } from '../config.js';
import { LogSegment, segmentFileName } from '../segment/segment.js';
import { planRetention, retireSegmentFiles, segmentView, type RetentionPlan, type RetentionRules } from '../cleaner/retention.js';
import { DELETED_SUFFIX, swapSegments, type RemovedFile } from '../cleaner/swap.js';
import { beginChange, endChange } from '../cleaner/generation.js';
import type { ReplaceSegmentsOptions, RetentionOptions, RetentionReport } from '../cleaner/types.js';
import { followLogEnds } from '../partition-state/log-ends.js';
import type { LogSegments } from './log-segments.js';
import type { LogFlusher } from './log-flush.js';
import type { LogWarning } from './log-types.js';

export interface ChangeHost {
  readonly io: FileIO;
  readonly dir: string;
  readonly config: LogConfig;
  readonly segments: LogSegments;
  logStartOffset(): number;
  setLogStartOffset(offset: number): void;
  roll(newBaseOffset: number): void;
  /** Persists the log start offset (log-start-offset-checkpoint). */
  writeLogStartOffset(): void;
  /** Closes segments that left the log (once no flush is syncing them). */
  closeRetired(segments: readonly LogSegment[]): void;
  warn(w: LogWarning): void;
}

/** The Log's public face the changes work through (its log start offset, roll and checkpoint). */
export interface ChangedLog {
  readonly io: FileIO;
  readonly dir: string;
  readonly config: LogConfig;
  logStartOffset: number;
  roll(newBaseOffset: number): void;
  writeLogStartOffset(): void;
  warn(w: LogWarning): void;
}

/** A log's SegmentChanges: retired segments are closed by the flush glue once no flush syncs them. */
export function segmentChangesOf(log: ChangedLog, segments: LogSegments, flusher: Pick<LogFlusher, 'closeRetired'>): SegmentChanges {
  return new SegmentChanges({
    io: log.io,
    dir: log.dir,
    config: log.config,
    segments,
    logStartOffset: () => log.logStartOffset,
    setLogStartOffset: (offset) => (log.logStartOffset = offset),
    roll: (offset) => log.roll(offset),
    writeLogStartOffset: () => log.writeLogStartOffset(),
    closeRetired: (retired) => flusher.closeRetired(retired, (e) => log.warn({ file: log.dir, message: `closing a removed segment failed: ${(e as Error).message}` })),
    warn: (w) => log.warn(w),
  });
}

export class SegmentChanges {
  private readonly host: ChangeHost;
  /** Physical removals scheduled after file.delete.delay.ms, run early by runPendingDeletions(). */
  private readonly pendingDeletions = new Map<NodeJS.Timeout, () => void>();
  private keepDirStamp: string | undefined;

  constructor(host: ChangeHost) {
    this.host = host;
  }

  /** Log.applyRetention once the log end offset is known. */
  applyRetention(logEndOffset: number, opts: RetentionOptions): RetentionReport {
    const c = this.host.config;
    const rules: RetentionRules = {
      logStartOffset: this.host.logStartOffset(),
      logEndOffset,
      highWatermark: logEndOffset,
      nowMs: opts.nowMs ?? Date.now(),
      retentionMs: opts.retentionMs ?? c.retentionMs,
      retentionBytes: opts.retentionBytes ?? c.retentionBytes,
      deletePolicy: cleanupPolicy(c.cleanupPolicy).delete,
    };
    return this.deleteByPlan(planRetention(this.views(), rules), rules, opts);
  }

  /** Log.deleteRecordsBefore once the log end offset is known. */
  deleteRecordsBefore(offset: number, logEndOffset: number, opts: RetentionOptions): RetentionReport {
    const leo = logEndOffset;
    if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError(['offset'], `offset must be a non-negative integer, not ${offset}`);
    if (offset > leo) throw new LogtoolError('out-of-range', `offset ${offset} is beyond the log end offset ${leo}; records can only be deleted up to it`, { file: this.host.dir });
    const rules: RetentionRules = {
      logStartOffset: Math.max(this.host.logStartOffset(), offset),
      logEndOffset: leo,
      highWatermark: leo,
      nowMs: opts.nowMs ?? Date.now(),
      retentionMs: -1,
      retentionBytes: -1,
      deletePolicy: false,
    };
    const plan = planRetention(this.views(), rules);
    plan.logStartOffset = Math.max(plan.logStartOffset, rules.logStartOffset);
    return this.deleteByPlan(plan, rules, opts);
  }

  private views() {
    return this.host.segments.all.map((s) => segmentView(this.host.io, s));
  }

  private report(plan: RetentionPlan, rules: RetentionRules, opts: RetentionOptions): RetentionReport {
    const { dir, config } = this.host;
    const count = this.host.segments.size;
    return {
      dir,
      dryRun: Boolean(opts.dryRun),
      nowMs: rules.nowMs,
      cleanupPolicy: config.cleanupPolicy,
      retentionMs: rules.retentionMs,
      retentionBytes: rules.retentionBytes,
      logStartOffsetBefore: this.host.logStartOffset(),
      logStartOffsetAfter: plan.logStartOffset,
      logEndOffset: rules.logEndOffset,
      rolled: plan.rollFirst,
      deleted: plan.deletions.map((d) => ({ ...d, file: path.join(dir, segmentFileName(d.baseOffset, '.log')), files: [] as RemovedFile[] })),
      bytesDeleted: plan.deletions.reduce((n, d) => n + d.sizeBytes, 0),
      segmentsBefore: count,
      segmentsAfter: count - plan.deletions.length + (plan.rollFirst ? 1 : 0),
    };
  }

  private deleteByPlan(plan: RetentionPlan, rules: RetentionRules, opts: RetentionOptions): RetentionReport {
    const { io, dir, segments } = this.host;
    const report = this.report(plan, rules, opts);
    const raisesStart = plan.logStartOffset > this.host.logStartOffset();
    if (plan.deletions.length === 0 && !raisesStart) return report;
    if (opts.dryRun) {
      report.partitionState = followLogEnds(io, dir, { logStartOffset: report.logStartOffsetAfter }, { dryRun: true });
      return report;
    }
    const token = beginChange(io, dir);
    try {
      if (plan.rollFirst) this.host.roll(rules.logEndOffset);
      const doomedBases = new Set(plan.deletions.map((d) => d.baseOffset));
      const active = segments.active;
      const doomed = segments.all.filter((s) => doomedBases.has(s.baseOffset) && s !== active);
      // A new array: in-process readers iterating the old one keep a consistent view.
      segments.remove(doomed);
      const deleted: string[] = [];
      for (const seg of doomed) {
        // Kafka also retires the producer-state snapshot named after a deleted segment.
        const snapshot = path.join(dir, segmentFileName(seg.baseOffset, '.snapshot'));
        const files = io.stat(snapshot) ? [...seg.files(), snapshot] : seg.files();
        seg.closeDescriptors(); // no cached descriptor outlives the names
        const r = retireSegmentFiles(io, files, this.keepDirFor(opts.keepRemovedDir), opts.onStep);
        seg.retire(DELETED_SUFFIX);
        deleted.push(...r.deleted);
        report.deleted.find((d) => d.baseOffset === seg.baseOffset)!.files = r.removed;
      }
      if (doomed.length > 0) io.syncDir(dir);
      this.host.setLogStartOffset(Math.max(plan.logStartOffset, segments.first!.baseOffset));
      report.logStartOffsetAfter = this.host.logStartOffset();
      this.host.writeLogStartOffset();
      // Kafka: leaderEpochCache.truncateFromStart and the snapshots below the new log start.
      if (report.logStartOffsetAfter > report.logStartOffsetBefore) report.partitionState = followLogEnds(io, dir, { logStartOffset: report.logStartOffsetAfter });
      this.scheduleRemoval(doomed, deleted, opts.deleteDelayMs ?? this.host.config.fileDeleteDelayMs);
    } finally {
      endChange(io, dir, token);
    }
    return report;
  }

  /**
   * Swaps the `.cleaned` segment at `base` in for `old` by Kafka's crash-safe protocol
   * (cleaner/swap.ts) and updates the segment list. Returns the files that left the log.
   */
  replaceSegments(base: number, old: LogSegment[], opts: ReplaceSegmentsOptions): RemovedFile[] {
    const { io, dir, config } = this.host;
    const delay = opts.deleteDelayMs ?? 0;
    const token = beginChange(io, dir);
    try {
      for (const s of old) s.closeDescriptors(); // no cached descriptor outlives the names
      const res = swapSegments({
        io,
        dir,
        newBases: [base],
        old: old.map((s) => ({ baseOffset: s.baseOffset, files: s.files() })),
        keepDir: opts.keepRemovedDir,
        // deferRemoval: the caller removes the `.deleted` files itself (cleaner/swap.ts removeDeletedFiles).
        deleteNow: delay <= 0 && !opts.deferRemoval,
        hook: opts.onStep,
      });
      for (const s of old) s.retire(DELETED_SUFFIX);
      const files = this.host.segments.active.fdCache;
      const seg = new LogSegment({ io, dir, baseOffset: base, indexIntervalBytes: config.indexIntervalBytes, maxIndexBytes: config.segmentIndexBytes, writable: true, files });
      this.host.segments.replace(old, seg);
      this.scheduleRemoval(old, delay <= 0 ? [] : res.deleted, delay);
      return res.removed;
    } finally {
      endChange(io, dir, token);
    }
  }

  /** `<keepDir>/<partition>/<time of the first removal by this open>/`. */
  keepDirFor(keepDir: string | undefined): string | undefined {
    if (!keepDir) return undefined;
    this.keepDirStamp ??= new Date().toISOString().replace(/[:.]/g, '-');
    return path.join(path.resolve(keepDir), path.basename(this.host.dir), this.keepDirStamp);
  }

  /** Closes retired segments and unlinks their `.deleted` files, at once or after delayMs. */
  private scheduleRemoval(segments: LogSegment[], deletedFiles: string[], delayMs: number): void {
    const finish = () => {
      this.host.closeRetired(segments);
      for (const f of deletedFiles) this.host.io.unlink(f);
    };
    if (delayMs <= 0) return finish();
    const t = setTimeout(() => {
      this.pendingDeletions.delete(t);
      try {
        finish();
      } catch (e) {
        this.host.warn({ file: this.host.dir, message: `removing deleted segment files failed: ${(e as Error).message}` });
      }
    }, delayMs);
    t.unref();
    this.pendingDeletions.set(t, finish);
  }

  /** Removes now every `.deleted` file still waiting for file.delete.delay.ms. */
  runPendingDeletions(): number {
    const all = [...this.pendingDeletions];
    this.pendingDeletions.clear();
    for (const [t, finish] of all) {
      clearTimeout(t);
      finish();
    }
    return all.length;
  }

  /** A crash removes nothing later: forgets the scheduled removals (the next open deletes the `.deleted` files). */
  dropPendingDeletions(): void {
    for (const t of this.pendingDeletions.keys()) clearTimeout(t);
    this.pendingDeletions.clear();
  }
}
