/**
 * The public API's log: Log (Kafka's UnifiedLog/LocalLog), its reader, configs (LogConfig, Kafka's
 * topic configs), the loader's report, producer snapshots, leader-epoch checkpoints.
 * Everything here is loaded by a one-record read anyway.
 */
export { Log, type LogOptions, type AppendOptions, type AppendResult, type LogPosition, type SegmentInfo, type LogWarning } from '../engine/log/log.js';
export { LogReader, type ReadOptions, type ViewReadOptions, type BatchReadOptions } from '../engine/log/log-reader.js';
export { RecordView } from '../engine/format/record-view.js';
export { defaultLogConfig, type LogConfig, type FlushMode } from '../engine/config.js';
export type { LoadReport } from '../engine/recovery/loader.js';
export type { AckStatus } from '../engine/flush/group-commit.js';
export { readProducerSnapshot, decodeProducerSnapshot, encodeProducerSnapshot, type ProducerSnapshotEntry } from '../engine/partition-state/producer-snapshot.js';
export { readLeaderEpochCheckpoint, checkLeaderEpochs, LEADER_EPOCH_CHECKPOINT, type LeaderEpochEntry, type LeaderEpochBounds, type LeaderEpochProblem } from '../engine/partition-state/leader-epochs.js';
