/**
 * One partition's entries in its log directory's checkpoint files (Kafka's
 * recovery-point-offset-checkpoint, log-start-offset-checkpoint and cleaner-offset-checkpoint,
 * kafka-format.md: key `<topic> <partition>`), and the recovery point with the value last written
 * (Kafka's UnifiedLog.recoveryPoint; the LogManager's checkpoint task writes it too). A directory
 * not named `<topic>-<partition>` has no entries: reads find none, writes do nothing.
 */
import type { FileIO } from '../io.js';
import { CLEANER_OFFSET_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, tpKey } from '../checkpoint.js';
import { readDirCheckpoint, updateDirCheckpoint, updateDirCheckpointAsync } from '../logdir/dir-checkpoints.js';
import type { TopicPartition } from './topic-partition.js';

export class PartitionCheckpoints {
  private readonly key: string | undefined;
  /** Offsets below it are flushed (never ahead of flushed data). */
  recoveryPoint: number;
  /** The recovery point as last written to recovery-point-offset-checkpoint. */
  checkpointedRecoveryPoint: number;

  constructor(
    private readonly io: FileIO,
    private readonly logDir: string,
    tp: TopicPartition | undefined,
    recoveryPoint: number,
  ) {
    this.key = tp && tpKey(tp.topic, tp.partition);
    this.recoveryPoint = recoveryPoint;
    this.checkpointedRecoveryPoint = recoveryPoint;
  }

  /** A flush made everything below offset durable (the recovery point never moves back). */
  advanceRecoveryPoint(offset: number): void {
    this.recoveryPoint = Math.max(this.recoveryPoint, offset);
  }

  /** The thorough flush's checkpoint: written only when it changed; returns the fsyncs issued. */
  async checkpointRecoveryPointIfChanged(): Promise<number> {
    if (this.recoveryPoint === this.checkpointedRecoveryPoint) return 0;
    await this.writeRecoveryPointAsync();
    return 2;
  }

  /** close(): the recovery point is the log end offset once everything is flushed. */
  checkpointRecoveryPointAt(offset: number): void {
    this.recoveryPoint = offset;
    this.writeRecoveryPoint();
  }

  /** writeRecoveryPoint for the thorough flush: no lock wait or fsync blocks the event loop. */
  async writeRecoveryPointAsync(): Promise<void> {
    if (this.key === undefined) return;
    const rp = this.recoveryPoint;
    await updateDirCheckpointAsync(this.io, this.logDir, RECOVERY_POINT_CHECKPOINT, this.key, rp);
    this.checkpointedRecoveryPoint = rp;
  }

  /** Persists the recovery point (after a flush; never ahead of flushed data). */
  writeRecoveryPoint(): void {
    if (this.key === undefined) return;
    const rp = this.recoveryPoint;
    updateDirCheckpoint(this.io, this.logDir, RECOVERY_POINT_CHECKPOINT, this.key, rp);
    this.checkpointedRecoveryPoint = rp;
  }

  /** Writes the log-start-offset-checkpoint entry (undefined removes it). */
  writeLogStartOffset(entry: number | undefined): void {
    if (this.key === undefined) return;
    updateDirCheckpoint(this.io, this.logDir, LOG_START_OFFSET_CHECKPOINT, this.key, entry);
  }

  /** This partition's entry in `<log dir>/cleaner-offset-checkpoint`. */
  readCleanerOffset(): number | undefined {
    if (this.key === undefined) return undefined;
    return readDirCheckpoint(this.io, this.logDir, CLEANER_OFFSET_CHECKPOINT).get(this.key);
  }

  writeCleanerOffset(offset: number): void {
    if (this.key === undefined) return;
    updateDirCheckpoint(this.io, this.logDir, CLEANER_OFFSET_CHECKPOINT, this.key, offset);
  }
}
