/**
 * The decoders of Kafka's internal topics as the CLI offers them: DumpLogSegments' options
 * (--offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder; the first given wins,
 * in that order, and each implies --print-data-log, as in core/src/main/scala/kafka/tools/
 * DumpLogSegments.scala), `read --decode offsets|transactions|metadata`, and one JSON line per
 * decoded record shared by both commands.
 */
import { kafkaJsonText } from '../api/internal-topics.js';
import type { ChalkInstance } from 'chalk';
import { escapeString } from '../render/escape.js';
import { formatTimestamp, timestampJson } from '../render/timestamp.js';
import { internalDecoder, type DecodedInternal, type InternalRecord, type InternalTopicKind } from '../inspect/internal-topics.js';
import type { Timestamp } from '../api/format.js';

export { internalControlDecoder } from '../inspect/internal-topics.js';
export { addDumpLogDecoderOptions, decodeOption, dumpLogDecoderKind, readDecoderKind, requireDecoderForJson, type DecoderFlags } from './decode-options.js';

export function decoderFor(kind: InternalTopicKind): (r: InternalRecord) => DecodedInternal {
  return internalDecoder(kind);
}

/** One JSON line for a decoded record: {"offset","timestamp", …the decoder's object}. */
export function decodedJsonLine(r: InternalRecord & { timestamp: Timestamp }, d: DecodedInternal): string {
  return kafkaJsonText({ offset: r.offset, timestamp: timestampJson(r.timestamp), ...d.json });
}

/** `read`'s text line for a decoded record: offset, time, then the key and payload Kafka's parser prints. */
export function decodedTextLine(r: InternalRecord & { timestamp: Timestamp }, d: DecodedInternal, c: ChalkInstance): string {
  return `${c.cyan(String(r.offset))}\t${c.dim(formatTimestamp(r.timestamp))}\t${c.green(escapeString(d.key ?? ''))}\t${escapeString(d.payload ?? '')}`;
}
