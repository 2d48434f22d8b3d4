/**
 * Kafka's internal topics and their decoders, chosen by name as DumpLogSegments' options choose a
 * parser (--offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder) and by a
 * partition directory's topic (`__consumer_offsets-N`, `__transaction_state-N`, `__cluster_metadata-0`).
 */
import { decodeOffsets } from './consumer-offsets.js';
import { decodeTransactionLog } from './transaction-log.js';
import { decodeClusterMetadata } from './cluster-metadata.js';
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

export type { DecodedInternal, InternalRecord } from './decoded.js';
