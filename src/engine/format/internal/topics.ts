/**
 * Kafka's internal topics by name (`__consumer_offsets-N`, `__transaction_state-N`,
 * `__cluster_metadata-0`), as DumpLogSegments' decoder options name them, without their decoders:
 * the CLI declares `--decode` and picks a partition's decoder from this, and loads the decoders
 * (index.ts) only when a record is decoded.
 */
import path from 'node:path';

export type InternalTopicKind = 'offsets' | 'transactions' | 'metadata';
export const INTERNAL_TOPIC_KINDS: readonly InternalTopicKind[] = ['offsets', 'transactions', 'metadata'];

const topics: Record<string, InternalTopicKind> = {
  __consumer_offsets: 'offsets',
  __transaction_state: 'transactions',
  __cluster_metadata: 'metadata',
};

/** The kind of internal topic a partition directory belongs to, by its name, if any. */
export function internalTopicOf(dir: string): InternalTopicKind | undefined {
  const m = /^(.*)-\d+$/.exec(path.basename(path.resolve(dir)));
  return m ? topics[m[1]!] : undefined;
}
