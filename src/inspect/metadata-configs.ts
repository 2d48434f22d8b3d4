/**
 * Internals for commands: topic configs from a KRaft __cluster_metadata log (Kafka's ConfigRecord).
 */
export { type ClusterMetadataConfigs, type ConfigMap, readClusterMetadataConfigs } from '../engine/logdir/cluster-metadata-configs.js';
