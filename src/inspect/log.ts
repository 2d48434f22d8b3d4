/**
 * Internals for commands, log layer: checkpoint files, config table, log-directory entries,
 * partition names, remembered configs, the partition lock, isolation (Kafka's read_committed), the
 * loader (Kafka's LogLoader). Not part of the package's API; loaded by a one-record read anyway.
 */
export { CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_CHECKPOINT, type OffsetCheckpoint, RECOVERY_POINT_CHECKPOINT, parseProperties, readOffsetCheckpoint, readOffsetCheckpointTolerant, readSmallFile, removeQuietly, tpKey, writeFileAtomic } from '../engine/checkpoint.js';
export { readDirCheckpoint, requireWritableCheckpoints, updateDirCheckpoint } from '../engine/logdir/dir-checkpoints.js';
export { parseTopicPartition, requireTopicPartition, requireValidTopicName } from '../engine/log/topic-partition.js';
export type { CompactionSchedule } from '../engine/cleaner/schedule.js';
export { cleanupPolicy, configProperty, invocationConfigKeys, parsePropertyValue, propertyNames, propertyToKey, rememberedConfigKeys, resolveConfig, validateConfig } from '../engine/config.js';
export { ISOLATION_LEVELS, type IsolationLevel, collectAborted, committedView, entryControlMarker, partitionProducerState, scanProducerState } from '../engine/partition-state/isolation.js';
export { rebuildTxnIndexes } from '../engine/partition-state/txn-index-rebuild.js';
export type { RetentionReport } from '../engine/cleaner/types.js';
export { loadRememberedConfig } from '../engine/log/log-properties.js';
export { PRODUCER_SNAPSHOT_SUFFIX } from '../engine/partition-state/producer-snapshot.js';
export { type EntryWithSegment, entryCrcValid } from '../engine/log/log-reader.js';
export { DirectoryLock } from '../engine/log/lock.js';
export { type LoadProgress, loadLog } from '../engine/recovery/loader.js';
export type { PartitionStateChange } from '../engine/partition-state/log-ends.js';
export { leaderEpochRanges } from '../engine/partition-state/leader-epochs.js';
