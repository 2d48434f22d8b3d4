/**
 * What every subcommand shares: topic-config flags (Kafka's names in kebab-case), number and time
 * parsing, byte encodings, and opening a log with warnings sent to stderr.
 */
import { isUtf8 } from 'node:buffer';
import { Option, type Command } from 'commander';
import { Log, type LogOptions, defaultLogConfig, type LogConfig } from '../api/log.js';
import { LogtoolError, type Timestamp } from '../api/format.js';
import { configProperty, invocationConfigKeys, parsePropertyValue, propertyNames, rememberedConfigKeys, validateConfig } from '../inspect/log.js';
import { warn } from '../render/output.js';
import { escapeBytes } from '../render/escape.js';
import { toTimestamp } from '../inspect/format.js';
import { decodeBase64, decodeHex } from './text-bytes.js';

/** Topic configs every writing command accepts; remembered in logtool.properties. */
export const TOPIC_CONFIG_KEYS = rememberedConfigKeys;

/** Flush knobs: per invocation, never remembered (the config table's per-invocation rows). */
export const FLUSH_CONFIG_KEYS = invocationConfigKeys;

export const kebab = (camel: string): string => camel.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export function parseInteger(name: string, min = -Infinity) {
  return (text: string): number => {
    if (!/^-?\d+$/.test(text.trim())) throw new LogtoolError('usage', `${name} must be an integer, not "${text}"`);
    const n = Number(text);
    if (!Number.isSafeInteger(n)) throw new LogtoolError('usage', `${name} is out of range: ${text}`);
    if (n < min) throw new LogtoolError('usage', `${name} must be at least ${min}, not ${n}`);
    return n;
  };
}

/** Epoch milliseconds or an ISO-8601 date/time. */
export function parseTime(name: string) {
  return (text: string): number => {
    if (/^-?\d+$/.test(text.trim())) return Number(text);
    const ms = Date.parse(text);
    if (Number.isNaN(ms)) throw new LogtoolError('usage', `${name} must be epoch milliseconds or an ISO-8601 time, not "${text}"`);
    return ms;
  };
}

/**
 * A record timestamp: epoch milliseconds as any int64, kept exact (a bigint beyond ±2^53), or an
 * ISO-8601 time. Integers outside int64 are a usage error.
 */
export function parseTimestamp(name: string) {
  const iso = parseTime(name);
  return (text: string): Timestamp => (/^-?\d+$/.test(text.trim()) ? int64Timestamp(text.trim(), name) : iso(text));
}

/** Decimal digits as an exact int64 Timestamp; a usage error outside int64. */
export function int64Timestamp(digits: string, where: string): Timestamp {
  const n = BigInt(digits);
  if (n !== BigInt.asIntN(64, n)) throw new LogtoolError('usage', `${where}: timestamp ${digits} is outside the int64 range of Kafka timestamps`);
  return toTimestamp(n);
}

export function addTopicConfigOptions(cmd: Command): Command {
  for (const key of TOPIC_CONFIG_KEYS) {
    const name = propertyNames[key];
    const def = defaultLogConfig[key];
    const opt = new Option(`--${kebab(key)} <value>`, `${name} (default ${def}; remembered for later commands)`);
    if (key === 'minCleanableDirtyRatio') opt.argParser((t: string) => validateConfig({ minCleanableDirtyRatio: parsePropertyValue(key, t) as number }).minCleanableDirtyRatio);
    else if (key !== 'cleanupPolicy') opt.argParser(parseInteger(`--${kebab(key)}`));
    cmd.addOption(opt);
  }
  return cmd;
}

/** The flush knobs' options, from the config table (`--flush` for flush.mode, with its choices). */
export function addFlushOptions(cmd: Command): Command {
  for (const key of FLUSH_CONFIG_KEYS) {
    const p = configProperty(key);
    if (key === 'flushMode') cmd.addOption(new Option('--flush <mode>', p.help).choices(['sync', 'async', 'buffered']));
    else cmd.addOption(new Option(`--${kebab(key)} ${p.unit === 'ms' ? '<ms>' : '<n>'}`, p.help).argParser(parseInteger(`--${kebab(key)}`, p.min)));
    if (key === 'syncTimeoutMs') cmd.addOption(new Option('--ack-before-sync', 'sync: acknowledge after write; the data still rides the next group fsync'));
  }
  return cmd;
}

/** Collects the config layers a command was given. */
export function configFromOptions(given: object): Partial<LogConfig> {
  const opts = given as Record<string, unknown>;
  const out: Partial<LogConfig> = {};
  for (const key of TOPIC_CONFIG_KEYS) if (opts[key] !== undefined) (out as Record<string, unknown>)[key] = opts[key];
  return out;
}

export function flushConfigFromOptions(opts: Record<string, unknown>): Partial<LogConfig> {
  const out: Partial<LogConfig> = {};
  if (opts.flush !== undefined) out.flushMode = opts.flush as LogConfig['flushMode'];
  for (const key of FLUSH_CONFIG_KEYS) if (key !== 'flushMode' && opts[key] !== undefined) (out as Record<string, unknown>)[key] = opts[key];
  return out;
}

export interface WarningCounter {
  count: number;
}

/** Opens a log, sending warnings to stderr; counts them so the command can exit 3. */
export function openLog(dir: string, options: LogOptions, counter?: WarningCounter): Log {
  const seen = new Set<string>();
  // Read-only commands use the stable open, so a compaction or retention running in another
  // process is never seen half done.
  const open = options.readOnly ? (d: string, o: LogOptions) => Log.openStableSync(d, o) : (d: string, o: LogOptions) => Log.open(d, o);
  const log = open(dir, {
    ...options,
    onWarning: (w) => {
      // The loader and the reader may both meet the same torn tail: say it once.
      const key = `${w.file}:${w.position ?? ''}`;
      if (seen.has(key)) return;
      seen.add(key);
      if (counter) counter.count++;
      warn(`${w.file}${w.position !== undefined ? ` at byte ${w.position}` : ''}: ${w.message}`);
    },
  });
  // A writable open that repaired anything says so, and the command exits 3 after its own work.
  const r = log.loadReport;
  if (!options.readOnly && r.repaired) {
    const done = [
      [r.truncated.length, `segment(s) truncated (${r.bytesTruncated} bytes)`],
      [r.segmentsDropped.length, 'segment file(s) dropped'],
      [r.swapsCompleted.length, 'interrupted swap(s) completed'],
      [r.indexProblems.length, 'index file(s) repaired'],
      [r.tempFilesRemoved.length, 'leftover file(s) removed'],
      [r.partitionState?.leaderEpochs ? 1 : 0, 'leader-epoch-checkpoint truncated to the log ends'],
      [r.partitionState?.snapshotsRemoved.length ?? 0, 'producer snapshot(s) beyond the log ends removed'],
    ].filter(([n]) => (n as number) > 0);
    warn(`${dir}: the log was repaired when opened: ${done.map(([n, what]) => `${n} ${what}`).join(', ')}`);
    process.exitCode = 3;
  }
  return log;
}

export type Encoding = 'utf8' | 'base64' | 'hex';

export function parseEncoding(text: string): Encoding {
  if (text === 'utf8' || text === 'utf-8') return 'utf8';
  if (text === 'base64' || text === 'hex') return text;
  throw new LogtoolError('usage', `--encoding must be utf8, base64 or hex, not "${text}"`);
}

/**
 * Bytes for a human, on one line: UTF-8 text with controls, backslashes and bytes that are not
 * valid UTF-8 escaped (escapeBytes: `\n \t \r \0 \\`, `\xNN` for the rest).
 */
export function bytesToText(buf: Buffer | null, enc: Encoding, stats?: { nonUtf8: number }): string {
  if (buf === null) return 'null';
  if (enc !== 'utf8') return buf.toString(enc);
  const valid = isUtf8(buf);
  if (!valid && stats) stats.nonUtf8++;
  return escapeBytes(buf, valid);
}

/** Parses a JSON key/value back into bytes (a string in `enc`, or {base64|hex|utf8: string}). */
export function jsonToBytes(v: unknown, enc: Encoding, where: string): Buffer | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return decodeStrict(v, enc, where);
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    for (const e of ['base64', 'hex', 'utf8'] as const) if (typeof o[e] === 'string') return decodeStrict(o[e] as string, e, where);
  }
  throw new LogtoolError('usage', `${where}: expected a string, null, or {"base64": …}`);
}

/**
 * Text in `enc` to bytes, refusing anything Node's decoder would silently drop or truncate
 * ("!!!!" as base64 decodes to nothing, "abzz" as hex to one byte): a usage error instead.
 * The text's UTF-8 bytes are decoded, so a character beyond ASCII is never a digit.
 */
export function decodeStrict(text: string, enc: Encoding, where: string): Buffer {
  if (enc === 'utf8') return Buffer.from(text, 'utf8');
  const bytes = Buffer.from(text, 'utf8');
  const decoded = enc === 'hex' ? decodeHex(bytes, 0, bytes.length) : decodeBase64(bytes, 0, bytes.length);
  if (decoded === undefined) {
    throw new LogtoolError('usage', `${where}: ${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)} is not valid ${enc}`);
  }
  return decoded;
}

export { propertyNames };
