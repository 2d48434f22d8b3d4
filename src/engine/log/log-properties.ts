/**
 * Topic configs a writing command was given are remembered in `<partition>/logtool.properties`
 * (Kafka property names, `key=value`), so later commands on the same log honour them without
 * repeating the flags. Kafka keeps topic configs elsewhere and ignores this file.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { LogtoolError } from '../errors.js';
import { parseProperties, formatProperties, readSmallFile, writeFileAtomic } from '../checkpoint.js';
import { parsePropertyValue, propertyNames, propertyToKey, rememberedConfigKeys, validateConfig, type LogConfig } from '../config.js';

export const PROPERTIES_FILE = 'logtool.properties';

export function loadRememberedConfig(io: FileIO, dir: string): Partial<LogConfig> {
  const file = path.join(dir, PROPERTIES_FILE);
  const data = readSmallFile(io, file, 1 << 20);
  if (!data) return {};
  const out: Partial<LogConfig> = {};
  for (const [name, value] of parseProperties(data.toString('utf8'))) {
    const key = propertyToKey(name);
    if (!key) continue; // unknown keys are kept in the file but ignored
    try {
      (out as Record<string, unknown>)[key] = parsePropertyValue(key, value);
    } catch (e) {
      throw new LogtoolError('corrupt', `${name}: ${(e as Error).message}`, { file });
    }
  }
  try {
    validateConfig(out);
  } catch (e) {
    throw new LogtoolError('corrupt', (e as Error).message, { file });
  }
  return out;
}

export function rememberConfig(io: FileIO, dir: string, previous: Partial<LogConfig>, given: Partial<LogConfig>): void {
  const merged: Partial<LogConfig> = { ...previous };
  let changed = false;
  for (const [k, v] of Object.entries(given) as [keyof LogConfig, unknown][]) {
    if (v === undefined || !rememberedConfigKeys.includes(k)) continue;
    if ((merged as Record<string, unknown>)[k] !== v) changed = true;
    (merged as Record<string, unknown>)[k] = v;
  }
  if (!changed) return;
  const props = new Map<string, string>();
  for (const [k, v] of Object.entries(merged) as [keyof LogConfig, unknown][]) props.set(propertyNames[k], String(v));
  writeFileAtomic(io, path.join(dir, PROPERTIES_FILE), formatProperties(props, 'topic configs remembered by logtool; Kafka ignores this file'));
}
