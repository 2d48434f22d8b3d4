/**
 * Options and reports of retention and delete-records (Log.applyRetention / deleteRecordsBefore),
 * and what the cleaner's parts (Kafka's Cleaner, LogCleanerManager, CleanedTransactionMetadata)
 * share: the cleaner's options and the views of a log and of its transactions they work on.
 */
import type { FileIO } from '../io.js';
import type { LogConfig } from '../config.js';
import type { BatchHeader } from '../format/record-batch.js';
import type { LogSegment } from '../segment/segment.js';
import type { AbortedTxn } from '../partition-state/transaction-index.js';
import type { PlannedDeletion } from './retention.js';
import type { RemovedFile, StepHook } from './swap.js';
import type { PartitionStateChange } from '../partition-state/log-ends.js';

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
  /** Leader epochs truncated and producer snapshots removed when the log start moved. */
  partitionState?: PartitionStateChange;
}

export interface CleanerOptions {
  /** The cleaning time (delete horizons, min.compaction.lag.ms, producer expiry); default now. */
  nowMs?: number;
  /** Bound on the cleaner's memory: offset map plus I/O buffers (default 128 MiB). */
  maxMemoryBytes?: number;
  /** Size the offset map explicitly (bytes, 24 per slot); default: what the bound leaves. */
  offsetMapBytes?: number;
  /** Compute and report, change nothing in the log directory. */
  dryRun?: boolean;
  /** Ignore cleaner-offset-checkpoint: the whole log (from the log start offset) is dirty. */
  fromStart?: boolean;
  /** Keep a copy of every replaced segment file here instead of losing it. */
  keepRemovedDir?: string;
  producerIdExpirationMs?: number;
  /** Stop after this many rounds (default: until the cleanable range is done). */
  maxPasses?: number;
  onProgress?: (p: CleanProgress) => void;
  /** Called after every step of every swap (tests simulate crashes from it). */
  onStep?: StepHook;
  /** Delay before `.deleted` files are removed; 0 or undefined = at once. */
  deleteDelayMs?: number;
}

export interface CleanProgress {
  pass: number;
  phase: 'scan' | 'map' | 'clean';
  bytesDone: number;
  bytesTotal: number;
}

/** What the cleaner needs of a Log (log.ts implements it; kept structural to avoid an import cycle). */
export interface CleanableLog {
  readonly dir: string;
  readonly io: FileIO;
  readonly config: LogConfig;
  readonly segments: LogSegment[];
  readonly logStartOffset: number;
  readonly nextOffset: number;
  readCleanerCheckpoint(): number | undefined;
  writeCleanerCheckpoint(offset: number): void;
  /** Crash-safe swap of a `.cleaned` segment at `base` for `old`; returns the files removed. */
  replaceSegments(base: number, old: LogSegment[], opts: ReplaceSegmentsOptions): RemovedFile[];
}

/** How a swap removes what it replaced. */
export interface ReplaceSegmentsOptions {
  keepRemovedDir?: string;
  /** Remove the `.deleted` files after this long; 0 or undefined = at once. */
  deleteDelayMs?: number;
  /** With no delay: leave the `.deleted` files to the caller (cleaner/swap.ts removeDeletedFiles). */
  deferRemoval?: boolean;
  onStep?: StepHook;
}

/** One aborted transaction as the cleaned segment's `.txnindex` records it. */
export type TxnIndexEntry = AbortedTxn;

/** What filtering needs of Kafka's CleanedTransactionMetadata (TxnMetadata in partition-state/producer-state.ts). */
export interface CleanedTxnTracker {
  /** A control batch was read (its control type, undefined when emptied); true if it can be discarded. */
  onControlBatchRead(h: BatchHeader, type: number | undefined): boolean;
  /** A data batch was read; true if it belongs to an aborted transaction. */
  onBatchRead(h: BatchHeader): boolean;
  /** Aborted transactions whose markers the cleaned segment keeps (its .txnindex). */
  cleanedIndex: TxnIndexEntry[] | undefined;
}

/** What filtering needs of a producer that is still active (Kafka's lastRecordsOfActiveProducers). */
export interface ActiveProducer {
  epoch: number;
  /** Last offset of the producer's last data batch in its current epoch; −1 = none. */
  lastDataOffset: number;
}
