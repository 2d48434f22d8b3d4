/**
 * The CLI's options for Kafka's internal-topic decoders and the choice of decoder, without the
 * decoders themselves (internal-decode.ts, loaded only when a record is decoded): DumpLogSegments'
 * options (--offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder; the first
 * given wins, in that order, as in core/src/main/scala/kafka/tools/DumpLogSegments.scala) and
 * `read --decode offsets|transactions|metadata`.
 */
import { Option, type Command } from 'commander';
import { LogtoolError } from '../api/format.js';
import { INTERNAL_TOPIC_KINDS, internalTopicOf, type InternalTopicKind } from '../inspect/topic-names.js';

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
