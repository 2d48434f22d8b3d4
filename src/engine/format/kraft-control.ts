/**
 * The values of KRaft control records (types 2–6: LeaderChange, SnapshotHeader, SnapshotFooter,
 * KRaftVersion, KRaftVoters), decoded from Kafka's generated-message encoding (flexible version 0:
 * compact arrays and strings, tagged fields) into the JSON Kafka's converters print, with fields in
 * schema order and Kafka's lowerCamelCase names. Schemas: clients/src/main/resources/common/message.
 */
import { CorruptDataError } from '../errors.js';

/** Largest compact array accepted: control records are small; a bigger count is corruption. */
const MAX_ARRAY_ITEMS = 10_000;

class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new CorruptDataError(`control record value ends early at byte ${this.pos}`);
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
  int64(): number {
    this.need(8);
    const v = this.buf.readInt32BE(this.pos) * 4294967296 + this.buf.readUInt32BE(this.pos + 4);
    this.pos += 8;
    return v;
  }
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
    throw new CorruptDataError('unsigned varint longer than 5 bytes');
  }
  /** Compact array: length + 1 as uvarint (0 = null). */
  array<T>(item: () => T): T[] {
    const n = this.uvarint() - 1;
    if (n < 0) return [];
    if (n > MAX_ARRAY_ITEMS) throw new CorruptDataError(`array of ${n} items in a control record`);
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(item());
    return out;
  }
  string(): string {
    const n = this.uvarint() - 1;
    if (n < 0) return '';
    this.need(n);
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  /** Kafka's Uuid.toString(): URL-safe base64 of the 16 bytes, no padding. */
  uuid(): string {
    this.need(16);
    const s = this.buf.subarray(this.pos, this.pos + 16).toString('base64url');
    this.pos += 16;
    return s;
  }
  skipTaggedFields(): void {
    const n = this.uvarint();
    for (let i = 0; i < n; i++) {
      this.uvarint(); // tag
      const size = this.uvarint();
      this.need(size);
      this.pos += size;
    }
  }
}

const voter = (r: Reader) => {
  const v = { voterId: r.int32() };
  r.skipTaggedFields();
  return v;
};

const decoders: Record<number, { label: string; decode: (r: Reader) => unknown }> = {
  2: {
    label: 'LeaderChange:',
    decode: (r) => ({ version: r.int16(), leaderId: r.int32(), voters: r.array(() => voter(r)), grantingVoters: r.array(() => voter(r)) }),
  },
  3: { label: 'SnapshotHeader', decode: (r) => ({ version: r.int16(), lastContainedLogTimestamp: r.int64() }) },
  4: { label: 'SnapshotFooter', decode: (r) => ({ version: r.int16() }) },
  5: { label: 'KRaftVersion', decode: (r) => ({ version: r.int16(), kRaftVersion: r.int16() }) },
  6: {
    label: 'KRaftVoters',
    decode: (r) => ({
      version: r.int16(),
      voters: r.array(() => {
        const v = {
          voterId: r.int32(),
          voterUuid: r.uuid(),
          endpoints: r.array(() => {
            const e = { name: r.string(), host: r.string(), port: r.uint16() };
            r.skipTaggedFields();
            return e;
          }),
          kRaftVersionFeature: (() => {
            const f = { minSupportedVersion: r.int16(), maxSupportedVersion: r.int16() };
            r.skipTaggedFields();
            return f;
          })(),
        };
        r.skipTaggedFields();
        return v;
      }),
    }),
  },
};

/**
 * `<Label> <json>` as kafka-dump-log.sh prints a KRaft control record, or undefined when the type
 * is not one of these or the value does not decode (the caller then prints the type name).
 */
export function describeKraftControl(type: number, value: Buffer | null): string | undefined {
  const d = decoders[type];
  if (!d || !value) return undefined;
  try {
    const r = new Reader(value);
    const json = d.decode(r);
    r.skipTaggedFields();
    return `${d.label} ${JSON.stringify(json)}`;
  } catch {
    return undefined;
  }
}
