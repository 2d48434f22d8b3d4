/**
 * `__consumer_offsets` records, as Kafka's GroupCoordinatorRecordSerde
 * (group-coordinator/.../GroupCoordinatorRecordSerde.java, CoordinatorRecordSerde.java) reads them
 * and DumpLogSegments.OffsetsMessageParser (core/src/main/scala/kafka/tools/DumpLogSegments.scala)
 * prints them. The key starts with an int16 record type, which is also the key's version: 0–1
 * OffsetCommitKey, 2 GroupMetadataKey, 3–8 the consumer-group records of KIP-848, 9–15 share
 * groups. The value starts with its own int16 version; a null value is a tombstone. Errors carry
 * CoordinatorRecordSerde's messages (`Could not read record with version V from key's buffer due to: …`). A classic
 * group's members of protocol type "consumer" have their subscription and assignment decoded
 * (ConsumerProtocolSubscription/Assignment), as Kafka's parser does.
 */
import { CorruptDataError } from '../../errors.js';
import { Readable } from './readable.js';
import { kafkaJsonText, readMessage, schemaNamed, type KafkaJson, type MessageSpec } from './schema.js';
import { OFFSETS_SCHEMAS } from './offsets-schemas.js';
import { describeDecodeError, type InternalRecord, type DecodedInternal } from './decoded.js';

/** Key and value schema names by record type (GroupCoordinatorRecordSerde.apiMessageKeyFor). */
const RECORD_TYPES: readonly string[] = [
  'OffsetCommit',
  'OffsetCommit',
  'GroupMetadata',
  'ConsumerGroupMetadata',
  'ConsumerGroupPartitionMetadata',
  'ConsumerGroupMemberMetadata',
  'ConsumerGroupTargetAssignmentMetadata',
  'ConsumerGroupTargetAssignmentMember',
  'ConsumerGroupCurrentMemberAssignment',
  'ShareGroupPartitionMetadata',
  'ShareGroupMemberMetadata',
  'ShareGroupMetadata',
  'ShareGroupTargetAssignmentMetadata',
  'ShareGroupTargetAssignmentMember',
  'ShareGroupCurrentMemberAssignment',
  'ShareGroupStatePartitionMetadata',
];

const specs = new Map<string, MessageSpec>(OFFSETS_SCHEMAS.map((s) => [s.name, s]));
const SUBSCRIPTION = schemaNamed(OFFSETS_SCHEMAS, 'ConsumerProtocolSubscription');
const ASSIGNMENT = schemaNamed(OFFSETS_SCHEMAS, 'ConsumerProtocolAssignment');

/** A decoded `__consumer_offsets` record. */
export interface OffsetsRecord {
  /** The key's record type (= its version). */
  type: number;
  /** OffsetCommit, GroupMetadata, ConsumerGroupMetadata, …  */
  name: string;
  key: { [field: string]: KafkaJson };
  /** null for a tombstone. */
  valueVersion: number | null;
  value: { [field: string]: KafkaJson } | null;
}

/** Thrown for a record type Kafka's serde does not know (UnknownRecordTypeException). */
export class UnknownRecordTypeError extends Error {
  constructor(readonly recordType: number) {
    super(`unknown record type ${recordType}`);
  }
}

/**
 * Replaces a member's subscription/assignment bytes by their decoded form, keeping the bytes when
 * they do not decode (prepareGroupMetadataValue's replace()).
 */
function decodeEmbedded(member: { [field: string]: KafkaJson }, field: string, spec: MessageSpec): void {
  const bytes = member[field];
  if (!Buffer.isBuffer(bytes)) return;
  try {
    const r = new Readable(bytes, `${field} of member ${String(member.memberId)}`);
    member[field] = readMessage(r, spec, r.int16());
  } catch {
    // Kafka swallows the error and keeps the original bytes.
  }
}

/** CoordinatorRecordSerde.readVersion. */
function readVersion(r: Readable, name: 'key' | 'value'): number {
  if (r.remaining < 2) throw new CorruptDataError(`Could not read version from ${name}'s buffer.`);
  return r.int16();
}

/** CoordinatorRecordSerde.readMessage: Kafka's message around the reader's own. */
function readPart(r: Readable, spec: MessageSpec, version: number, name: 'key' | 'value'): { [field: string]: KafkaJson } {
  try {
    return readMessage(r, spec, version);
  } catch (err) {
    if (!(err instanceof CorruptDataError)) throw err;
    throw new CorruptDataError(`Could not read record with version ${version} from ${name}'s buffer due to: ${err.message}.`);
  }
}

/** Decodes one record; throws UnknownRecordTypeError or a CorruptDataError. */
export function decodeOffsetsRecord(key: Buffer, value: Buffer | null): OffsetsRecord {
  const kr = new Readable(key, '__consumer_offsets key');
  const type = readVersion(kr, 'key');
  const name = RECORD_TYPES[type];
  if (type < 0 || name === undefined) throw new UnknownRecordTypeError(type);
  const decodedKey = readPart(kr, specs.get(`${name}Key`)!, type, 'key');
  if (value === null) return { type, name, key: decodedKey, valueVersion: null, value: null };
  const vr = new Readable(value, '__consumer_offsets value');
  const valueVersion = readVersion(vr, 'value');
  const decodedValue = readPart(vr, specs.get(`${name}Value`)!, valueVersion, 'value');
  if (name === 'GroupMetadata' && decodedValue.protocolType === 'consumer' && Array.isArray(decodedValue.members)) {
    for (const m of decodedValue.members) {
      if (m === null || typeof m !== 'object' || Array.isArray(m) || Buffer.isBuffer(m)) continue;
      const member = m as { [field: string]: KafkaJson };
      decodeEmbedded(member, 'subscription', SUBSCRIPTION);
      decodeEmbedded(member, 'assignment', ASSIGNMENT);
    }
  }
  return { type, name, key: decodedKey, valueVersion, value: decodedValue };
}

/** Kafka's OffsetsMessageParser.parse: key and payload strings, or the line it prints instead. */
export function decodeOffsets(r: InternalRecord): DecodedInternal {
  if (r.key === null) {
    const message = `Failed to decode message at offset ${r.offset} using offset topic decoder (message had a missing key)`;
    return { key: message, json: { error: message }, problem: true };
  }
  try {
    const d = decodeOffsetsRecord(r.key, r.value);
    const keyJson = { type: String(d.type), data: d.key };
    const valueJson = d.value === null ? null : { version: String(d.valueVersion), data: d.value };
    return {
      key: kafkaJsonText(keyJson),
      payload: valueJson === null ? '<DELETE>' : kafkaJsonText(valueJson),
      json: { key: keyJson, value: valueJson },
      problem: false,
    };
  } catch (err) {
    if (err instanceof UnknownRecordTypeError) {
      return { key: `Unknown record type ${err.recordType} at offset ${r.offset}, skipping.`, json: { unknownType: err.recordType }, problem: true };
    }
    return describeDecodeError(r, err);
  }
}
