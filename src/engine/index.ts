/**
 * logtool's public engine API. See README.md ("Library") for a tour.
 */
import './format/codecs/index.js';
export { Log, type LogOptions, type AppendOptions, type AppendResult, type LogPosition, type SegmentInfo, type LogWarning } from './log.js';
export { LogReader, type ReadOptions, type BatchReadOptions } from './log-reader.js';
export { defaultLogConfig, type LogConfig, type FlushMode } from './config.js';
export { LogtoolError, SymlinkError, ExitCode, type ErrorKind } from './errors.js';
export { realIO, type FileIO, type FileStat } from './io.js';
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
} from './format/record-batch.js';
export { CompressionType, compressionName, registerCodec, type Codec } from './format/compression.js';
export { crc32c } from './format/crc32c.js';
export { LogSegment, segmentFileName } from './segment.js';
export { OffsetIndex } from './index/offset-index.js';
export { TimeIndex } from './index/time-index.js';
export { EntryScanner, type LogEntry, type ScanEnd } from './file-records.js';
export type { LoadReport } from './loader.js';
export type { AckStatus } from './flush/group-commit.js';
export { ConsumerPositions, CONSUMER_OFFSETS_CHECKPOINT, type ConsumerPosition, type CommitPositionOptions, type ResumePosition } from './consumer-positions.js';
export { readProducerSnapshot, decodeProducerSnapshot, encodeProducerSnapshot, type ProducerSnapshotEntry } from './partition-state/producer-snapshot.js';
export { readLeaderEpochCheckpoint, checkLeaderEpochs, LEADER_EPOCH_CHECKPOINT, type LeaderEpochEntry, type LeaderEpochBounds, type LeaderEpochProblem } from './partition-state/leader-epochs.js';
export { Channel, type ChannelOptions, type ChannelCounters, type PutTransaction, type TakeTransaction } from './channel.js';
export { verifyLog, type VerifyReport, type VerifyProblem, type VerifyOptions } from './log-verifier.js';
