/**
 * The line formatter of `logtool dump-log`: the batch and record lines Kafka's DumpLogSegments
 * (core/src/main/scala/kafka/tools/DumpLogSegments.scala: printBatchLevel, dumpLog's record
 * lines, control-record details) prints, and the options they depend on.
 */
import { type LogEntry, compressionName, type LogRecord } from '../api/format.js';
import { type LegacyRecordWithMetadata, hasDeleteHorizon, isControl, isTransactional } from '../inspect/format.js';
import { entryCrcValid } from '../inspect/log.js';
import { describeKraftControl, type DecodedInternal, type InternalRecord } from '../inspect/internal-topics.js';
import type { DecoderFlags } from './internal-decode.js';

export const INT_MAX = 2147483647;

export interface DumpLogOpts extends DecoderFlags {
  files: string;
  json?: boolean;
  /** The internal-topic decoder chosen by --offsets-decoder & co.; a record it cannot decode is a problem (exit 3). */
  decode?: (r: InternalRecord) => DecodedInternal;
  /** The decoder's control records (KRaft ones for --cluster-metadata-decoder), shown by --json. */
  decodeControl?: (r: InternalRecord) => DecodedInternal | undefined;
  printDataLog?: boolean;
  deepIteration?: boolean;
  verifyIndexOnly?: boolean;
  indexSanityCheck?: boolean;
  maxMessageSize: number;
  maxBytes: number;
  skipRecordMetadata?: boolean;
  keyDecoderClass?: string;
  valueDecoderClass?: string;
}

export const timestampTypeName = (e: LogEntry): string => {
  if (e.header) return e.header.attributes & 0x08 ? 'LogAppendTime' : 'CreateTime';
  if (e.magic === 0) return 'NoTimestampType';
  return e.buf[e.bufPos + 17]! & 0x08 ? 'LogAppendTime' : 'CreateTime';
};

/** Kafka's DefaultRecordBatch.incrementSequence: wraps past Integer.MAX_VALUE to 0. */
export function incrementSequence(sequence: number, increment: number): number {
  if (sequence > INT_MAX - increment) return increment - (INT_MAX - sequence) - 1;
  return sequence + increment;
}

export function batchLine(e: LogEntry, position: number): string {
  const h = e.header;
  let head: string;
  if (h) {
    const lastSeq = h.baseSequence === -1 ? -1 : incrementSequence(h.baseSequence, h.lastOffsetDelta);
    const horizon = hasDeleteHorizon(h) ? `OptionalLong[${h.baseTimestamp}]` : 'OptionalLong.empty';
    head =
      `baseOffset: ${e.baseOffset} lastOffset: ${e.lastOffset} count: ${h.recordsCount} baseSequence: ${h.baseSequence} lastSequence: ${lastSeq} ` +
      `producerId: ${h.producerId} producerEpoch: ${h.producerEpoch} partitionLeaderEpoch: ${h.partitionLeaderEpoch} ` +
      `isTransactional: ${isTransactional(h)} isControl: ${isControl(h)} deleteHorizonMs: ${horizon}`;
  } else {
    head = `offset: ${e.lastOffset}`;
  }
  const crc = h ? h.crc : e.buf.readUInt32BE(e.bufPos + 12);
  return `${head} position: ${position} ${timestampTypeName(e)}: ${e.maxTimestamp} size: ${e.size} magic: ${e.magic} compresscodec: ${compressionName(e.compression)} crc: ${crc} isvalid: ${entryCrcValid(e)}`;
}

function controlSuffix(r: LogRecord): string {
  const key = r.key;
  if (!key || key.length < 4) return ' controlType: UNKNOWN(-1)';
  const type = key.readInt16BE(2);
  if ((type === 0 || type === 1) && r.value && r.value.length >= 6) {
    return ` endTxnMarker: ${type === 0 ? 'ABORT' : 'COMMIT'} coordinatorEpoch: ${r.value.readInt32BE(2)}`;
  }
  const kraft = describeKraftControl(type, r.value);
  if (kraft) return ` ${kraft}`;
  const names = ['ABORT', 'COMMIT', 'LEADER_CHANGE', 'SNAPSHOT_HEADER', 'SNAPSHOT_FOOTER', 'KRAFT_VERSION', 'KRAFT_VOTERS'];
  return ` controlType: ${names[type] ?? 'UNKNOWN'}(${type})`;
}

export function recordLine(e: LogEntry, r: LogRecord | LegacyRecordWithMetadata, opts: DumpLogOpts, decoded?: DecodedInternal): string {
  let line = '';
  if (!opts.skipRecordMetadata) {
    // Kafka prints the shallow batch's timestamp type (batch.timestampType()) on every record line.
    line += `| offset: ${r.offset} ${timestampTypeName(e)}: ${r.timestamp} keySize: ${r.key ? r.key.length : -1} valueSize: ${r.value ? r.value.length : -1}`;
    const h = e.header;
    if (h) {
      const seq = h.baseSequence === -1 ? -1 : incrementSequence(h.baseSequence, r.offset - h.baseOffset);
      line += ` sequence: ${seq} headerKeys: [${r.headers.map((x) => x.key).join(',')}]`;
      if (isControl(h)) line += controlSuffix(r);
    } else if ('crcValid' in r) {
      line += ` isValid: ${r.crcValid} crc: ${r.crc}`;
    }
  }
  if (opts.printDataLog && !(e.header && isControl(e.header))) {
    let prefix = opts.skipRecordMetadata ? '| ' : ' ';
    // Kafka's MessageParser: the string decoder, or the internal topic's (OffsetsMessageParser & co.).
    const parsed = decoded ?? { key: r.key?.toString('utf8'), payload: r.value?.toString('utf8') };
    if (parsed.key !== undefined) {
      line += `${prefix}key: ${parsed.key}`;
      prefix = ' ';
    }
    // DumpLogSegments prints " payload: " whatever came before (only the key takes the "| " prefix).
    if (parsed.payload !== undefined) line += ` payload: ${parsed.payload}`;
  }
  return line;
}
