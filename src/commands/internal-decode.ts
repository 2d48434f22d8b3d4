/**
 * The decoders of Kafka's internal topics as the CLI offers them: DumpLogSegments' options
 * (--offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder; the first given wins,
 * in that order, and each implies --print-data-log, as in core/src/main/scala/kafka/tools/
 * DumpLogSegments.scala), `read --decode offsets|transactions|metadata`, and one JSON line per
 * decoded record shared by both commands.
 */
import { Option, type Command } from 'commander';
import { LogtoolError } from '../engine/errors.js';
import { kafkaJsonText } from '../engine/format/internal/schema.js';
import type { ChalkInstance } from 'chalk';
import { escapeString } from '../render/escape.js';
import { formatTimestamp, timestampJson } from '../render/timestamp.js';
import { INTERNAL_TOPIC_KINDS, internalDecoder, internalTopicOf, type DecodedInternal, type InternalRecord, type InternalTopicKind } from '../engine/format/internal/index.js';
import type { Timestamp } from '../engine/format/record-batch.js';

export interface DecoderFlags {
  offsetsDecoder?: boolean;
  transactionLogDecoder?: boolean;
  clusterMetadataDecoder?: boolean;
}

/** Adds DumpLogSegments' three decoder options to a command. */
export function addDumpLogDecoderOptions(cmd: Command): Command {
  return cmd
    .option('--offsets-decoder', 'decode __consumer_offsets records (keys and values as JSON, tombstones as <DELETE>); implies --print-data-log')
    .option('--transaction-log-decoder', 'decode __transaction_state records; implies --print-data-log')
    .option('--cluster-metadata-decoder', 'decode KRaft __cluster_metadata records and snapshots; implies --print-data-log');
}

/** The decoder DumpLogSegments.messageParser picks: offsets, then transactions, then metadata. */
export function dumpLogDecoderKind(flags: DecoderFlags): InternalTopicKind | undefined {
  if (flags.offsetsDecoder) return 'offsets';
  if (flags.transactionLogDecoder) return 'transactions';
  if (flags.clusterMetadataDecoder) return 'metadata';
  return undefined;
}

/** `read --decode <kind>`. */
export function decodeOption(): Option {
  return new Option('--decode <topic>', "decode records of Kafka's internal topics: offsets (__consumer_offsets), transactions (__transaction_state), metadata (__cluster_metadata)").choices([
    ...INTERNAL_TOPIC_KINDS,
  ]);
}

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

/**
 * The decoder `read` uses: --decode, or (text output without --raw) the one the partition
 * directory's topic calls for. --json stays raw without --decode, so `read --json | append` copies.
 */
export function readDecoderKind(dir: string, opts: { decode?: InternalTopicKind; raw?: boolean; json?: boolean }): InternalTopicKind | undefined {
  if (opts.decode && opts.raw) throw new LogtoolError('usage', '--decode and --raw contradict each other: give one');
  if (opts.decode) return opts.decode;
  return opts.raw || opts.json ? undefined : internalTopicOf(dir);
}

/** `--json` on dump-log prints decoded records only: it needs a decoder. */
export function requireDecoderForJson(json: boolean | undefined, kind: InternalTopicKind | undefined): void {
  if (json && !kind) throw new LogtoolError('usage', '--json prints decoded records: give --offsets-decoder, --transaction-log-decoder or --cluster-metadata-decoder');
}
