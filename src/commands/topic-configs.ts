/**
 * The command-line side of the topic-config rule (engine/logdir/topic-configs.ts decides which
 * configs apply to a partition; the LogManager's schedule uses the same rule): `--config
 * key=value` with Kafka's property names, and the rule's exports for the commands.
 */
import { Option, type Command } from 'commander';
import { LogtoolError } from '../api/format.js';
import { parsePropertyValue, propertyToKey, rememberedConfigKeys, validateConfig } from '../inspect/log.js';
import type { LogConfig } from '../api/log.js';

export * from '../inspect/topic-configs.js';

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
