/**
 * Internals for forensic commands, format layer: record batch fields and control records, codec
 * names, segment file names, entry scanning, legacy (v0/v1) message sets and the index rebuilder
 * (Kafka's LogSegment.recover). Not part of the package's API.
 */
export { compressionNames, parseCompression } from '../engine/format/compression.js';
export { INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, parseBaseOffset } from '../engine/segment/segment-files.js';
export { decodeEntryRecords, entryRecords } from '../engine/format/entry-records.js';
export { ControlType, HEADER_PROBE_BYTES, LOG_OVERHEAD, MIN_ENTRY_SIZE, controlTypeOf, exactMaxTimestamp, hasDeleteHorizon, isControl, isTransactional, readInt64, timestampTypeOf, toTimestamp } from '../engine/format/record-batch.js';
export { type LegacyRecordWithMetadata, decodeLegacyEntryWithMetadata } from '../engine/format/legacy.js';
export { describeScanEnd, entryBytes } from '../engine/segment/file-records.js';
export { InvalidArgumentError, InvalidDirectoryError } from '../engine/errors.js';
export { type IndexDifference, type IndexScanResult, rebuildSegmentIndexes, verifySegmentIndexFiles } from '../engine/recovery/index-rebuilder.js';
