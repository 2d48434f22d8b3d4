/**
 * Which topic configs apply to a partition (kafka-format.md: topic configs live outside the
 * partition directory; Kafka's LogManager gets them from ConfigRepository, fed by KRaft's
 * ConfigurationsImage or ZooKeeper). In a broker's log directory (it holds meta.properties) the
 * broker keeps them in ZooKeeper or KRaft's metadata log, so logtool's defaults are not the topic's:
 * a partition there uses the configs given explicitly, those remembered in its logtool.properties,
 * those decoded from the directory's `__cluster_metadata-0` where it is present (the topic's dynamic
 * configs over the cluster-wide dynamic broker defaults, Kafka's defaults for the rest: a topic
 * absent from the metadata is unknown), or Kafka's built-in ones for its internal topics
 * (GroupCoordinator / TransactionStateManager: cleanup.policy=compact, segment.bytes of
 * offsets.topic.segment.bytes / transaction.state.log.segment.bytes, 100 MiB by default); a
 * partition whose config is none of these is skipped with a notice, never defaulted. In logtool's
 * own log directories the defaults apply. The commands (commands/topic-configs.ts) and the
 * LogManager's schedule (manager-schedule.ts) decide by this one rule.
 */
import path from 'node:path';
import { realIO, type FileIO } from '../io.js';
import { LogtoolError } from '../errors.js';
import { CLUSTER_METADATA_DIR, META_PROPERTIES, isBrokerLogDir } from './entries.js';
import { parseProperties, readSmallFile } from '../checkpoint.js';
import { readClusterMetadataConfigs, type ClusterMetadataConfigs, type ConfigMap } from './cluster-metadata-configs.js';
import { loadRememberedConfig } from '../log/log-properties.js';
import { parsePropertyValue, propertyToKey, rememberedConfigKeys, resolveConfig, validateConfig, type LogConfig } from '../config.js';

/** Kafka's internal topics and the configs their coordinators create them with. */
export const INTERNAL_TOPIC_CONFIGS: ReadonlyMap<string, Partial<LogConfig>> = new Map([
  ['__consumer_offsets', { cleanupPolicy: 'compact', segmentBytes: 100 * 1024 * 1024 }],
  ['__transaction_state', { cleanupPolicy: 'compact', segmentBytes: 100 * 1024 * 1024 }],
]);

export type ConfigSource = 'explicit' | 'remembered' | 'metadata' | 'internal' | 'defaults';

export type PartitionConfig = { config: Partial<LogConfig>; source: ConfigSource; broker: boolean } | { skip: string; broker: true };

export const UNKNOWN_CONFIG_NOTICE = "topic config unknown in a broker's log directory (Kafka keeps it outside the partition); give it with --config key=value";

/** True when the partition directory lies in a broker's log directory. */
export const inBrokerLogDir = (partitionDir: string, io: FileIO = realIO): boolean => isBrokerLogDir(path.dirname(path.resolve(partitionDir)), io);

/**
 * The configs for one partition by the rule above. `layers` are those given explicitly, later
 * ones winning, undefined values ignored. A logtool.properties that cannot be read is an error,
 * never "unknown".
 */
export function partitionConfigWith(io: FileIO, dir: string, topic: string, ...layers: Partial<LogConfig>[]): PartitionConfig {
  const explicit: Partial<LogConfig> = {};
  for (const layer of layers) for (const [k, v] of Object.entries(layer)) if (v !== undefined) (explicit as Record<string, unknown>)[k] = v;
  const isGiven = Object.keys(explicit).length > 0;
  if (!inBrokerLogDir(dir, io)) return { config: explicit, source: isGiven ? 'explicit' : 'defaults', broker: false };
  const remembered = loadRememberedConfig(io, dir);
  const internal = INTERNAL_TOPIC_CONFIGS.get(topic);
  const metadata = metadataTopicConfig(path.dirname(path.resolve(dir)), topic, io);
  const config = { ...internal, ...metadata, ...remembered, ...explicit };
  if (isGiven) return { config, source: 'explicit', broker: true };
  if (Object.keys(remembered).length > 0) return { config, source: 'remembered', broker: true };
  if (metadata) return { config, source: 'metadata', broker: true };
  if (internal) return { config, source: 'internal', broker: true };
  return { skip: UNKNOWN_CONFIG_NOTICE, broker: true };
}

/** partitionConfigWith on the real file system (the commands' form). */
export function partitionConfig(dir: string, topic: string, ...layers: Partial<LogConfig>[]): PartitionConfig {
  return partitionConfigWith(realIO, dir, topic, ...layers);
}

/**
 * The topic config names logtool knows, and the broker config that is their highest-priority
 * server synonym (ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS: the names a dynamic broker
 * config may set, DynamicLogConfig.ReconfigurableConfigs).
 */
const BROKER_SYNONYMS: ReadonlyMap<string, string> = new Map([
  ['segment.bytes', 'log.segment.bytes'],
  ['segment.ms', 'log.roll.ms'],
  ['segment.index.bytes', 'log.index.size.max.bytes'],
  ['index.interval.bytes', 'log.index.interval.bytes'],
  ['max.message.bytes', 'message.max.bytes'],
  ['retention.ms', 'log.retention.ms'],
  ['retention.bytes', 'log.retention.bytes'],
  ['cleanup.policy', 'log.cleanup.policy'],
  ['delete.retention.ms', 'log.cleaner.delete.retention.ms'],
  ['min.compaction.lag.ms', 'log.cleaner.min.compaction.lag.ms'],
  ['min.cleanable.dirty.ratio', 'log.cleaner.min.cleanable.ratio'],
  ['max.compaction.lag.ms', 'log.cleaner.max.compaction.lag.ms'],
  ['file.delete.delay.ms', 'log.segment.delete.delay.ms'],
]);

/** Decoded once per log directory and process; undefined where the directory holds no __cluster_metadata-0. */
const metadataByLogDir = new Map<string, ClusterMetadataConfigs | undefined>();

function clusterMetadataOf(logDir: string, io: FileIO): ClusterMetadataConfigs | undefined {
  if (!metadataByLogDir.has(logDir)) {
    const metaDir = path.join(logDir, CLUSTER_METADATA_DIR);
    metadataByLogDir.set(logDir, io.stat(metaDir)?.isDirectory ? readClusterMetadataConfigs(metaDir, io) : undefined);
  }
  return metadataByLogDir.get(logDir);
}

/**
 * A topic's configs from the log directory's metadata: the cluster-wide dynamic broker defaults,
 * this broker's own over them (by their broker names), then the topic's own; undefined when there
 * is no metadata or it does not know the topic. Configs logtool does not use (compression.type, min.insync.replicas …) are left out.
 */
export function metadataTopicConfig(logDir: string, topic: string, io: FileIO = realIO): Partial<LogConfig> | undefined {
  const md = clusterMetadataOf(logDir, io);
  const own = md?.topics.get(topic);
  if (!md || !own) return undefined;
  const file = path.join(logDir, CLUSTER_METADATA_DIR);
  // DynamicBrokerConfig: this broker's own dynamic configs (by its node.id) over the cluster default.
  const nodeId = brokerNodeId(logDir, io);
  const layers: [string, ConfigMap | undefined][] = [
    ['the cluster default', md.brokers.get('')],
    [`broker ${nodeId}`, nodeId === undefined ? undefined : md.brokers.get(nodeId)],
  ];
  let config: Partial<LogConfig> = {};
  for (const [whose, brokerConfigs] of layers) {
    const fromBroker: ConfigMap = new Map();
    for (const [name, brokerName] of BROKER_SYNONYMS) {
      const v = brokerConfigs?.get(brokerName);
      if (v !== undefined) fromBroker.set(name, v);
    }
    config = { ...config, ...kafkaConfigs(fromBroker, file, whose) };
  }
  return { ...config, ...kafkaConfigs(own, file, `topic ${topic}`) };
}

/** The broker's id from the log directory's meta.properties (node.id in KRaft, broker.id before). */
function brokerNodeId(logDir: string, io: FileIO): string | undefined {
  const data = readSmallFile(io, path.join(logDir, META_PROPERTIES));
  if (!data) return undefined;
  const props = parseProperties(data.toString('utf8'));
  return props.get('node.id') ?? props.get('broker.id');
}

function kafkaConfigs(configs: ConfigMap, file: string, whose: string): Partial<LogConfig> {
  const out: Partial<LogConfig> = {};
  for (const [name, text] of configs) {
    const key = propertyToKey(name);
    if (!key || !rememberedConfigKeys.includes(key)) continue;
    try {
      Object.assign(out, validateConfig({ [key]: parsePropertyValue(key, text) }));
    } catch (err) {
      if (!(err instanceof LogtoolError)) throw err;
      throw new LogtoolError('corrupt', `${name}=${text} of ${whose} in the metadata log cannot be used: ${err.message}`, { file });
    }
  }
  return out;
}

/** The configs a partition will be opened with, without opening it (remembered ones under the given). */
export function effectiveConfig(dir: string, pc: { config: Partial<LogConfig> }, io: FileIO = realIO): LogConfig {
  return resolveConfig(loadRememberedConfig(io, dir), pc.config);
}

/** The cleanup policy a partition's listing shows: its known config's, else `unknown` in a broker's directory. */
export function cleanupPolicyOf(dir: string, topic: string, io: FileIO = realIO): string {
  let pc: PartitionConfig;
  try {
    pc = partitionConfigWith(io, dir, topic);
  } catch {
    return 'unknown';
  }
  if ('skip' in pc) return 'unknown';
  if (pc.broker) return pc.config.cleanupPolicy ?? 'delete';
  try {
    return loadRememberedConfig(io, dir).cleanupPolicy ?? 'delete';
  } catch {
    return 'unknown';
  }
}
