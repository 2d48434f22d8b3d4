/**
 * The one config table (src/engine/config.ts, kafka-format.md §17): defaults, validation, text
 * parsing, the remembered set and cleanup.policy all derive from it and agree with each other.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_PROPERTIES, cleanupPolicy, configProperty, defaultLogConfig, parsePropertyValue, propertyToKey, rememberedConfigKeys, resolveConfig, validateConfig, type LogConfig } from '../../src/engine/config.js';
import { loadRememberedConfig, rememberConfig, PROPERTIES_FILE } from '../../src/engine/log/log-properties.js';
import { realIO } from '../../src/engine/io.js';

const keys = Object.keys(CONFIG_PROPERTIES) as (keyof LogConfig)[];

describe('config table', () => {
  it('every default is valid, and its text form parses back to it under its own name', () => {
    expect(keys.length).toBe(Object.keys(defaultLogConfig).length);
    for (const k of keys) {
      const p = configProperty(k);
      expect(defaultLogConfig[k]).toBe(p.default);
      expect(() => validateConfig({ [k]: p.default })).not.toThrow();
      expect(propertyToKey(p.name)).toBe(k);
      expect(parsePropertyValue(k, String(p.default))).toBe(p.default);
    }
  });

  it('enforces each row bound with a message naming the property', () => {
    for (const k of keys) {
      const p = configProperty(k);
      if (p.min !== undefined) expect(() => resolveConfig({ [k]: p.min! - 1 })).toThrow(`${p.name} must be at least ${p.min}, not ${p.min - 1}`);
      if (p.max !== undefined) expect(() => resolveConfig({ [k]: p.max!.value + 1 })).toThrow(`${p.name} must fit in ${p.max.says}`);
    }
    expect(() => resolveConfig({ minCleanableDirtyRatio: 1.5 })).toThrow('min.cleanable.dirty.ratio must be a number from 0 to 1, not "1.5"');
    expect(() => resolveConfig({ flushMode: 'never' as never })).toThrow('flush.mode must be sync, async or buffered, not "never"');
  });

  it('remembers exactly the topic configs, in the table order, and reads them back', () => {
    expect(rememberedConfigKeys).toEqual(keys.filter((k) => configProperty(k).remembered));
    expect(rememberedConfigKeys).not.toContain('flushMode');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logtool-config-'));
    try {
      rememberConfig(realIO, dir, {}, { flushMode: 'async', segmentBytes: 4096, cleanupPolicy: 'compact', minCleanableDirtyRatio: 0.25 });
      const text = fs.readFileSync(path.join(dir, PROPERTIES_FILE), 'utf8');
      expect(text.trimEnd().split('\n').slice(1)).toEqual(['segment.bytes=4096', 'cleanup.policy=compact', 'min.cleanable.dirty.ratio=0.25']);
      expect(loadRememberedConfig(realIO, dir)).toEqual({ segmentBytes: 4096, cleanupPolicy: 'compact', minCleanableDirtyRatio: 0.25 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('parses cleanup.policy once into a typed value', () => {
    expect(cleanupPolicy('delete')).toEqual({ delete: true, compact: false });
    expect(cleanupPolicy(' compact , delete')).toEqual({ delete: true, compact: true });
    expect(() => cleanupPolicy('compact,forever')).toThrow('cleanup.policy must be delete, compact or "compact,delete"');
    expect(() => resolveConfig({ cleanupPolicy: '' })).toThrow('cleanup.policy must be');
  });
});
