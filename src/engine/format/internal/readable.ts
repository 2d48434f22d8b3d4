/**
 * Kafka's generated-message wire primitives (org.apache.kafka.common.protocol.Readable /
 * ByteBufferAccessor): big-endian fixed-width integers, unsigned varints of at most 5 bytes,
 * classic (int16/int32 length) and compact (uvarint length + 1) strings, bytes and arrays, UUIDs,
 * tagged-field sections. Every length read from the bytes is checked against the bytes that
 * remain before anything is allocated, so garbage gives a CorruptDataError, never a huge buffer.
 */
import { CorruptDataError } from '../../errors.js';

export class Readable {
  pos: number;
  constructor(
    private readonly buf: Buffer,
    /** Named in errors: "control record value", "__consumer_offsets key", … */
    private readonly what: string,
    start = 0,
    private readonly end = buf.length,
  ) {
    this.pos = start;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  need(n: number): void {
    if (n < 0 || this.pos + n > this.end) throw new CorruptDataError(`${this.what} ends early at byte ${this.pos} (needs ${n} more, has ${this.remaining})`);
  }

  /** A reader over the next `n` bytes, which this one skips. */
  slice(n: number): Readable {
    this.need(n);
    const r = new Readable(this.buf, this.what, this.pos, this.pos + n);
    this.pos += n;
    return r;
  }

  int8(): number {
    this.need(1);
    return this.buf.readInt8(this.pos++);
  }
  int16(): number {
    this.need(2);
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  uint16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  int32(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  uint32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  /** An int64 as a number when it is a safe integer, as a bigint otherwise (kept exact). */
  int64(): number | bigint {
    this.need(8);
    const v = this.buf.readBigInt64BE(this.pos);
    this.pos += 8;
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  }
  float64(): number {
    this.need(8);
    const v = this.buf.readDoubleBE(this.pos);
    this.pos += 8;
    return v;
  }
  /** Kafka's readUnsignedVarint: at most 5 bytes. */
  uvarint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 5; i++) {
      this.need(1);
      const b = this.buf[this.pos++]!;
      v += (b & 0x7f) * mul;
      if (!(b & 0x80)) return v;
      mul *= 128;
    }
    throw new CorruptDataError(`${this.what}: unsigned varint longer than 5 bytes at byte ${this.pos}`);
  }
  /** `n` raw bytes (a view; nothing is copied). */
  bytes(n: number): Buffer {
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  /** A string of `n` UTF-8 bytes. */
  utf8(n: number): string {
    return this.bytes(n).toString('utf8');
  }
  /** Compact array: length + 1 as uvarint (0 = null, read as empty), items read by `item`. */
  array<T>(item: () => T): T[] {
    const n = this.uvarint() - 1;
    if (n < 0) return [];
    this.checkCount(n);
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(item());
    return out;
  }
  /** Compact string (null read as ''). */
  string(): string {
    const n = this.uvarint() - 1;
    return n < 0 ? '' : this.utf8(n);
  }
  /** Kafka's Uuid.toString(): URL-safe base64 of the 16 bytes, no padding. */
  uuid(): string {
    return this.bytes(16).toString('base64url');
  }
  /** An array count: every item takes at least one byte, so more items than bytes left is corruption. */
  checkCount(n: number): void {
    if (n > this.remaining) throw new CorruptDataError(`${this.what}: array of ${n} items with ${this.remaining} bytes left at byte ${this.pos}`);
  }
  skipTaggedFields(): void {
    const n = this.uvarint();
    for (let i = 0; i < n; i++) {
      this.uvarint(); // tag
      this.bytes(this.uvarint());
    }
  }
}
