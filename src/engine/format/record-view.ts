/**
 * A record read in place (Kafka's DefaultRecord, kafka-format.md §2.2: length, attributes, timestamp
 * delta, offset delta, key, value, headers): its offset, timestamp and lengths as plain numbers, and
 * where its key, value and headers lie in `bytes` (the batch's bytes, or its decompressed records).
 * Log.readViews() fills one view per read, record after record, after RecordDecoder has made every
 * check a read makes; key(), value(), headers() and toRecord() build objects only when called.
 *
 * Methods rather than getters: a view is reused, so `{ ...view }` or JSON.stringify must not look
 * like a record (toRecord() makes one, equal to what Log.read() returns).
 */
import { assert } from '../errors.js';
import { BytesOf } from './byte-view.js';
import { readVarint, type VarintCursor } from './varint.js';
import type { BatchHeader, LogRecord, RecordHeader, Timestamp } from './batch-header.js';

/**
 * The headers of every record that has none, as Kafka's DefaultRecord shares
 * Record.EMPTY_HEADERS: one frozen array rather than one allocated per record read.
 */
export const NO_HEADERS = Object.freeze([]) as unknown as RecordHeader[];

const EMPTY = Buffer.alloc(0);

/**
 * Walks `count` headers from data[c.pos] within bodyEnd (Kafka's DefaultRecord.readHeaders), with
 * every check a read makes; pushes them onto `out` when given (values are views cut by `bytes`).
 * Returns what is wrong with the first bad header ("header 2 key is invalid"), or undefined.
 */
export function walkHeaders(data: Buffer, c: VarintCursor, bodyEnd: number, count: number, bytes: BytesOf, out: RecordHeader[] | undefined): string | undefined {
  for (let k = 0; k < count; k++) {
    const keyBytes = readVarint(data, c, bodyEnd);
    if (keyBytes < 0 || c.pos + keyBytes > bodyEnd) return `header ${k} key is invalid`;
    const key = out !== undefined ? data.toString('utf8', c.pos, c.pos + keyBytes) : '';
    c.pos += keyBytes;
    const valueBytes = readVarint(data, c, bodyEnd);
    let value: Buffer | null = null;
    if (valueBytes >= 0) {
      if (c.pos + valueBytes > bodyEnd) return `header ${k} value runs past the record`;
      if (out !== undefined) value = bytes.view(c.pos, valueBytes);
      c.pos += valueBytes;
    }
    out?.push({ key, value });
  }
  return undefined;
}

/**
 * One record of a read, valid only until the read steps on (the same object is refilled, and its
 * `bytes` may be the read's reused buffer): copy or `toRecord()` what is kept, as with `read()`'s
 * `reuseBuffer`. Lengths are −1 for a null key or value.
 */
export class RecordView {
  offset = 0;
  /** A number, or a bigint when beyond ±2^53 (see Timestamp). */
  timestamp: Timestamp = 0;
  keyLength = -1;
  valueLength = -1;
  headerCount = 0;
  /** The bytes holding the record: the key is bytes[keyStart, keyStart + keyLength), the value likewise. */
  bytes: Buffer = EMPTY;
  keyStart = 0;
  valueStart = 0;
  /** The record's offset and timestamp deltas within its batch (Kafka's DefaultRecord fields). */
  offsetDelta = 0;
  timestampDelta = 0;
  /** The header of the record's batch (producer id, epochs, attributes…); undefined for a legacy (v0/v1) message. */
  batch: BatchHeader | undefined = undefined;
  /** Where the headers start in `bytes` and where the record ends (RecordDecoder sets them). */
  headersStart = 0;
  headersEnd = 0;
  /** Cuts views of `bytes` (RecordDecoder's, one per batch). */
  views: BytesOf | undefined = undefined;
  /** A legacy message: the record its decoder built (key(), value() and toRecord() give its parts); undefined for v2. */
  legacy: LogRecord | undefined = undefined;

  /** The key as a view of `bytes` (no copy), or null. */
  key(): Buffer | null {
    if (this.legacy !== undefined) return this.legacy.key;
    return this.keyLength < 0 ? null : this.views!.view(this.keyStart, this.keyLength);
  }

  /** The value as a view of `bytes` (no copy), or null. */
  value(): Buffer | null {
    if (this.legacy !== undefined) return this.legacy.value;
    return this.valueLength < 0 ? null : this.views!.view(this.valueStart, this.valueLength);
  }

  /** The headers, their values views of `bytes`; a record without headers gives the shared frozen empty array. */
  headers(): RecordHeader[] {
    if (this.legacy !== undefined) return this.legacy.headers;
    if (this.headerCount === 0) return NO_HEADERS;
    const out: RecordHeader[] = [];
    const problem = walkHeaders(this.bytes, { pos: this.headersStart }, this.headersEnd, this.headerCount, this.views!, out);
    assert(problem === undefined, `record ${this.offset}: headers checked when read, now ${problem}`);
    return out;
  }

  /** The record as Log.read() gives it (its key, value and header values views of `bytes`). */
  toRecord(): LogRecord {
    if (this.legacy !== undefined) return this.legacy;
    // key(), value() and headers() written out: Log.read() makes every record here.
    const views = this.views!;
    return {
      offset: this.offset,
      timestamp: this.timestamp,
      key: this.keyLength < 0 ? null : views.view(this.keyStart, this.keyLength),
      value: this.valueLength < 0 ? null : views.view(this.valueStart, this.valueLength),
      headers: this.headerCount === 0 ? NO_HEADERS : this.headers(),
    };
  }

  /** Shows a legacy message the legacy decoder built (v0/v1 entries are decoded whole). */
  showRecord(r: LogRecord): this {
    this.legacy = r;
    this.batch = undefined;
    this.offset = r.offset;
    this.timestamp = r.timestamp;
    this.offsetDelta = 0;
    this.timestampDelta = 0;
    this.headerCount = r.headers.length;
    const key = r.key;
    const value = r.value;
    // Key and value lie in one message: `bytes` spans both.
    const base = Math.min(key?.byteOffset ?? Infinity, value?.byteOffset ?? Infinity);
    const parts = [key, value].filter((b): b is Buffer => b !== null);
    assert(parts.every((b) => b.buffer === parts[0]!.buffer), `legacy message at offset ${r.offset}: key and value in different buffers`);
    const end = Math.max(0, ...parts.map((b) => b.byteOffset + b.length));
    this.bytes = parts.length === 0 ? EMPTY : Buffer.from(parts[0]!.buffer, base, end - base);
    this.keyLength = key === null ? -1 : key.length;
    this.keyStart = key === null ? 0 : key.byteOffset - base;
    this.valueLength = value === null ? -1 : value.length;
    this.valueStart = value === null ? 0 : value.byteOffset - base;
    this.views = undefined;
    return this;
  }
}
