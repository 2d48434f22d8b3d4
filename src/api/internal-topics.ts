/**
 * The public API's internal-topic decoders: __transaction_state and __cluster_metadata records
 * (Kafka's TransactionLog and MetadataRecordSerde; __consumer_offsets' are in groups.ts) and Kafka's
 * JSON for decoded records; loaded only where records are decoded.
 */
export { decodeTransactionLogRecord, type TransactionLogRecord } from '../engine/format/internal/transaction-log.js';
export { decodeMetadataRecord, type MetadataRecord } from '../engine/format/internal/cluster-metadata.js';
export { kafkaJsonText, type KafkaJson } from '../engine/format/internal/schema.js';
