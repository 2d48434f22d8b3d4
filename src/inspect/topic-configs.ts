/**
 * Internals for commands: which topic configs apply to a partition (the topic-config rule of
 * engine/logdir/topic-configs.ts: explicit, remembered, a broker's KRaft `__cluster_metadata`
 * ConfigRecords, Kafka's built-in internal-topic configs, or skipped).
 */
export {
  INTERNAL_TOPIC_CONFIGS,
  UNKNOWN_CONFIG_NOTICE,
  cleanupPolicyOf,
  effectiveConfig,
  inBrokerLogDir,
  metadataTopicConfig,
  partitionConfig,
  type ConfigSource,
  type PartitionConfig,
} from '../engine/logdir/topic-configs.js';
