/**
 * Internals for commands: what a log directory holds (Kafka's LogManager classification: partition
 * directories, meta.properties, __cluster_metadata-0, -delete/-future/-stray directories).
 * Loads no log: every command's broker-lock check (commands/broker-lock.ts) runs on it.
 */
export { CLUSTER_METADATA_DIR, type LogDirEntry, META_PROPERTIES, classifyEntry, isBrokerLogDir, isKafkaEntry, isPartitionDir, listLogDir, logDirTarget } from '../engine/logdir/entries.js';
