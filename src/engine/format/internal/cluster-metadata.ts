/**
 * KRaft `__cluster_metadata` records (and snapshots), as Kafka's MetadataRecordSerde /
 * AbstractApiMessageSerde (server-common/.../serialization/AbstractApiMessageSerde.java) reads a
 * value: unsigned varint frame version (1), unsigned varint record type (apiKey), unsigned varint
 * version, the message (metadata/src/main/resources/common/metadata/*Record.json), and no bytes
 * after it. Printed as DumpLogSegments.ClusterMetadataLogMessageParser does:
 * `{"type":"<MetadataRecordType name>","version":V,"data":{…}}`, the type named as Kafka's
 * MetadataRecordTypeGenerator names it (TopicRecord → TOPIC_RECORD). Metadata records have no key.
 */
import { CorruptDataError } from '../../errors.js';
import { Readable } from './readable.js';
import { kafkaJsonText, readMessage, type KafkaJson, type MessageSpec } from './schema.js';
import { METADATA_SCHEMAS } from './metadata-schemas.js';
import type { DecodedInternal, InternalRecord } from './decoded.js';

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

/** AbstractApiMessageSerde.read; a type Kafka does not know is returned without data, not thrown. */
export function decodeMetadataRecord(value: Buffer): MetadataRecord {
  const r = new Readable(value, '__cluster_metadata record');
  const short = (what: string): number => {
    const v = r.uvarint();
    if (v > 32767) throw new CorruptDataError(`Value for ${what} was too large.`);
    return v;
  };
  const frame = short('frame version');
  if (frame !== 1) throw new CorruptDataError(`Could not deserialize metadata record due to unknown frame version ${frame}(only frame version 1 is supported)`);
  const typeId = short('type');
  const version = short('version');
  const spec = byApiKey.get(typeId);
  if (!spec) return { typeId, version };
  const data = readMessage(r, spec, version);
  if (r.remaining > 0) throw new CorruptDataError(`Found ${r.remaining} byte(s) of garbage after ${typeId}`);
  return { typeId, type: metadataTypeName(spec.name), version, data };
}

/** ClusterMetadataLogMessageParser.parse: no key, the payload is the JSON or Kafka's error text. */
export function decodeClusterMetadata(rec: InternalRecord): DecodedInternal {
  try {
    if (rec.value === null) throw new CorruptDataError('the record has no value');
    const d = decodeMetadataRecord(rec.value);
    if (d.type === undefined) {
      return { payload: `Error at ${rec.offset}, skipping. Unknown metadata id ${d.typeId}`, json: { type: 'UNKNOWN', typeId: d.typeId, version: d.version }, problem: true };
    }
    const json = { type: d.type, version: d.version, data: d.data! };
    return { payload: kafkaJsonText(json), json, problem: false };
  } catch (err) {
    if (!(err instanceof CorruptDataError)) throw err;
    return { payload: `Error at ${rec.offset}, skipping. ${err.message}`, json: { error: err.message }, problem: true };
  }
}
