/**
 * Every limit and interval of a log, with units in the names and Kafka's defaults
 * (kafka-format.md §17). Each field maps to a Kafka topic config name (`segment.bytes`…), which is
 * how the CLI accepts them (`--segment-bytes`) and how they are remembered in
 * `<partition>/logtool.properties`.
 */
import { LogtoolError } from './errors.js';

export type FlushMode = 'sync' | 'async' | 'buffered';

export interface LogConfig {
  /** segment.bytes: roll when the active segment would exceed this. */
  segmentBytes: number;
  /** segment.ms: roll when the incoming batch's timestamp is this far past the segment's first. */
  segmentMs: number;
  /** segment.index.bytes: preallocated size of each index file. */
  segmentIndexBytes: number;
  /** index.interval.bytes: bytes between offset-index entries. */
  indexIntervalBytes: number;
  /** retention.ms (−1 = infinite). */
  retentionMs: number;
  /** retention.bytes (−1 = infinite). */
  retentionBytes: number;
  /** file.delete.delay.ms: how long `.deleted` files are kept by an open engine. */
  fileDeleteDelayMs: number;
  /** delete.retention.ms: how long tombstones survive after cleaning. */
  deleteRetentionMs: number;
  /** min.compaction.lag.ms */
  minCompactionLagMs: number;
  /** min.cleanable.dirty.ratio: compact once dirty bytes / (clean + dirty) exceed this (a number in [0, 1]). */
  minCleanableDirtyRatio: number;
  /** max.compaction.lag.ms: compact once a dirty record is this old (Number.MAX_SAFE_INTEGER = never). */
  maxCompactionLagMs: number;
  /** cleanup.policy: delete, compact or both. */
  cleanupPolicy: string;
  /** max.message.bytes: largest batch accepted on append (bytes, incl. 12-byte overhead). */
  maxMessageBytes: number;
  /** logtool: flush mode (sync | async | buffered). */
  flushMode: FlushMode;
  /** flush.ms: async mode flushes at least this often. */
  flushMs: number;
  /** flush.messages: async mode flushes when this many records are unflushed. */
  flushMessages: number;
  /** logtool: async mode flushes when this many bytes are unflushed. */
  flushBytes: number;
  /** logtool: sync group commit closes after its oldest append waited this long. */
  maxWaitMs: number;
  /** logtool: sync group commit closes at this many bytes. */
  maxGroupBytes: number;
  /** logtool: sync group commit closes at this many records. */
  maxGroupRecords: number;
  /** logtool: sync group commit closes as soon as no more appends are queued. */
  flushWhenQueueEmpty: boolean;
  /** logtool: an unflushed sync append resolves as timed out after this long. */
  syncTimeoutMs: number;
  /** logtool: buffered mode commits its write buffer to the file this often. */
  commitIntervalMs: number;
  /** logtool: buffered mode commits when the write buffer holds this many bytes. */
  commitBytes: number;
}

export const defaultLogConfig: Readonly<LogConfig> = Object.freeze({
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 3600 * 1000,
  segmentIndexBytes: 10 * 1024 * 1024,
  indexIntervalBytes: 4096,
  retentionMs: 7 * 24 * 3600 * 1000,
  retentionBytes: -1,
  fileDeleteDelayMs: 60_000,
  deleteRetentionMs: 86_400_000,
  minCompactionLagMs: 0,
  minCleanableDirtyRatio: 0.5,
  maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
  cleanupPolicy: 'delete',
  maxMessageBytes: 1_048_588,
  flushMode: 'sync',
  flushMs: 1000,
  flushMessages: Number.MAX_SAFE_INTEGER,
  flushBytes: 4 * 1024 * 1024,
  maxWaitMs: 2,
  maxGroupBytes: 4 * 1024 * 1024,
  maxGroupRecords: 100_000,
  flushWhenQueueEmpty: true,
  syncTimeoutMs: 5000,
  commitIntervalMs: 200,
  commitBytes: 1024 * 1024,
});

/** Kafka-style property name for each config field. */
export const propertyNames: Record<keyof LogConfig, string> = {
  segmentBytes: 'segment.bytes',
  segmentMs: 'segment.ms',
  segmentIndexBytes: 'segment.index.bytes',
  indexIntervalBytes: 'index.interval.bytes',
  retentionMs: 'retention.ms',
  retentionBytes: 'retention.bytes',
  fileDeleteDelayMs: 'file.delete.delay.ms',
  deleteRetentionMs: 'delete.retention.ms',
  minCompactionLagMs: 'min.compaction.lag.ms',
  minCleanableDirtyRatio: 'min.cleanable.dirty.ratio',
  maxCompactionLagMs: 'max.compaction.lag.ms',
  cleanupPolicy: 'cleanup.policy',
  maxMessageBytes: 'max.message.bytes',
  flushMode: 'flush.mode',
  flushMs: 'flush.ms',
  flushMessages: 'flush.messages',
  flushBytes: 'flush.bytes',
  maxWaitMs: 'group.commit.max.wait.ms',
  maxGroupBytes: 'group.commit.max.bytes',
  maxGroupRecords: 'group.commit.max.records',
  flushWhenQueueEmpty: 'group.commit.flush.when.queue.empty',
  syncTimeoutMs: 'sync.timeout.ms',
  commitIntervalMs: 'commit.interval.ms',
  commitBytes: 'commit.bytes',
};

const minimums: Partial<Record<keyof LogConfig, number>> = {
  segmentBytes: 14,
  segmentIndexBytes: 12,
  indexIntervalBytes: 0,
  segmentMs: 1,
  maxMessageBytes: 0,
  maxWaitMs: 0,
  maxGroupBytes: 1,
  maxGroupRecords: 1,
  syncTimeoutMs: 1,
  commitIntervalMs: 1,
  commitBytes: 1,
  flushMs: 1,
  flushMessages: 1,
  flushBytes: 1,
  maxCompactionLagMs: 1,
};

/**
 * Kafka topic configs: remembered in logtool.properties when a writing command is given them.
 * Flush knobs are per invocation and never remembered, so one `--flush async` cannot silently
 * weaken later appends.
 */
export const rememberedConfigKeys: readonly (keyof LogConfig)[] = [
  'segmentBytes',
  'segmentMs',
  'segmentIndexBytes',
  'indexIntervalBytes',
  'maxMessageBytes',
  'retentionMs',
  'retentionBytes',
  'cleanupPolicy',
  'deleteRetentionMs',
  'minCompactionLagMs',
  'minCleanableDirtyRatio',
  'maxCompactionLagMs',
  'fileDeleteDelayMs',
];

export function propertyToKey(name: string): keyof LogConfig | undefined {
  for (const [k, v] of Object.entries(propertyNames)) if (v === name) return k as keyof LogConfig;
  return undefined;
}

/** Validates a (partial) config at the boundary; throws a usage error naming the property. */
export function validateConfig(partial: Partial<LogConfig>): Partial<LogConfig> {
  for (const [k, v] of Object.entries(partial) as [keyof LogConfig, unknown][]) {
    if (v === undefined) continue;
    const name = propertyNames[k];
    if (!name) throw new LogtoolError('usage', `unknown config ${k}`);
    if (k === 'flushMode') {
      if (v !== 'sync' && v !== 'async' && v !== 'buffered') throw new LogtoolError('usage', `${name} must be sync, async or buffered, not "${String(v)}"`);
      continue;
    }
    if (k === 'cleanupPolicy') {
      const parts = String(v).split(',').map((s) => s.trim());
      if (!parts.every((p) => p === 'delete' || p === 'compact')) throw new LogtoolError('usage', `${name} must be delete, compact or "compact,delete"`);
      continue;
    }
    if (k === 'flushWhenQueueEmpty') {
      if (typeof v !== 'boolean') throw new LogtoolError('usage', `${name} must be true or false`);
      continue;
    }
    if (k === 'minCleanableDirtyRatio') {
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1) throw new LogtoolError('usage', `${name} must be a number from 0 to 1, not "${String(v)}"`);
      continue;
    }
    if (typeof v !== 'number' || !Number.isFinite(v) || !Number.isInteger(v)) throw new LogtoolError('usage', `${name} must be an integer, not "${String(v)}"`);
    const min = minimums[k];
    if (min !== undefined && v < min) throw new LogtoolError('usage', `${name} must be at least ${min}, not ${v}`);
    if (k === 'segmentBytes' && v > 0x7fffffff) throw new LogtoolError('usage', `${name} must fit in int32 (at most 2147483647)`);
    if (k === 'segmentIndexBytes' && v > 0x7fffffff) throw new LogtoolError('usage', `${name} must fit in int32`);
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

/** Parses a property value given as text (from a file or the command line). */
export function parsePropertyValue(key: keyof LogConfig, text: string): LogConfig[keyof LogConfig] {
  const t = text.trim();
  if (key === 'flushMode' || key === 'cleanupPolicy') return t as never;
  if (key === 'flushWhenQueueEmpty') {
    if (t === 'true') return true;
    if (t === 'false') return false;
    throw new LogtoolError('usage', `${propertyNames[key]} must be true or false, not "${t}"`);
  }
  if (key === 'minCleanableDirtyRatio') {
    if (!/^(\d+\.?\d*|\.\d+)$/.test(t)) throw new LogtoolError('usage', `${propertyNames[key]} must be a number from 0 to 1, not "${t}"`);
    return Number(t);
  }
  if (!/^-?\d+$/.test(t)) throw new LogtoolError('usage', `${propertyNames[key]} must be an integer, not "${t}"`);
  return Number(t);
}
