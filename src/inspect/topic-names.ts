/**
 * Internals for commands: Kafka's internal topics by name (__consumer_offsets,
 * __transaction_state, __cluster_metadata), without their decoders (internal-topics.ts).
 */
export { INTERNAL_TOPIC_KINDS, type InternalTopicKind, internalTopicOf } from '../engine/format/internal/topics.js';
