/**
 * `__transaction_state` records, as Kafka's TransactionLog (core/src/main/scala/kafka/coordinator/
 * transaction/TransactionLog.scala: readTxnRecordKey, readTxnRecordValue, formatRecordKeyAndValue)
 * reads and DumpLogSegments.TransactionLogMessageParser prints them: key TransactionLogKey v0
 * (int16 version + transactional id), value TransactionLogValue v0–v1 (v1 flexible, with tagged
 * previous/next producer ids and client transaction version); a null value is a tombstone. States
 * by id as TransactionMetadata.scala's TransactionState.fromId.
 */
import { CorruptDataError } from '../../errors.js';
import { Readable } from './readable.js';
import { readMessage, schemaNamed, type KafkaJson } from './schema.js';
import { TRANSACTION_SCHEMAS } from './transaction-schemas.js';
import { describeDecodeError, type DecodedInternal, type InternalRecord } from './decoded.js';
import { javaStringHash, ScalaHashOrder } from './scala-hash-order.js';

const KEY = schemaNamed(TRANSACTION_SCHEMAS, 'TransactionLogKey');
const VALUE = schemaNamed(TRANSACTION_SCHEMAS, 'TransactionLogValue');
export const TRANSACTION_STATES: readonly string[] = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'];

export interface TransactionLogRecord {
  keyVersion: number;
  /** undefined when the key version is unknown (Kafka's UnknownKey). */
  transactionalId?: string;
  valueVersion: number | null;
  value: { [field: string]: KafkaJson } | null;
  /** The value's state name (TransactionStatus by id). */
  state?: string;
}

export function decodeTransactionLogRecord(key: Buffer, value: Buffer | null): TransactionLogRecord {
  const kr = new Readable(key, '__transaction_state key');
  const keyVersion = kr.int16();
  if (keyVersion < KEY.valid![0] || keyVersion > KEY.valid![1]) return { keyVersion, valueVersion: null, value: null };
  const transactionalId = readMessage(kr, KEY, keyVersion).transactionalId as string;
  if (value === null) return { keyVersion, transactionalId, valueVersion: null, value: null };
  const vr = new Readable(value, '__transaction_state value');
  const valueVersion = vr.int16();
  if (valueVersion < VALUE.valid![0] || valueVersion > VALUE.valid![1]) throw new CorruptDataError(`Unknown version ${valueVersion} from the transaction log message value`);
  const decoded = readMessage(vr, VALUE, valueVersion);
  const state = TRANSACTION_STATES[decoded.transactionStatus as number];
  if (state === undefined) throw new CorruptDataError(`Unknown transaction state id ${String(decoded.transactionStatus)} from the transaction status message`);
  return { keyVersion, transactionalId, valueVersion, value: decoded, state };
}

/**
 * `topic-partition` for each partition of a value (Kafka skips them for the Empty state), in the
 * order Kafka prints them: TransactionMetadata.topicPartitions is a Scala mutable.HashSet filled
 * by one `++=` per topic of the value (a Set of that topic's partitions: Set1..Set4 added one by
 * one, larger ones without the per-element growth check), of TopicPartitions whose hashCode is
 * 31 * (31 + partition) + topic.hashCode().
 */
export function kafkaPartitionOrder(groups: readonly { topic: string; partitionIds: readonly number[] }[]): string[] {
  const set = new ScalaHashOrder<string>();
  for (const { topic, partitionIds } of groups) {
    const ids = [...new Set(partitionIds)];
    set.sizeHint(ids.length);
    const topicHash = javaStringHash(topic);
    for (const id of ids) {
      const hash = (Math.imul(31, (31 + id) | 0) + topicHash) | 0;
      if (ids.length <= 4) set.put(`${id}:${topic}`, hash, `${topic}-${id}`);
      else set.putWithoutGrowth(`${id}:${topic}`, hash, `${topic}-${id}`);
    }
  }
  return set.ordered().map(([, name]) => name);
}

function partitionsOf(d: TransactionLogRecord): string[] {
  if (d.state === 'Empty') return [];
  return kafkaPartitionOrder((d.value?.transactionPartitions ?? []) as { topic: string; partitionIds: number[] }[]);
}

/** TransactionLog.formatRecordKeyAndValue. */
export function decodeTransactionLog(r: InternalRecord): DecodedInternal {
  if (r.key === null) return describeDecodeError(r, new CorruptDataError('the record has no key'));
  try {
    const d = decodeTransactionLogRecord(r.key, r.value);
    if (d.transactionalId === undefined) {
      return { key: `unknown::version=${d.keyVersion}`, json: { unknownKeyVersion: d.keyVersion }, problem: true };
    }
    const key = `transaction_metadata::transactionalId=${d.transactionalId}`;
    const keyJson = { version: d.keyVersion, data: { transactionalId: d.transactionalId } };
    if (d.value === null) return { key, payload: '<DELETE>', json: { key: keyJson, value: null }, problem: false };
    const v = d.value;
    const payload =
      `producerId:${String(v.producerId)},producerEpoch:${String(v.producerEpoch)},state=${d.state},partitions=[${partitionsOf(d).join(',')}],` +
      `txnLastUpdateTimestamp=${String(v.transactionLastUpdateTimestampMs)},txnTimeoutMs=${String(v.transactionTimeoutMs)}`;
    return { key, payload, json: { key: keyJson, value: { version: d.valueVersion, state: d.state!, data: v } }, problem: false };
  } catch (err) {
    return describeDecodeError(r, err);
  }
}
