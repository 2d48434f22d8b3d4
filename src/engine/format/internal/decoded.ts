/**
 * What a decoder of one of Kafka's internal topics returns for a record: the `key: …` and
 * `payload: …` strings DumpLogSegments' MessageParser implementations print
 * (core/src/main/scala/kafka/tools/DumpLogSegments.scala), and the decoded object for JSON output.
 */
import { LogtoolError } from '../../errors.js';
import type { KafkaJson } from './schema.js';

/** The parts of a record a decoder reads. */
export interface InternalRecord {
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
}

export interface DecodedInternal {
  /** Printed after ` key: ` (absent: no key part). */
  key?: string;
  /** Printed after ` payload: ` (absent: no payload part). */
  payload?: string;
  /** The decoded record for --json: {key, value}, or {error} / {unknownType} when it did not decode. */
  json: { [field: string]: KafkaJson };
  /** True when the record did not decode (an unknown type or version, or bytes that are not the format). */
  problem: boolean;
}

/** Kafka's `Error at offset N, skipping. <message>` for a record that does not decode. */
export function describeDecodeError(r: InternalRecord, err: unknown): DecodedInternal {
  if (!(err instanceof LogtoolError)) throw err;
  const message = `Error at offset ${r.offset}, skipping. ${err.message}`;
  return { key: message, json: { error: err.message }, problem: true };
}
