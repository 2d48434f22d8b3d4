/**
 * Legacy v0/v1 message sets (kafka-format.md §3), read only: Kafka stopped writing them in 4.0,
 * but old segments still hold them. One log entry is one message:
 *
 *   offset int64 | size int32 | crc uint32 | magic int8 | attributes int8 | [timestamp int64, v1]
 *   | keyLength int32 | key | valueLength int32 | value
 *
 * A compressed message is a wrapper whose value is the compressed concatenation of inner entries
 * (same layout, uncompressed, same magic). v0 inner offsets are absolute; v1 inner offsets are
 * relative and absolute = wrapperOffset − lastInnerRelative + innerRelative (wrapper offset 0
 * means base 0, a librdkafka quirk Kafka accepts).
 *
 * Where Kafka (AbstractLegacyRecordBatch, DataLogInputStream, LegacyRecord) is lenient, this
 * decoder is too, so that it returns what a Kafka consumer would: a negative key/value length
 * reads as null, bytes after the value are ignored, and an incomplete inner entry at the end of a
 * decompressed wrapper ends the set. decodeLegacyEntry is stricter in two places: inner CRC-32s
 * are always checked and inner magics must match the wrapper's. decodeLegacyEntryWithMetadata
 * (for dump-log) is as lenient as Kafka's deep iterator and reports each message's CRC instead.
 */
import { CorruptDataError } from '../errors.js';
import { crc32 } from './crc32c.js';
import { compressionName, CompressionType } from './compression.js';
import { gzipDecompress } from './codecs/gzip.js';
import { lz4Decompress } from './codecs/lz4.js';
import { snappyDecompress } from './codecs/snappy.js';
import { DEFAULT_MAX_DECOMPRESSED_BYTES, LOG_OVERHEAD, readInt64, type DecodeOptions, type LogRecord } from './record-batch.js';

export const MAGIC_V0 = 0;
export const MAGIC_V1 = 1;
/** Message bytes after the 12-byte offset and size prefix, excluding key and value (Kafka's RECORD_OVERHEAD_V0/V1). */
export const MESSAGE_OVERHEAD_V0 = 14;
export const MESSAGE_OVERHEAD_V1 = 22;
const COMPRESSION_MASK = 0x07;
const LOG_APPEND_TIME_BIT = 0x08;
const CRC_POS = 12;
const MAGIC_POS = 16;
const ATTRIBUTES_POS = 17;
const TIMESTAMP_POS = 18;

interface LegacyMessage {
  offset: number;
  magic: number;
  attributes: number;
  /** −1 for v0. */
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
}

/** Builds errors that name the message (and the inner message, if any), file and byte position. */
type Fail = (message: string) => CorruptDataError;

/** Reads the length-prefixed bytes at p; a negative length is null, as in Kafka's Utils.sizeDelimited. */
function sizeDelimited(buf: Buffer, p: number, end: number, what: string, fail: Fail): { bytes: Buffer | null; next: number } {
  if (end - p < 4) throw fail(`${what} length runs past the message`);
  const length = buf.readInt32BE(p);
  p += 4;
  if (length < 0) return { bytes: null, next: p };
  if (length > end - p) throw fail(`${what} of ${length} bytes runs past the message (${end - p} bytes left)`);
  return { bytes: buf.subarray(p, p + length), next: p + length };
}

/** Parses the entry at buf[pos, pos + size) (size includes the 12-byte prefix). */
function parseMessage(buf: Buffer, pos: number, size: number, fail: Fail): LegacyMessage {
  const end = pos + size;
  const magic = buf.readInt8(pos + MAGIC_POS);
  if (magic !== MAGIC_V0 && magic !== MAGIC_V1) throw fail(`magic ${magic} is not a legacy message format`);
  const overhead = magic === MAGIC_V0 ? MESSAGE_OVERHEAD_V0 : MESSAGE_OVERHEAD_V1;
  if (size - LOG_OVERHEAD < overhead) throw fail(`v${magic} message of ${size - LOG_OVERHEAD} bytes is below the ${overhead}-byte minimum`);
  const attributes = buf[pos + ATTRIBUTES_POS]!;
  let p = pos + TIMESTAMP_POS;
  let timestamp = -1;
  if (magic === MAGIC_V1) {
    timestamp = readInt64(buf, p);
    p += 8;
  }
  const key = sizeDelimited(buf, p, end, 'key', fail);
  const value = sizeDelimited(buf, key.next, end, 'value', fail);
  return { offset: readInt64(buf, pos), magic, attributes, timestamp, key: key.bytes, value: value.bytes };
}

function decompressWrapper(codecId: number, magic: number, payload: Buffer, maxOutputBytes: number): Buffer {
  switch (codecId) {
    case CompressionType.gzip:
      return gzipDecompress(payload, maxOutputBytes);
    case CompressionType.snappy:
      return snappyDecompress(payload, maxOutputBytes);
    case CompressionType.lz4:
      // Magic 0 carries the pre-KIP-57 header checksum, which Kafka does not verify.
      return lz4Decompress(payload, maxOutputBytes, { legacyHeaderChecksum: magic === MAGIC_V0 });
    default:
      throw new Error(`unreachable codec ${codecId}`);
  }
}

/** Kafka's TimestampType names, as kafka-dump-log.sh prints them. */
export type LegacyTimestampType = 'NoTimestampType' | 'CreateTime' | 'LogAppendTime';

/**
 * A legacy record with the metadata Kafka's LegacyRecord exposes for it. For an uncompressed
 * message that is the message itself; for an inner message of a compressed wrapper it is the
 * inner message's own CRC and validity (not the wrapper's), and the timestamp type Kafka gives
 * it: the wrapper's type for v1 inner messages, NoTimestampType for v0.
 */
export interface LegacyRecordWithMetadata extends LogRecord {
  magic: number;
  /** The message's stored CRC-32 (unsigned). */
  crc: number;
  /** The stored CRC matches the message bytes (Kafka's LegacyRecord.isValid). */
  crcValid: boolean;
  timestampType: LegacyTimestampType;
}

/**
 * Records of the legacy entry at buf[pos, pos + size): one for a plain message, one per inner
 * message for a compressed wrapper. The outer CRC is the scanner's job (verifyCrc); inner CRCs
 * are checked here. Keys and values are views into buf or the decompressed buffer.
 */
export function decodeLegacyEntry(buf: Buffer, pos: number, size: number, opts: DecodeOptions = {}): LogRecord[] {
  return decodeLegacy(buf, pos, size, opts, false);
}

/**
 * The records of a legacy entry as Kafka's deep iteration (AbstractLegacyRecordBatch's
 * DeepRecordsIterator) yields them to kafka-dump-log.sh, each with its own CRC, validity and
 * timestamp type. Like Kafka's file reader this does not reject an inner message whose CRC is
 * wrong (it is reported with crcValid false) or whose magic differs from the wrapper's; anything
 * Kafka's iterator throws on still throws (CorruptDataError).
 */
export function decodeLegacyEntryWithMetadata(buf: Buffer, pos: number, size: number, opts: DecodeOptions = {}): LegacyRecordWithMetadata[] {
  return decodeLegacy(buf, pos, size, opts, true);
}

const timestampTypeOf = (magic: number, attributes: number): LegacyTimestampType =>
  magic === MAGIC_V0 ? 'NoTimestampType' : attributes & LOG_APPEND_TIME_BIT ? 'LogAppendTime' : 'CreateTime';

/** An inner message of a compressed wrapper, with its own stored CRC and whether it matches. */
interface InnerMessage {
  m: LegacyMessage;
  crc: number;
  crcValid: boolean;
}

/**
 * The messages of a decompressed wrapper, as DataLogInputStream reads them: fewer than 12 bytes,
 * or an entry running past the end, ends the set. The strict decoder (`lenient` false) rejects a
 * CRC mismatch and a magic other than the wrapper's; Kafka's deep iterator over files does not.
 */
function innerMessages(data: Buffer, outerMagic: number, fail: Fail, lenient: boolean): InnerMessage[] {
  const inner: InnerMessage[] = [];
  let q = 0;
  while (data.length - q >= LOG_OVERHEAD) {
    const innerFail: Fail = (message) => fail(`inner message ${inner.length} (decompressed byte ${q}): ${message}`);
    const messageBytes = data.readInt32BE(q + 8);
    if (messageBytes < MESSAGE_OVERHEAD_V0) throw innerFail(`size ${messageBytes} is below the minimum ${MESSAGE_OVERHEAD_V0}`);
    if (messageBytes > data.length - q - LOG_OVERHEAD) break;
    const entryBytes = LOG_OVERHEAD + messageBytes;
    const storedCrc = data.readUInt32BE(q + CRC_POS);
    const computedCrc = crc32(data, q + MAGIC_POS, q + entryBytes);
    if (storedCrc !== computedCrc && !lenient) throw innerFail(`CRC-32 mismatch (stored ${storedCrc}, computed ${computedCrc})`);
    const m = parseMessage(data, q, entryBytes, innerFail);
    if (m.magic !== outerMagic && !lenient) throw innerFail(`magic ${m.magic} does not match the wrapper's magic ${outerMagic}`);
    // Kafka never nests compression; refusing it also bounds the work per entry.
    if ((m.attributes & COMPRESSION_MASK) !== CompressionType.none) throw innerFail('is itself compressed (nested compression)');
    inner.push({ m, crc: storedCrc, crcValid: storedCrc === computedCrc });
    q += entryBytes;
  }
  return inner;
}

function decodeLegacy(buf: Buffer, pos: number, size: number, opts: DecodeOptions, withMetadata: true): LegacyRecordWithMetadata[];
function decodeLegacy(buf: Buffer, pos: number, size: number, opts: DecodeOptions, withMetadata: false): LogRecord[];
function decodeLegacy(buf: Buffer, pos: number, size: number, opts: DecodeOptions, withMetadata: boolean): LogRecord[] | LegacyRecordWithMetadata[] {
  const position = opts.filePosition ?? pos;
  const headOffset = size >= 8 ? readInt64(buf, pos) : NaN;
  const magicAt = size > MAGIC_POS ? buf.readInt8(pos + MAGIC_POS) : NaN;
  const where = `v${magicAt} message at offset ${headOffset}`;
  const fail: Fail = (message) => new CorruptDataError(`${where}: ${message}`, position, opts.file);
  if (size < LOG_OVERHEAD + MESSAGE_OVERHEAD_V0) throw fail(`entry of ${size} bytes is below the ${LOG_OVERHEAD + MESSAGE_OVERHEAD_V0}-byte minimum`);

  const outer = parseMessage(buf, pos, size, fail);
  const codecId = outer.attributes & COMPRESSION_MASK;
  if (codecId === CompressionType.none) {
    const record: LogRecord = { offset: outer.offset, timestamp: outer.timestamp, key: outer.key, value: outer.value, headers: [] };
    if (!withMetadata) return [record];
    const crc = buf.readUInt32BE(pos + CRC_POS);
    return [{ ...record, magic: outer.magic, crc, crcValid: crc === crc32(buf, pos + MAGIC_POS, pos + size), timestampType: timestampTypeOf(outer.magic, outer.attributes) }];
  }
  if (codecId === CompressionType.zstd) throw fail('zstd compression is not allowed before magic 2');
  if (codecId > CompressionType.zstd) throw fail(`unknown compression type id ${codecId}`);
  if (outer.value === null) throw fail(`compressed (${compressionName(codecId)}) wrapper has a null value`);

  const maxOutputBytes = opts.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
  let data: Buffer;
  try {
    data = decompressWrapper(codecId, outer.magic, outer.value, maxOutputBytes);
  } catch (e) {
    throw fail(`${compressionName(codecId)} payload cannot be decompressed: ${(e as Error).message}`);
  }

  const inner = innerMessages(data, outer.magic, fail, withMetadata);
  if (inner.length === 0) throw fail('compressed wrapper holds no inner messages');

  let base = 0;
  if (outer.magic === MAGIC_V1) {
    const lastInner = inner[inner.length - 1]!.m.offset;
    if (outer.offset !== 0) {
      if (outer.offset < lastInner) throw fail(`wrapper offset is below the last inner relative offset ${lastInner}`);
      base = outer.offset - lastInner;
    }
  }
  const logAppendTime = outer.magic === MAGIC_V1 && (outer.attributes & LOG_APPEND_TIME_BIT) !== 0;
  // Kafka gives a v1 inner message the wrapper's timestamp type (LegacyRecord.timestampType with a wrapper type).
  const innerV1Type = timestampTypeOf(outer.magic, outer.attributes);
  return inner.map(({ m, crc, crcValid }) => {
    const record: LogRecord = {
      offset: base + m.offset,
      timestamp: m.magic === MAGIC_V0 ? -1 : logAppendTime ? outer.timestamp : m.timestamp,
      key: m.key,
      value: m.value,
      headers: [],
    };
    if (!withMetadata) return record;
    return { ...record, magic: m.magic, crc, crcValid, timestampType: m.magic === MAGIC_V0 ? 'NoTimestampType' : innerV1Type } satisfies LegacyRecordWithMetadata;
  });
}
