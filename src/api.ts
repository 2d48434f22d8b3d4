/**
 * logtool's public engine API. See README.md ("Library") for a tour.
 */
import './engine/format/codecs/index.js';
export { Log, type LogOptions, type AppendOptions, type AppendResult, type LogPosition, type SegmentInfo, type LogWarning } from './engine/log/log.js';
export { LogReader, type ReadOptions, type BatchReadOptions } from './engine/log/log-reader.js';
export { defaultLogConfig, type LogConfig, type FlushMode } from './engine/config.js';
export { LogtoolError, SymlinkError, ExitCode, type ErrorKind } from './engine/errors.js';
export { realIO, type FileIO, type FileStat } from './engine/io.js';
export {
  encodeBatch,
  decodeRecords,
  readBatchHeader,
  isCrcValid,
  type RecordInput,
  type LogRecord,
  type RecordHeader,
  type BatchHeader,
  type Timestamp,
} from './engine/format/record-batch.js';
export { CompressionType, compressionName, registerCodec, type Codec } from './engine/format/compression.js';
export { crc32c } from './engine/format/crc32c.js';
export { LogSegment, segmentFileName } from './engine/segment/segment.js';
export { OffsetIndex } from './engine/segment/offset-index.js';
export { TimeIndex } from './engine/segment/time-index.js';
export { EntryScanner, type LogEntry, type ScanEnd } from './engine/segment/file-records.js';
export type { LoadReport } from './engine/recovery/loader.js';
export type { AckStatus } from './engine/flush/group-commit.js';
export { ConsumerPositions, CONSUMER_OFFSETS_CHECKPOINT, type ConsumerPosition, type CommitPositionOptions, type ResumePosition } from './engine/queue/consumer-positions.js';
export { readProducerSnapshot, decodeProducerSnapshot, encodeProducerSnapshot, type ProducerSnapshotEntry } from './engine/partition-state/producer-snapshot.js';
export { readLeaderEpochCheckpoint, checkLeaderEpochs, LEADER_EPOCH_CHECKPOINT, type LeaderEpochEntry, type LeaderEpochBounds, type LeaderEpochProblem } from './engine/partition-state/leader-epochs.js';
export { Channel, type ChannelOptions, type ChannelCounters, type PutTransaction, type TakeTransaction } from './engine/queue/channel.js';
export { verifyLog, type VerifyReport, type VerifyProblem, type VerifyOptions } from './engine/recovery/log-verifier.js';
export { decodeOffsetsRecord, type OffsetsRecord } from './engine/format/internal/consumer-offsets.js';
export { decodeTransactionLogRecord, type TransactionLogRecord } from './engine/format/internal/transaction-log.js';
export { decodeMetadataRecord, type MetadataRecord } from './engine/format/internal/cluster-metadata.js';
export { GroupStateBuilder, type GroupState, type CommittedOffset } from './engine/format/internal/group-state.js';
export { kafkaJsonText, type KafkaJson } from './engine/format/internal/schema.js';
export { BrokerLock } from './engine/logdir/broker-lock.js';
export { LogManager, type LogManagerOptions, type LoadProgressEvent } from './engine/logdir/log-manager.js';
export type { ScheduleEvent, ScheduleIntervals, ScheduledTaskName } from './engine/logdir/manager-schedule.js';
