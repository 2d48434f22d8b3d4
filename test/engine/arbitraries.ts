/**
 * fast-check arbitraries and comparison helpers shared by the engine tests (not a test file).
 */
import fc from 'fast-check';
import type { LogRecord, RecordHeader, RecordInput } from '../../src/engine/format/record-batch.js';

/** 2023-11-14T22:13:20Z, the base timestamp of kafka-format.md §19. */
export const T0 = 1_700_000_000_000;

export interface RecordArbOptions {
  /** Largest key / value / header value in bytes. */
  maxBytes?: number;
  /** Allow null header values (kafkajs cannot encode them). */
  nullHeaderValues?: boolean;
  /** Timestamps are T0 ± this many ms. */
  tsSpread?: number;
  maxHeaders?: number;
  /** Header key arbitrary (default: any Unicode string). */
  headerKey?: fc.Arbitrary<string>;
}

/** Random record: binary keys/values (null or empty too), headers with null values, timestamps around T0 (negative deltas too). */
export function recordArb(opts: RecordArbOptions = {}): fc.Arbitrary<RecordInput & { timestamp: number; key: Buffer | null; headers: RecordHeader[] }> {
  const maxBytes = opts.maxBytes ?? 64;
  const bytes = fc.uint8Array({ maxLength: maxBytes }).map((a) => Buffer.from(a));
  const nullable = fc.option(bytes, { nil: null, freq: 4 });
  const header = fc.record({
    key: opts.headerKey ?? fc.string({ unit: 'binary', maxLength: 12 }),
    value: opts.nullHeaderValues === false ? bytes : fc.option(bytes, { nil: null, freq: 4 }),
  });
  const spread = opts.tsSpread ?? 2 ** 40;
  return fc.record({
    key: nullable,
    value: nullable,
    headers: fc.array(header, { maxLength: opts.maxHeaders ?? 4 }),
    timestamp: fc.integer({ min: -spread, max: spread }).map((d) => T0 + d),
  });
}

/** A record in a form `toEqual` compares by content (Buffers copied, header values normalised). */
export interface PlainRecord {
  offset: number;
  timestamp: number;
  key: string | null;
  value: string | null;
  headers: [string, string | null][];
}

const h = (b: Uint8Array | null | undefined): string | null => (b === null || b === undefined ? null : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex'));

export function plain(r: LogRecord): PlainRecord {
  return { offset: r.offset, timestamp: Number(r.timestamp), key: h(r.key), value: h(r.value), headers: r.headers.map((x) => [x.key, h(x.value)]) };
}

export function plainInput(r: RecordInput, offset: number): PlainRecord {
  return { offset, timestamp: Number(r.timestamp!), key: h(r.key ?? null), value: h(r.value), headers: (r.headers ?? []).map((x) => [x.key, h(x.value)]) };
}
