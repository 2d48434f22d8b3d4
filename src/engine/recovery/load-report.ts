/**
 * What Kafka's LogLoader (kafka-format.md §10) is given and what it leaves, and the report of what
 * it did (or, in a dry run, would do): LoadOptions, LoadResult, LoadReport. `logtool recover`
 * renders the report.
 */
import type { FileIO } from '../io.js';
import type { FileDescriptorCache } from '../segment/fd-cache.js';
import type { LogConfig } from '../config.js';
import type { TopicPartition } from '../log/topic-partition.js';
import type { LogWarning } from '../log/log-types.js';
import type { LogSegment } from '../segment/segment.js';
import { SWAP_SUFFIX } from '../cleaner/swap.js';
import type { PartitionStateChange } from '../partition-state/log-ends.js';

export interface TruncationReport {
  file: string;
  /** Byte position of the first invalid byte: the new size of the file. */
  position: number;
  bytes: number;
  reason: string;
  /** Where the cut-off bytes were kept (absent with discard). */
  savedTo?: string;
}

export interface DroppedFileReport {
  file: string;
  bytes: number;
  /** Where the file was moved (absent with discard). */
  savedTo?: string;
}

export interface IndexProblemReport {
  file: string;
  /** Byte position in the index file, when known. */
  position?: number;
  reason: string;
}

export interface LoadReport {
  dir: string;
  /** Nothing was changed: the report says what would be done. */
  dryRun: boolean;
  /** The clean-shutdown marker was found in the log directory. */
  markerFound: boolean;
  /** The marker was found and trusted, so sealed data was not scanned. */
  cleanShutdown: boolean;
  /** Why a marker that was found was not trusted. */
  markerNote?: string;
  /** Recovery point from the checkpoint (0 when absent). */
  recoveryPoint: number;
  logStartOffset: number;
  logEndOffset: number;
  /** Segments after loading. */
  segments: number;
  segmentsScanned: number;
  /** `.log` files trusted without validation (clean shutdown, below the recovery point): forceRecoverAll checks them. */
  segmentsNotChecked: string[];
  batchesValidated: number;
  bytesValidated: number;
  /** Index files rebuilt from their `.log` (routinely during recovery, or to repair them). */
  indexesRebuilt: string[];
  /** Index files that were missing or failed a sanity check (a repair). */
  indexProblems: IndexProblemReport[];
  truncated: TruncationReport[];
  bytesTruncated: number;
  segmentsDropped: DroppedFileReport[];
  tempFilesRemoved: string[];
  swapsCompleted: string[];
  /** Checkpoint files that could not be read (treated as empty, as Kafka does). */
  checkpointProblems: { file: string; reason: string }[];
  /** Leader epochs truncated and producer snapshots removed beyond a log end recovery moved. */
  partitionState?: PartitionStateChange;
  /** True when anything on disk was (or, dry run, would be) repaired. */
  repaired: boolean;
}

export interface LoadProgress {
  file: string;
  /** Bytes validated so far over all segments being recovered. */
  bytesDone: number;
  bytesTotal: number;
}

export interface LoadOptions {
  io: FileIO;
  dir: string;
  tp: TopicPartition | undefined;
  config: LogConfig;
  /** Readers: change nothing, scan nothing beyond the active segment's tail. */
  readOnly: boolean;
  onWarning: (w: LogWarning) => void;
  /** Delete what recovery cuts off instead of keeping it in lost+found/. */
  discardLost: boolean;
  /** Recover every segment, whatever the marker and the recovery point say. */
  forceRecoverAll?: boolean;
  /** Compute the report of a full (non-read-only) load without changing anything. */
  dryRun?: boolean;
  onProgress?: (p: LoadProgress) => void;
  /**
   * The log directory's clean-shutdown marker as another writer of this process already read (and
   * deleted) it; the loader then does not read the file (logdir/clean-shutdown.ts).
   */
  directoryMarker?: { content: Buffer | undefined };
  /**
   * What a LogManager read of the log directory once for all its partitions: the names in it that
   * parse as this partition (the ambiguity check) and the two checkpoints (already checked to
   * parse). The loader then reads none of them itself.
   */
  directory?: { names: readonly string[]; recoveryPoints: ReadonlyMap<string, number>; logStartOffsets: ReadonlyMap<string, number> };
  /** The descriptor cache the segments open their files through (segment/fd-cache.ts; default: one for this load). */
  files?: FileDescriptorCache;
  /**
   * A writable load of this partition just ran on a worker thread (a LogManager's pool) and left
   * this: the load finds its passes 1–4 done, recovers nothing, and reports that load's report and
   * recovery point, if the log end it reads cheaply is the one that load left (else it recovers).
   */
  recovered?: { report: LoadReport; recoveryPoint: number };
}

export interface LoadResult {
  segments: LogSegment[];
  logStartOffset: number;
  nextOffset: number;
  recoveryPoint: number;
  report: LoadReport;
  /** The clean-shutdown marker's content when found (writable loads; it is deleted at open). */
  markerContent?: Buffer;
}

export function emptyLoadReport(dir: string, dryRun: boolean): LoadReport {
  return {
    dir,
    dryRun,
    markerFound: false,
    cleanShutdown: false,
    recoveryPoint: 0,
    logStartOffset: 0,
    logEndOffset: 0,
    segments: 0,
    segmentsScanned: 0,
    segmentsNotChecked: [],
    batchesValidated: 0,
    bytesValidated: 0,
    indexesRebuilt: [],
    indexProblems: [],
    truncated: [],
    bytesTruncated: 0,
    segmentsDropped: [],
    tempFilesRemoved: [],
    swapsCompleted: [],
    checkpointProblems: [],
    repaired: false,
  };
}

/** A dry run opens a segment still named `.swap`; reports name the file the swap would become. */
export const finalName = (file: string): string => (file.endsWith(SWAP_SUFFIX) ? file.slice(0, -SWAP_SUFFIX.length) : file);
