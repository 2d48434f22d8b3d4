/**
 * Every limit and interval of a log, with units in the names and Kafka's defaults
 * (kafka-format.md §17), in ONE table (CONFIG_PROPERTIES): each field's property name (Kafka's
 * topic config name, `segment.bytes`…, or logtool's own in the same style), default, unit, bounds,
 * and whether it is remembered in `<partition>/logtool.properties`. Defaults, validation, parsing
 * from text (the properties file, the command line), the remembered set and the CLI's options
 * (src/commands/shared.ts) are all derived from it. cleanup.policy is parsed in one place
 * (cleanupPolicy) into a typed value.
 */
import { InvalidArgumentError } from './errors.js';

export type FlushMode = 'sync' | 'async' | 'buffered';

/** What a property's value is, which decides how it is parsed from text and validated. */
export type ConfigUnit = 'bytes' | 'ms' | 'records' | 'ratio' | 'flush-mode' | 'cleanup-policy' | 'boolean';

export interface ConfigProperty {
  /** Property name: Kafka's topic config name, or (kafka: false) logtool's own in the same style. */
  readonly name: string;
  /** Kafka has this topic config. */
  readonly kafka: boolean;
  /** Kafka's default (logtool's, for its own properties); of the unit's type. */
  readonly default: number | string | boolean;
  readonly unit: ConfigUnit;
  /** Inclusive lower bound (integer units). */
  readonly min?: number;
  /** Inclusive upper bound (integer units), and how a message names it. */
  readonly max?: { readonly value: number; readonly says: string };
  /**
   * Remembered in logtool.properties when a writing command is given it (topic configs). Flush
   * knobs are per invocation and never remembered, so one `--flush async` cannot silently weaken
   * later appends.
   */
  readonly remembered: boolean;
  /** A per-invocation command-line option with this help (remembered properties get a generated one). */
  readonly help?: string;
}

const INT32 = 0x7fffffff;
const DAY_MS = 24 * 3600 * 1000;
const MIB = 1024 * 1024;

/** The one config table; its order is the order of options and of remembered properties. */
export const CONFIG_PROPERTIES = {
  // Topic configs, remembered.
  /** segment.bytes: roll when the active segment would exceed this. */
  segmentBytes: { name: 'segment.bytes', kafka: true, default: 1024 * MIB, unit: 'bytes', min: 14, max: { value: INT32, says: 'int32 (at most 2147483647)' }, remembered: true },
  /** segment.ms: roll when the incoming batch's timestamp is this far past the segment's first. */
  segmentMs: { name: 'segment.ms', kafka: true, default: 7 * DAY_MS, unit: 'ms', min: 1, remembered: true },
  /** segment.index.bytes: preallocated size of each index file. */
  segmentIndexBytes: { name: 'segment.index.bytes', kafka: true, default: 10 * MIB, unit: 'bytes', min: 12, max: { value: INT32, says: 'int32' }, remembered: true },
  /** index.interval.bytes: bytes between offset-index entries. */
  indexIntervalBytes: { name: 'index.interval.bytes', kafka: true, default: 4096, unit: 'bytes', min: 0, remembered: true },
  /** max.message.bytes: largest batch accepted on append (bytes, incl. 12-byte overhead). */
  maxMessageBytes: { name: 'max.message.bytes', kafka: true, default: 1_048_588, unit: 'bytes', min: 0, remembered: true },
  /** retention.ms (−1 = infinite). */
  retentionMs: { name: 'retention.ms', kafka: true, default: 7 * DAY_MS, unit: 'ms', remembered: true },
  /** retention.bytes (−1 = infinite). */
  retentionBytes: { name: 'retention.bytes', kafka: true, default: -1, unit: 'bytes', remembered: true },
  /** cleanup.policy: delete, compact or both (parsed by cleanupPolicy). */
  cleanupPolicy: { name: 'cleanup.policy', kafka: true, default: 'delete', unit: 'cleanup-policy', remembered: true },
  /** delete.retention.ms: how long tombstones survive after cleaning. */
  deleteRetentionMs: { name: 'delete.retention.ms', kafka: true, default: 86_400_000, unit: 'ms', remembered: true },
  /** min.compaction.lag.ms */
  minCompactionLagMs: { name: 'min.compaction.lag.ms', kafka: true, default: 0, unit: 'ms', remembered: true },
  /** min.cleanable.dirty.ratio: compact once dirty bytes / (clean + dirty) exceed this (a number in [0, 1]). */
  minCleanableDirtyRatio: { name: 'min.cleanable.dirty.ratio', kafka: true, default: 0.5, unit: 'ratio', remembered: true },
  /** max.compaction.lag.ms: compact once a dirty record is this old (Number.MAX_SAFE_INTEGER = never). */
  maxCompactionLagMs: { name: 'max.compaction.lag.ms', kafka: true, default: Number.MAX_SAFE_INTEGER, unit: 'ms', min: 1, remembered: true },
  /** file.delete.delay.ms: how long `.deleted` files are kept by an open engine. */
  fileDeleteDelayMs: { name: 'file.delete.delay.ms', kafka: true, default: 60_000, unit: 'ms', remembered: true },
  // Flush knobs: per invocation.
  /** logtool: flush mode (sync | async | buffered). */
  flushMode: { name: 'flush.mode', kafka: false, default: 'sync', unit: 'flush-mode', remembered: false, help: 'flush mode: sync (ack after fdatasync), async (ack after write), buffered (ack when buffered)' },
  /** logtool: sync group commit closes after its oldest append waited this long. */
  maxWaitMs: { name: 'group.commit.max.wait.ms', kafka: false, default: 2, unit: 'ms', min: 0, remembered: false, help: 'sync: a group commit closes after its oldest append waited this long' },
  /** logtool: sync group commit closes at this many bytes. */
  maxGroupBytes: { name: 'group.commit.max.bytes', kafka: false, default: 4 * MIB, unit: 'bytes', min: 1, remembered: false, help: 'sync: a group commit closes at this many bytes' },
  /** logtool: sync group commit closes at this many records. */
  maxGroupRecords: { name: 'group.commit.max.records', kafka: false, default: 100_000, unit: 'records', min: 1, remembered: false, help: 'sync: a group commit closes at this many records' },
  /** logtool: an unflushed sync append resolves as timed out after this long. */
  syncTimeoutMs: { name: 'sync.timeout.ms', kafka: false, default: 5000, unit: 'ms', min: 1, remembered: false, help: 'sync: report an append as timed out after this long' },
  /** flush.ms: async mode flushes at least this often. */
  flushMs: { name: 'flush.ms', kafka: true, default: 1000, unit: 'ms', min: 1, remembered: false, help: 'async/buffered: flush at least this often' },
  /** flush.messages: async mode flushes when this many records are unflushed. */
  flushMessages: { name: 'flush.messages', kafka: true, default: Number.MAX_SAFE_INTEGER, unit: 'records', min: 1, remembered: false, help: 'async/buffered: flush when this many records are unflushed' },
  /** logtool: async mode flushes when this many bytes are unflushed. */
  flushBytes: { name: 'flush.bytes', kafka: false, default: 4 * MIB, unit: 'bytes', min: 1, remembered: false, help: 'async/buffered: flush when this many bytes are unflushed' },
  /** logtool: buffered mode commits its write buffer to the file this often. */
  commitIntervalMs: { name: 'commit.interval.ms', kafka: false, default: 200, unit: 'ms', min: 1, remembered: false, help: 'buffered: commit the write buffer this often' },
  /** logtool: buffered mode commits when the write buffer holds this many bytes. */
  commitBytes: { name: 'commit.bytes', kafka: false, default: MIB, unit: 'bytes', min: 1, remembered: false, help: 'buffered: commit when the write buffer holds this many bytes' },
  /** logtool: buffered mode joins consecutive plain appends into one batch of up to this many bytes (0: a batch per append; log/open-batch.ts). */
  batchBytes: { name: 'batch.bytes', kafka: false, default: 16 * 1024, unit: 'bytes', min: 0, remembered: false, help: "buffered: join consecutive plain appends into batches of up to this many bytes (0: one per append), as a Kafka producer's batch.size does" },
  // Library only.
  /** logtool: zeros kept written ahead of the active segment's end (0: none; -1: the flush mode's default, segment/preallocation.ts). */
  preallocateBytes: { name: 'segment.preallocate.bytes', kafka: false, default: -1, unit: 'bytes', min: -1, max: { value: 64 * MIB, says: '64 MiB' }, remembered: false },
  /** logtool: sync group commit closes as soon as no more appends are queued. */
  flushWhenQueueEmpty: { name: 'group.commit.flush.when.queue.empty', kafka: false, default: true, unit: 'boolean', remembered: false },
  /** logtool: a lone sync producer's fdatasync runs on the event loop while recent ones took at most this (0: never; flush/blocking-fsync.ts). */
  syncBlockingFsyncMaxMs: { name: 'sync.blocking.fsync.max.ms', kafka: false, default: 1, unit: 'ms', min: 0, remembered: false },
} as const satisfies Record<string, ConfigProperty>;

/** The type of a value of each unit. */
type UnitValue<U extends ConfigUnit> = U extends 'flush-mode' ? FlushMode : U extends 'cleanup-policy' ? string : U extends 'boolean' ? boolean : number;

/** Every limit and interval of a log: one field per row of CONFIG_PROPERTIES, typed by its unit. */
export type LogConfig = { -readonly [K in keyof typeof CONFIG_PROPERTIES]: UnitValue<(typeof CONFIG_PROPERTIES)[K]['unit']> };

const configKeys = Object.keys(CONFIG_PROPERTIES) as (keyof LogConfig)[];
/** A row of the table, as a ConfigProperty. */
export const configProperty = (k: keyof LogConfig): ConfigProperty => CONFIG_PROPERTIES[k];

export const defaultLogConfig: Readonly<LogConfig> = Object.freeze(Object.fromEntries(configKeys.map((k) => [k, configProperty(k).default])) as unknown as LogConfig);

/** Kafka-style property name for each config field. */
export const propertyNames = Object.fromEntries(configKeys.map((k) => [k, configProperty(k).name])) as Record<keyof LogConfig, string>;

/** Kafka topic configs: remembered in logtool.properties when a writing command is given them. */
export const rememberedConfigKeys: readonly (keyof LogConfig)[] = configKeys.filter((k) => configProperty(k).remembered);

/** Per-invocation knobs with a command-line option (the flush knobs). */
export const invocationConfigKeys: readonly (keyof LogConfig)[] = configKeys.filter((k) => configProperty(k).help !== undefined);

const keyByName = new Map(configKeys.map((k) => [configProperty(k).name, k]));

export function propertyToKey(name: string): keyof LogConfig | undefined {
  return keyByName.get(name);
}

/** cleanup.policy parsed: `delete`, `compact` or both (comma-separated). */
export interface CleanupPolicy {
  readonly delete: boolean;
  readonly compact: boolean;
}

/** Parses cleanup.policy; an invalid-argument error naming the property when it is neither. */
export function cleanupPolicy(text: string): CleanupPolicy {
  const parts = text.split(',').map((s) => s.trim());
  if (!parts.every((p) => p === 'delete' || p === 'compact')) throw new InvalidArgumentError(['cleanupPolicy'], `${propertyNames.cleanupPolicy} must be delete, compact or "compact,delete"`);
  return { delete: parts.includes('delete'), compact: parts.includes('compact') };
}

/** A message when `v` is not a valid value of the property, else undefined. */
function invalidValue(p: ConfigProperty, v: unknown): string | undefined {
  const name = p.name;
  switch (p.unit) {
    case 'flush-mode':
      return v !== 'sync' && v !== 'async' && v !== 'buffered' ? `${name} must be sync, async or buffered, not "${String(v)}"` : undefined;
    case 'cleanup-policy':
      cleanupPolicy(String(v));
      return undefined;
    case 'boolean':
      return typeof v !== 'boolean' ? `${name} must be true or false` : undefined;
    case 'ratio':
      return typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1 ? `${name} must be a number from 0 to 1, not "${String(v)}"` : undefined;
  }
  if (typeof v !== 'number' || !Number.isFinite(v) || !Number.isInteger(v)) return `${name} must be an integer, not "${String(v)}"`;
  if (p.min !== undefined && v < p.min) return `${name} must be at least ${p.min}, not ${v}`;
  if (p.max !== undefined && v > p.max.value) return `${name} must fit in ${p.max.says}`;
  return undefined;
}

/** Validates a (partial) config at the boundary; throws an invalid-argument error naming the property (options: the LogConfig key). */
export function validateConfig(partial: Partial<LogConfig>): Partial<LogConfig> {
  for (const [k, v] of Object.entries(partial) as [keyof LogConfig, unknown][]) {
    if (v === undefined) continue;
    const p = (CONFIG_PROPERTIES as Record<string, ConfigProperty | undefined>)[k];
    if (!p) throw new InvalidArgumentError([k], `unknown config ${k}`);
    const message = invalidValue(p, v);
    if (message) throw new InvalidArgumentError([k], message);
  }
  return partial;
}

export function resolveConfig(...layers: (Partial<LogConfig> | undefined)[]): LogConfig {
  const out: LogConfig = { ...defaultLogConfig };
  for (const layer of layers) {
    if (!layer) continue;
    validateConfig(layer);
    for (const [k, v] of Object.entries(layer)) if (v !== undefined) (out as unknown as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** Parses a property value given as text (from a file or the command line); validateConfig checks it. */
export function parsePropertyValue(key: keyof LogConfig, text: string): LogConfig[keyof LogConfig] {
  const t = text.trim();
  const p = configProperty(key);
  switch (p.unit) {
    case 'flush-mode':
    case 'cleanup-policy':
      return t as never;
    case 'boolean':
      if (t === 'true') return true;
      if (t === 'false') return false;
      throw new InvalidArgumentError([key], `${p.name} must be true or false, not "${t}"`);
    case 'ratio':
      if (!/^(\d+\.?\d*|\.\d+)$/.test(t)) throw new InvalidArgumentError([key], `${p.name} must be a number from 0 to 1, not "${t}"`);
      return Number(t);
  }
  if (!/^-?\d+$/.test(t)) throw new InvalidArgumentError([key], `${p.name} must be an integer, not "${t}"`);
  return Number(t);
}
