/**
 * Kafka's generated messages, read from their JSON schemas instead of generated classes: the read()
 * of generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java (fields in schema
 * order when their version has them; classic int16/int32 lengths before the first flexible version,
 * compact uvarint lengths and a tagged-field section per struct from it; nullable structs behind an
 * int8 marker) and the write() of JsonConverterGenerator.java (Kafka's field names; tagged fields
 * only when they differ from their default; int64 as a number, bytes as base64, UUIDs as Kafka's
 * Uuid.toString()). The schemas themselves are generated: scripts/gen-internal-schemas.mjs.
 */
import { CorruptDataError } from '../../errors.js';
import { Readable } from './readable.js';

export type VersionRange = readonly [number, number] | null;

export interface FieldSpec {
  /** Kafka's camelCase name, as its JSON converters write it. */
  n: string;
  /** Schema type: int8 … float64, bool, string, bytes, records, uuid, a struct name, or `[]` + one of these. */
  t: string;
  v: VersionRange;
  nv?: VersionRange;
  tv?: VersionRange;
  tag?: number;
  d?: string;
  /** Fields of a struct (or struct array) type. */
  f?: readonly FieldSpec[];
}

export interface MessageSpec {
  name: string;
  apiKey?: number;
  valid: VersionRange;
  flex: VersionRange;
  fields: readonly FieldSpec[];
}

/** A decoded value as Kafka's JSON converters see it; Buffers print as base64, bigints exactly. */
export type KafkaJson = null | boolean | number | bigint | string | Buffer | KafkaDouble | KafkaJson[] | { [field: string]: KafkaJson };

/** A float64 field: Jackson prints it as Java's Double.toString does (1.0, 1.0E10). */
export class KafkaDouble {
  constructor(readonly value: number) {}
}

export const inVersions = (range: VersionRange | undefined, version: number): boolean => !!range && version >= range[0] && version <= range[1];

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
const PRIMITIVES = new Set(['int8', 'int16', 'int32', 'int64', 'uint16', 'uint32', 'float64', 'bool', 'string', 'bytes', 'records', 'uuid']);

/** A field's default as Kafka's generator derives it from the schema's "default" (or the type's zero). */
function defaultOf(f: FieldSpec): KafkaJson {
  const d = f.d;
  if (d === 'null') return null;
  if (f.t.startsWith('[]')) return [];
  switch (f.t) {
    case 'bool':
      return d === 'true';
    case 'string':
      return d ?? '';
    case 'uuid':
      return ZERO_UUID;
    case 'bytes':
    case 'records':
      return Buffer.alloc(0);
    case 'int64':
      return d === undefined ? 0 : Number(BigInt(d));
    case 'float64':
      return new KafkaDouble(d === undefined ? 0 : Number(d));
    default:
      return PRIMITIVES.has(f.t) ? (d === undefined ? 0 : Number(d)) : null;
  }
}

function isDefault(f: FieldSpec, value: KafkaJson): boolean {
  const d = defaultOf(f);
  if (Array.isArray(d)) return Array.isArray(value) && value.length === 0;
  if (Buffer.isBuffer(d)) return Buffer.isBuffer(value) && value.length === 0;
  if (d instanceof KafkaDouble) return value instanceof KafkaDouble && value.value === d.value;
  return value === d;
}

function readLength(r: Readable, flexible: boolean, classic: 'int16' | 'int32'): number {
  if (flexible) return r.uvarint() - 1;
  return classic === 'int16' ? r.int16() : r.int32();
}

function readPrimitive(r: Readable, type: string, flexible: boolean, nullable: boolean, name: string): KafkaJson {
  switch (type) {
    case 'int8':
      return r.int8();
    case 'int16':
      return r.int16();
    case 'int32':
      return r.int32();
    case 'int64':
      return r.int64();
    case 'uint16':
      return r.uint16();
    case 'uint32':
      return r.uint32();
    case 'float64':
      return new KafkaDouble(r.float64());
    case 'bool':
      return r.int8() !== 0;
    case 'uuid':
      return r.uuid();
  }
  const n = readLength(r, flexible, type === 'string' ? 'int16' : 'int32');
  if (n < 0) {
    if (!nullable) throw new CorruptDataError(`non-nullable field ${name} was serialized as null`);
    return null;
  }
  return type === 'string' ? r.utf8(n) : r.bytes(n);
}

function readField(r: Readable, f: FieldSpec, version: number, flexible: boolean): KafkaJson {
  const nullable = inVersions(f.nv, version);
  if (f.t.startsWith('[]')) {
    const n = readLength(r, flexible, 'int32');
    if (n < 0) {
      if (!nullable) throw new CorruptDataError(`non-nullable field ${f.n} was serialized as null`);
      return null;
    }
    r.checkCount(n);
    const element = f.t.slice(2);
    const out: KafkaJson[] = [];
    for (let i = 0; i < n; i++) out.push(f.f ? readStruct(r, f.f, version, flexible) : readPrimitive(r, element, flexible, false, f.n));
    return out;
  }
  if (f.f) {
    if (nullable && r.int8() < 0) return null;
    return readStruct(r, f.f, version, flexible);
  }
  return readPrimitive(r, f.t, flexible, nullable, f.n);
}

/** One struct: its fields in schema order, then (flexible versions) its tagged fields. */
export function readStruct(r: Readable, fields: readonly FieldSpec[], version: number, flexible: boolean): { [field: string]: KafkaJson } {
  const out: { [field: string]: KafkaJson } = {};
  const tagged: FieldSpec[] = [];
  for (const f of fields) {
    if (!inVersions(f.v, version)) continue;
    if (flexible && inVersions(f.tv, version)) {
      out[f.n] = defaultOf(f); // keeps the schema order; dropped below unless a tag sets it
      tagged.push(f);
    } else {
      out[f.n] = readField(r, f, version, flexible);
    }
  }
  if (flexible) {
    const count = r.uvarint();
    r.checkCount(count);
    for (let i = 0; i < count; i++) {
      const tag = r.uvarint();
      const body = r.slice(r.uvarint());
      const f = tagged.find((t) => t.tag === tag);
      if (f) out[f.n] = readField(body, f, version, true); // unknown tags are skipped, as Kafka keeps them unprinted
    }
    for (const f of tagged) if (isDefault(f, out[f.n]!)) delete out[f.n];
  }
  return out;
}

/** Kafka's `new X(readable, version)`: a version outside validVersions cannot be read. */
export function readMessage(r: Readable, spec: MessageSpec, version: number): { [field: string]: KafkaJson } {
  if (!inVersions(spec.valid, version)) throw new CorruptDataError(`Can't read version ${version} of ${spec.name}`);
  return readStruct(r, spec.fields, version, inVersions(spec.flex, version));
}

/** Java's Double.toString for the values Kafka's metadata carries. */
function javaDouble(v: number): string {
  if (!Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
  const abs = Math.abs(v);
  if (abs === 0 || (abs >= 1e-3 && abs < 1e7)) return Number.isInteger(v) ? `${v}.0` : String(v);
  const [mantissa, exp] = v.toExponential().split('e') as [string, string];
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exp)}`;
}

/** Jackson's string escapes: JSON.stringify's, with upper-case hex in \u00XX. */
function jacksonString(s: string): string {
  const j = JSON.stringify(s);
  if (!j.includes('\\u00')) return j;
  return j.replace(/(\\\\)|\\u00([0-9a-f]{2})/g, (m, bs: string | undefined, hex: string | undefined) => bs ?? `\\u00${hex!.toUpperCase()}`);
}

/** The compact JSON text Jackson's ObjectNode.toString() prints for a decoded value. */
export function kafkaJsonText(v: KafkaJson): string {
  switch (typeof v) {
    case 'string':
      return jacksonString(v);
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(v);
  }
  if (v === null) return 'null';
  if (Buffer.isBuffer(v)) return `"${v.toString('base64')}"`;
  if (v instanceof KafkaDouble) return javaDouble(v.value);
  let out: string;
  if (Array.isArray(v)) {
    out = '[';
    for (let i = 0; i < v.length; i++) out += (i > 0 ? ',' : '') + kafkaJsonText(v[i]!);
    return `${out}]`;
  }
  out = '{';
  let first = true;
  for (const k in v) {
    out += `${first ? '' : ','}${jacksonString(k)}:${kafkaJsonText(v[k]!)}`;
    first = false;
  }
  return `${out}}`;
}

/** Finds a schema by name; the generated tables always hold the names the decoders ask for. */
export function schemaNamed(specs: readonly MessageSpec[], name: string): MessageSpec {
  const s = specs.find((x) => x.name === name);
  if (!s) throw new Error(`no schema ${name}`);
  return s;
}
