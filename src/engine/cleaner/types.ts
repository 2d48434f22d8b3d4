/** Options and reports of retention and delete-records (Log.applyRetention / deleteRecordsBefore). */
import type { PlannedDeletion } from './retention.js';
import type { RemovedFile, StepHook } from './swap.js';

export interface RetentionOptions {
  /** Evaluate retention.ms as of this time (default now). */
  nowMs?: number;
  /** Override retention.ms for this call (−1 = off). */
  retentionMs?: number;
  /** Override retention.bytes for this call (−1 = off). */
  retentionBytes?: number;
  /** Report what would be deleted; change nothing. */
  dryRun?: boolean;
  /** Keep a copy of every deleted segment file under `<dir>/<partition>/<time>/`. */
  keepRemovedDir?: string;
  /** Remove the `.deleted` files after this long (default file.delete.delay.ms; 0 = at once). */
  deleteDelayMs?: number;
  /** Called after each file step (tests). */
  onStep?: StepHook;
}

export interface DeletedSegment extends PlannedDeletion {
  /** The segment's `.log` path. */
  file: string;
  /** Every file of the segment that left the log, with where a copy was kept. */
  files: RemovedFile[];
}

export interface RetentionReport {
  dir: string;
  dryRun: boolean;
  nowMs: number;
  cleanupPolicy: string;
  retentionMs: number;
  retentionBytes: number;
  logStartOffsetBefore: number;
  logStartOffsetAfter: number;
  logEndOffset: number;
  /** An empty segment was (would be) rolled first because every segment went. */
  rolled: boolean;
  deleted: DeletedSegment[];
  bytesDeleted: number;
  segmentsBefore: number;
  segmentsAfter: number;
}
