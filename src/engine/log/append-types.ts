/**
 * What an append takes and what it promises (Kafka's produce request fields a partition's append
 * sees, and the acknowledgement of docs/durability.md), apart from the append path itself.
 */
import type { FlushMode } from '../config.js';
import type { AckStatus } from '../flush/group-commit.js';

export interface AppendOptions {
  /** Override the log's flush mode for this append. */
  flushMode?: FlushMode;
  /** Sync mode: resolve once committed; the data still rides the next group fsync. */
  ackBeforeSync?: boolean;
  compression?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  transactional?: boolean;
  control?: boolean;
  logAppendTime?: boolean;
}

/** Log.appendValueSlices takes no producer, compression or control fields: plain records only. */
export type ValueSliceAppendOptions = Pick<AppendOptions, 'flushMode' | 'ackBeforeSync'>;

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  count: number;
  /**
   * What is guaranteed when the promise resolves:
   * - `flushed`: on disk (fdatasync returned), survives power loss;
   * - `committed`: handed to the OS (write returned), survives a crash of the process, not power loss;
   * - `written`: in the process's write buffer, lost if the process dies before the committer runs;
   * - `timed-out`: sync mode only — not flushed within syncTimeoutMs; it may or may not become durable.
   */
  status: AckStatus;
  /** An idempotent batch that retried one of the producer's last five: nothing was written, the original offsets are returned (Log.append). */
  duplicate?: boolean;
}
