/**
 * Types shared by log.ts and the modules it uses (loader.ts, log-reader.ts), kept below all three
 * so none of them imports log.ts for a type. log.ts re-exports LogWarning and SegmentInfo.
 */
import type { LogSegment } from '../segment/segment.js';
import type { Timestamp } from '../format/record-batch.js';
import type { PartitionSource } from '../partition-state/isolation.js';

export interface LogWarning {
  file: string;
  position?: number;
  message: string;
}

export interface SegmentInfo {
  baseOffset: number;
  file: string;
  sizeBytes: number;
  firstOffset: number | undefined;
  lastOffset: number | undefined;
  /** Timestamps beyond ±2^53 are bigints (see Timestamp in format/record-batch.ts). */
  firstTimestamp: Timestamp | undefined;
  maxTimestamp: Timestamp | undefined;
  indexEntries: number;
  timeIndexEntries: number;
}

/** What a LogReader reads of its log (a Log satisfies it; read_committed needs PartitionSource). */
export interface ReadableLog extends PartitionSource {
  readonly dir: string;
  /** Ascending by base offset; the last one is active. */
  readonly segments: readonly LogSegment[];
  readonly activeSegment: LogSegment;
  readonly logStartOffset: number;
}
