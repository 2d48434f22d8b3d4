/**
 * KRaft `__cluster_metadata` records (and snapshots), as Kafka's MetadataRecordSerde /
 * AbstractApiMessageSerde (server-common/.../serialization/AbstractApiMessageSerde.java) reads a
 * value: unsigned varint frame version (1), unsigned varint record type (apiKey), unsigned varint
 * version, the message (metadata/src/main/resources/common/metadata/*Record.json), and no bytes
 * after it. Printed as DumpLogSegments.ClusterMetadataLogMessageParser does:
 * `{"type":"<MetadataRecordType name>","version":V,"data":{…}}`, the type named as Kafka's
 * MetadataRecordTypeGenerator names it (TopicRecord → TOPIC_RECORD), or Kafka's `Error at N, skipping. …`
 * line with MetadataParseException's message. Metadata records have no key.
 */
import { CorruptDataError } from '../../errors.js';
import { Readable } from './readable.js';
import { kafkaJsonText, readMessage, type KafkaJson, type MessageSpec } from './schema.js';
import { METADATA_SCHEMAS } from './metadata-schemas.js';
import type { DecodedInternal, InternalRecord } from './decoded.js';
import { decodeKraftControl } from '../kraft-control.js';

const byApiKey = new Map<number, MessageSpec>(METADATA_SCHEMAS.map((s) => [s.apiKey!, s]));

/** MessageGenerator.toSnakeCase(name).toUpperCase(). */
export const metadataTypeName = (name: string): string => name.replace(/(?<=[a-z0-9])([A-Z])/g, '_$1').toUpperCase();

export interface MetadataRecord {
  typeId: number;
  /** e.g. TOPIC_RECORD; undefined for a type this Kafka version does not know. */
  type?: string;
  version: number;
  data?: { [field: string]: KafkaJson };
}

/** A record that does not decode: Kafka's MetadataParseException message, and what was wrong in detail. */
export class MetadataParseError extends CorruptDataError {
  constructor(
    kafkaMessage: string,
    readonly detail?: string,
  ) {
    super(kafkaMessage);
  }
}

/** AbstractApiMessageSerde.read; a type Kafka does not know is returned without data, not thrown. */
export function decodeMetadataRecord(value: Buffer): MetadataRecord {
  const r = new Readable(value, '__cluster_metadata record');
  const short = (what: string): number => {
    let v: number;
    try {
      v = r.uvarint();
    } catch (err) {
      throw new MetadataParseError(`Error while reading ${what}`, (err as Error).message);
    }
    if (v > 32767) throw new MetadataParseError(`Value for ${what} was too large.`);
    return v;
  };
  const frame = short('frame version');
  if (frame === 0) throw new MetadataParseError('Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.');
  if (frame !== 1) throw new MetadataParseError(`Could not deserialize metadata record due to unknown frame version ${frame}(only frame version 1 is supported)`);
  const typeId = short('type');
  const version = short('version');
  const spec = byApiKey.get(typeId);
  if (!spec) return { typeId, version };
  let data: { [field: string]: KafkaJson };
  try {
    data = readMessage(r, spec, version);
  } catch (err) {
    if (!(err instanceof CorruptDataError)) throw err;
    throw new MetadataParseError(`Failed to deserialize record with type ${typeId}`, err.message);
  }
  if (r.remaining > 0) throw new MetadataParseError(`Found ${r.remaining} byte(s) of garbage after ${typeId}`);
  return { typeId, type: metadataTypeName(spec.name), version, data };
}

/** ClusterMetadataLogMessageParser.parse: no key, the payload is the JSON or Kafka's error text. */
export function decodeClusterMetadata(rec: InternalRecord): DecodedInternal {
  try {
    if (rec.value === null) throw new CorruptDataError('the record has no value');
    const d = decodeMetadataRecord(rec.value);
    if (d.type === undefined) {
      // MetadataRecordType.fromId's exception, wrapped by MetadataParseException(Throwable): its toString().
      const payload = `Error at ${rec.offset}, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id ${d.typeId}`;
      return { payload, json: { type: 'UNKNOWN', typeId: d.typeId, version: d.version }, problem: true };
    }
    const json = { type: d.type, version: d.version, data: d.data! };
    return { payload: kafkaJsonText(json), json, problem: false };
  } catch (err) {
    if (!(err instanceof CorruptDataError)) throw err;
    const json: { [field: string]: KafkaJson } = { error: err.message };
    if (err instanceof MetadataParseError && err.detail !== undefined) json.detail = err.detail;
    return { payload: `Error at ${rec.offset}, skipping. ${err.message}`, json, problem: true };
  }
}

/**
 * A KRaft control record of a metadata log or snapshot (LeaderChange, SnapshotHeader/Footer,
 * KRaftVersion, KRaftVoters) as decoded output shows it: key = Kafka's label, payload = the JSON
 * DumpLogSegments prints after it; --json {"control": label, "data": json}. Undefined when the
 * record is not one (its key is not a control key of those types, or the value does not decode).
 */
export function decodeKraftControlRecord(rec: InternalRecord): DecodedInternal | undefined {
  if (rec.key === null || rec.key.length < 4) return undefined;
  const d = decodeKraftControl(rec.key.readInt16BE(2), rec.value);
  if (!d) return undefined;
  const label = d.label.replace(/:$/, '');
  return { key: label, payload: kafkaJsonText(d.json), json: { control: label, data: d.json }, problem: false };
}
