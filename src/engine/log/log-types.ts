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

export interface LogPosition {
  /** Next offset after the data at this position. */
  offset: number;
  /** Base offset of the segment the position is in. */
  segment: number;
  /** Byte position in that segment's `.log`. */
  position: number;
}

/** The three positions of a log (docs/durability.md), plus the recovery point. */
export interface LogPositions {
  /** Accepted by the process: includes the write buffer (its byte position assumes no roll). */
  written: LogPosition;
  /** Handed to the OS with write(2): survives a crash of the process. */
  committed: LogPosition;
  /** Made durable with fdatasync(2): survives power loss. */
  flushed: LogPosition;
  /** Offset below which recovery may skip segments (in memory; ≤ flushed). */
  recoveryPoint: number;
  /** The recovery point last persisted in recovery-point-offset-checkpoint. */
  checkpointedRecoveryPoint: number;
  /** The same three positions as byte totals since this open (monotonic across segments). */
  bytes: { written: number; committed: number; flushed: number };
}
