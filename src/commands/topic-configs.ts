/**
 * Which topic configs apply to a partition (kafka-format.md: topic configs live outside the
 * partition directory). In a broker's log directory (it holds meta.properties) the broker keeps
 * them in ZooKeeper or KRaft's metadata log, so logtool's defaults are not the topic's: a partition
 * there uses the configs given explicitly (`--config key=value` or the command's flags), those
 * remembered in its logtool.properties, or Kafka's built-in ones for its internal topics
 * (GroupCoordinator / TransactionStateManager: cleanup.policy=compact, segment.bytes of
 * offsets.topic.segment.bytes / transaction.state.log.segment.bytes, 100 MiB by default); a
 * partition whose config is none of these is skipped with a notice, never defaulted. In logtool's
 * own log directories the defaults apply, as for every other command.
 */
import path from 'node:path';
import { Option, type Command } from 'commander';
import { realIO } from '../engine/io.js';
import { LogtoolError } from '../engine/errors.js';
import { isBrokerLogDir } from '../engine/logdir/entries.js';
import { loadRememberedConfig } from '../engine/log/log-properties.js';
import { parsePropertyValue, propertyToKey, rememberedConfigKeys, resolveConfig, validateConfig, type LogConfig } from '../engine/config.js';

/** Kafka's internal topics and the configs their coordinators create them with. */
export const INTERNAL_TOPIC_CONFIGS: ReadonlyMap<string, Partial<LogConfig>> = new Map([
  ['__consumer_offsets', { cleanupPolicy: 'compact', segmentBytes: 100 * 1024 * 1024 }],
  ['__transaction_state', { cleanupPolicy: 'compact', segmentBytes: 100 * 1024 * 1024 }],
]);

export type ConfigSource = 'explicit' | 'remembered' | 'internal' | 'defaults';

export type PartitionConfig = { config: Partial<LogConfig>; source: ConfigSource; broker: boolean } | { skip: string; broker: true };

export const UNKNOWN_CONFIG_NOTICE = "topic config unknown in a broker's log directory (Kafka keeps it outside the partition); give it with --config key=value";

/** `--config key=value`, repeatable, Kafka's property names (`retention.ms=86400000`). */
export function addConfigOption(cmd: Command): Command {
  return cmd.addOption(
    new Option('--config <key=value>', "a topic config by Kafka's property name (repeatable), e.g. cleanup.policy=compact; needed in a broker's log directory")
      .argParser((text: string, previous: Partial<LogConfig> | undefined) => ({ ...previous, ...parseConfigAssignment(text) })),
  );
}

export function parseConfigAssignment(text: string): Partial<LogConfig> {
  const eq = text.indexOf('=');
  const name = eq > 0 ? text.slice(0, eq).trim() : '';
  const key = propertyToKey(name);
  if (!key || !rememberedConfigKeys.includes(key)) throw new LogtoolError('usage', `--config takes a topic config as name=value (for example retention.ms=86400000), not "${text}"`);
  return validateConfig({ [key]: parsePropertyValue(key, text.slice(eq + 1)) });
}

/** True when the partition directory lies in a broker's log directory. */
export const inBrokerLogDir = (partitionDir: string): boolean => isBrokerLogDir(path.dirname(path.resolve(partitionDir)));

/**
 * The configs for one partition by the rule above. `layers` are those given on the command line,
 * later ones winning, undefined values ignored. A logtool.properties that cannot be read is an
 * error, never "unknown".
 */
export function partitionConfig(dir: string, topic: string, ...layers: Partial<LogConfig>[]): PartitionConfig {
  const explicit: Partial<LogConfig> = {};
  for (const layer of layers) for (const [k, v] of Object.entries(layer)) if (v !== undefined) (explicit as Record<string, unknown>)[k] = v;
  const isGiven = Object.keys(explicit).length > 0;
  if (!inBrokerLogDir(dir)) return { config: explicit, source: isGiven ? 'explicit' : 'defaults', broker: false };
  const remembered = loadRememberedConfig(realIO, dir);
  const internal = INTERNAL_TOPIC_CONFIGS.get(topic);
  const config = { ...internal, ...remembered, ...explicit };
  if (isGiven) return { config, source: 'explicit', broker: true };
  if (Object.keys(remembered).length > 0) return { config, source: 'remembered', broker: true };
  if (internal) return { config, source: 'internal', broker: true };
  return { skip: UNKNOWN_CONFIG_NOTICE, broker: true };
}

/** The configs a partition will be opened with, without opening it (remembered ones under the given). */
export function effectiveConfig(dir: string, pc: { config: Partial<LogConfig> }): LogConfig {
  return resolveConfig(loadRememberedConfig(realIO, dir), pc.config);
}

/** The cleanup policy a partition's listing shows: its known config's, else `unknown` in a broker's directory. */
export function cleanupPolicyOf(dir: string, topic: string): string {
  let pc: PartitionConfig;
  try {
    pc = partitionConfig(dir, topic);
  } catch {
    return 'unknown';
  }
  if ('skip' in pc) return 'unknown';
  if (pc.broker) return pc.config.cleanupPolicy ?? 'delete';
  try {
    return loadRememberedConfig(realIO, dir).cleanupPolicy ?? 'delete';
  } catch {
    return 'unknown';
  }
}
