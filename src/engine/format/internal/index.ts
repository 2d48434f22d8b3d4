/**
 * Kafka's internal topics and their decoders, chosen by name as DumpLogSegments' options choose a
 * parser (--offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder) and by a
 * partition directory's topic (`__consumer_offsets-N`, `__transaction_state-N`, `__cluster_metadata-0`).
 */
import path from 'node:path';
import { decodeOffsets } from './consumer-offsets.js';
import { decodeTransactionLog } from './transaction-log.js';
import { decodeClusterMetadata, decodeKraftControlRecord } from './cluster-metadata.js';
import type { DecodedInternal, InternalRecord } from './decoded.js';

export type InternalTopicKind = 'offsets' | 'transactions' | 'metadata';
export const INTERNAL_TOPIC_KINDS: readonly InternalTopicKind[] = ['offsets', 'transactions', 'metadata'];

const decoders: Record<InternalTopicKind, (r: InternalRecord) => DecodedInternal> = {
  offsets: decodeOffsets,
  transactions: decodeTransactionLog,
  metadata: decodeClusterMetadata,
};

const topics: Record<string, InternalTopicKind> = {
  __consumer_offsets: 'offsets',
  __transaction_state: 'transactions',
  __cluster_metadata: 'metadata',
};

export function internalDecoder(kind: InternalTopicKind): (r: InternalRecord) => DecodedInternal {
  return decoders[kind];
}

/**
 * The decoder of the control records a kind's decoded output shows: a metadata log's KRaft control
 * records (kafka-dump-log.sh prints them decoded); none for the others, whose control records are
 * transaction markers Kafka's parsers never see. Undefined for a record that is not one.
 */
export function internalControlDecoder(kind: InternalTopicKind): ((r: InternalRecord) => DecodedInternal | undefined) | undefined {
  return kind === 'metadata' ? decodeKraftControlRecord : undefined;
}

/** The kind of internal topic a partition directory belongs to, by its name, if any. */
export function internalTopicOf(dir: string): InternalTopicKind | undefined {
  const m = /^(.*)-\d+$/.exec(path.basename(path.resolve(dir)));
  return m ? topics[m[1]!] : undefined;
}

export type { DecodedInternal, InternalRecord } from './decoded.js';
