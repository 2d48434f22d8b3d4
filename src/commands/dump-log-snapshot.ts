/**
 * `dump-log` for producer-state snapshots (`.snapshot`), as DumpLogSegments.dumpProducerIdSnapshot
 * prints ProducerStateManager.readSnapshot's entries; with --json one object per producer.
 */
import { realIO, LogtoolError } from '../api/format.js';
import { readProducerSnapshot, type ProducerSnapshotEntry } from '../api/log.js';
import type { Output } from '../render/output.js';
import { INT_MAX } from './dump-log-lines.js';
import { kafkaJsonText, type KafkaJson } from '../api/internal-topics.js';

/** Kafka's DefaultRecordBatch.decrementSequence: wraps below 0 to Integer.MAX_VALUE. */
function decrementSequence(sequence: number, decrement: number): number {
  if (sequence < decrement) return INT_MAX - (decrement - sequence) + 1;
  return sequence - decrement;
}

/** One line of DumpLogSegments.dumpProducerIdSnapshot (trailing space included when there is no batch). */
export function producerSnapshotLine(e: ProducerSnapshotEntry): string {
  const txn = e.currentTxnFirstOffset >= 0n ? `OptionalLong[${e.currentTxnFirstOffset}]` : 'OptionalLong.empty';
  let line = `producerId: ${e.producerId} producerEpoch: ${e.epoch} coordinatorEpoch: ${e.coordinatorEpoch} currentTxnFirstOffset: ${txn} lastTimestamp: ${e.timestamp} `;
  if (e.lastOffset >= 0n)
    line += `firstSequence: ${decrementSequence(e.lastSequence, e.offsetDelta)} lastSequence: ${e.lastSequence} lastOffset: ${e.lastOffset} offsetDelta: ${e.offsetDelta} timestamp: ${e.timestamp}`;
  return line;
}

/** The fields of that line as one --json object (currentTxnFirstOffset null when empty; batch fields only with a batch). */
export function producerSnapshotJson(e: ProducerSnapshotEntry): string {
  const o: { [field: string]: KafkaJson } = {
    producerId: e.producerId,
    producerEpoch: e.epoch,
    coordinatorEpoch: e.coordinatorEpoch,
    currentTxnFirstOffset: e.currentTxnFirstOffset >= 0n ? e.currentTxnFirstOffset : null,
    lastTimestamp: e.timestamp,
  };
  if (e.lastOffset >= 0n) {
    Object.assign(o, { firstSequence: decrementSequence(e.lastSequence, e.offsetDelta), lastSequence: e.lastSequence, lastOffset: e.lastOffset, offsetDelta: e.offsetDelta, timestamp: e.timestamp });
  }
  return kafkaJsonText(o);
}

/** A `.snapshot` file: one line per producer; a corrupt file is reported on stderr (as Kafka does) and is a problem. */
export async function dumpProducerSnapshot(file: string, out: Output, json?: boolean): Promise<boolean> {
  let entries: ProducerSnapshotEntry[];
  try {
    entries = readProducerSnapshot(realIO, file);
  } catch (err) {
    if (!(err instanceof LogtoolError) || err.kind !== 'corrupt') throw err;
    process.stderr.write(`${err.describe()}\n`);
    return true;
  }
  for (const e of entries) {
    if (out.closed) break;
    await out.line(json ? producerSnapshotJson(e) : producerSnapshotLine(e));
  }
  return false;
}
