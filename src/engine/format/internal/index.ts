/**
 * Kafka's internal topics and their decoders, chosen by name as DumpLogSegments' options choose a
 * parser (--offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder) and by a
 * partition directory's topic (`__consumer_offsets-N`, `__transaction_state-N`, `__cluster_metadata-0`).
 */
import { decodeOffsets } from './consumer-offsets.js';
import { decodeTransactionLog } from './transaction-log.js';
import { decodeClusterMetadata, decodeKraftControlRecord } from './cluster-metadata.js';
import type { DecodedInternal, InternalRecord } from './decoded.js';
import type { InternalTopicKind } from './topics.js';

export { INTERNAL_TOPIC_KINDS, internalTopicOf, type InternalTopicKind } from './topics.js';

const decoders: Record<InternalTopicKind, (r: InternalRecord) => DecodedInternal> = {
  offsets: decodeOffsets,
  transactions: decodeTransactionLog,
  metadata: decodeClusterMetadata,
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

export type { DecodedInternal, InternalRecord } from './decoded.js';
