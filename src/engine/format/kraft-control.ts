/**
 * The values of KRaft control records (types 2–6: LeaderChange, SnapshotHeader, SnapshotFooter,
 * KRaftVersion, KRaftVoters), decoded from Kafka's generated-message encoding (flexible version 0:
 * compact arrays and strings, tagged fields) into the JSON Kafka's converters print, with fields in
 * schema order and Kafka's lowerCamelCase names. Schemas: clients/src/main/resources/common/message.
 */
import { Readable } from './internal/readable.js';
import { kafkaJsonText, type KafkaJson } from './internal/schema.js';

const voter = (r: Readable) => {
  const v = { voterId: r.int32() };
  r.skipTaggedFields();
  return v;
};

const decoders: Record<number, { label: string; decode: (r: Readable) => unknown }> = {
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

/** KRaft control record types (ControlRecordType): LEADER_CHANGE … KRAFT_VOTERS. */
export const isKraftControlType = (type: number): boolean => decoders[type] !== undefined;

/**
 * A KRaft control record's value decoded: Kafka's label (`SnapshotHeader`, `LeaderChange:` …) and
 * the JSON its converter writes; undefined when the type is not one of these or the value does
 * not decode.
 */
export function decodeKraftControl(type: number, value: Buffer | null): { label: string; json: KafkaJson } | undefined {
  const d = decoders[type];
  if (!d || !value) return undefined;
  try {
    const r = new Readable(value, 'control record value');
    const json = d.decode(r) as KafkaJson;
    r.skipTaggedFields();
    return { label: d.label, json };
  } catch {
    return undefined;
  }
}

/**
 * `<Label> <json>` as kafka-dump-log.sh prints a KRaft control record, or undefined when the type
 * is not one of these or the value does not decode (the caller then prints the type name).
 */
export function describeKraftControl(type: number, value: Buffer | null): string | undefined {
  const d = decodeKraftControl(type, value);
  return d && `${d.label} ${kafkaJsonText(d.json)}`;
}
