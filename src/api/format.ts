/**
 * The public API's format layer: errors, the I/O layer, record batches, codecs, CRC-32C, segment
 * files and their indexes (Kafka's RecordBatch v2, LogSegment, OffsetIndex, TimeIndex). Loads no log,
 * so a command that only reads segment files (dump-index) stays small.
 */
export { LogtoolError, InvalidArgumentError, InvalidDirectoryError, SymlinkError, ExitCode, type ErrorKind } from '../engine/errors.js';
export { realIO, type FileIO, type FileStat } from '../engine/io.js';
export { encodeBatch, decodeRecords, readBatchHeader, isCrcValid, type RecordInput, type LogRecord, type RecordHeader, type BatchHeader, type Timestamp } from '../engine/format/record-batch.js';
export type { ValueSlices } from '../engine/format/value-slices.js';
export { CompressionType, compressionName, registerCodec, type Codec } from '../engine/format/compression.js';
export { crc32c } from '../engine/format/crc32c.js';
export { LogSegment, segmentFileName } from '../engine/segment/segment.js';
export { OffsetIndex } from '../engine/segment/offset-index.js';
export { TimeIndex } from '../engine/segment/time-index.js';
export { EntryScanner, type LogEntry, type ScanEnd } from '../engine/segment/file-records.js';
