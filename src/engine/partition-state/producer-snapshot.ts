/**
 * Producer-state snapshot files, `<20-digit offset>.snapshot` (kafka-format.md §7; Kafka's
 * ProducerStateManager.readSnapshot / writeSnapshot and storage/.../message/ProducerSnapshot.json):
 *
 *   int16 version = 1 | uint32 CRC-32C of bytes [6, end) | int32 entry count |
 *   count × 46-byte entries: producerId int64, epoch int16, lastSequence int32, lastOffset int64,
 *   offsetDelta int32, timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64
 *
 * int64 fields are bigints so that every value round-trips exactly: encoding the entries read
 * from a file gives that file's bytes.
 */
import type { FileIO } from '../io.js';
import { LogtoolError } from '../errors.js';
import { readSmallFile } from '../checkpoint.js';
import { crc32c } from '../format/crc32c.js';

export const PRODUCER_SNAPSHOT_VERSION = 1;
export const PRODUCER_SNAPSHOT_SUFFIX = '.snapshot';
const CRC_OFFSET = 2;
const COUNT_OFFSET = 6;
/** Where the CRC-covered bytes start (Kafka's PRODUCER_ENTRIES_OFFSET: the count is covered). */
const CRC_COVERED_FROM = 6;
export const PRODUCER_SNAPSHOT_HEADER_BYTES = 10;
export const PRODUCER_ENTRY_BYTES = 46;

export interface ProducerSnapshotEntry {
  producerId: bigint;
  epoch: number;
  lastSequence: number;
  /** −1 when the producer has no batch metadata (Kafka then prints no batch fields). */
  lastOffset: bigint;
  offsetDelta: number;
  timestamp: bigint;
  coordinatorEpoch: number;
  /** −1: no ongoing transaction. */
  currentTxnFirstOffset: bigint;
}

/** Decodes a snapshot's bytes; a bad file is a LogtoolError 'corrupt' naming `file` and the byte. */
export function decodeProducerSnapshot(buf: Buffer, file: string): ProducerSnapshotEntry[] {
  const corrupt = (message: string, position: number) => new LogtoolError('corrupt', message, { file, position });
  if (buf.length < PRODUCER_SNAPSHOT_HEADER_BYTES)
    throw corrupt(`producer snapshot of ${buf.length} bytes is shorter than its ${PRODUCER_SNAPSHOT_HEADER_BYTES}-byte header`, buf.length);
  const version = buf.readInt16BE(0);
  if (version !== PRODUCER_SNAPSHOT_VERSION) throw corrupt(`unknown producer snapshot version ${version} (only ${PRODUCER_SNAPSHOT_VERSION} exists)`, 0);
  const count = buf.readInt32BE(COUNT_OFFSET);
  const expected = PRODUCER_SNAPSHOT_HEADER_BYTES + count * PRODUCER_ENTRY_BYTES;
  if (count < 0 || expected !== buf.length)
    throw corrupt(`entry count ${count} needs ${count < 0 ? 'a non-negative count' : `${expected} bytes`}, the file has ${buf.length}`, COUNT_OFFSET);
  const stored = buf.readUInt32BE(CRC_OFFSET);
  const computed = crc32c(buf, CRC_COVERED_FROM, buf.length) >>> 0;
  if (stored !== computed) throw corrupt(`producer snapshot CRC-32C mismatch: stored ${stored}, computed ${computed}`, CRC_OFFSET);
  const entries: ProducerSnapshotEntry[] = [];
  for (let i = 0, p = PRODUCER_SNAPSHOT_HEADER_BYTES; i < count; i++, p += PRODUCER_ENTRY_BYTES) {
    entries.push({
      producerId: buf.readBigInt64BE(p),
      epoch: buf.readInt16BE(p + 8),
      lastSequence: buf.readInt32BE(p + 10),
      lastOffset: buf.readBigInt64BE(p + 14),
      offsetDelta: buf.readInt32BE(p + 22),
      timestamp: buf.readBigInt64BE(p + 26),
      coordinatorEpoch: buf.readInt32BE(p + 34),
      currentTxnFirstOffset: buf.readBigInt64BE(p + 38),
    });
  }
  return entries;
}

/** Reads and validates one snapshot file through the I/O layer. A missing file is 'not-found'. */
export function readProducerSnapshot(io: FileIO, file: string): ProducerSnapshotEntry[] {
  const buf = readSmallFile(io, file);
  if (!buf) throw new LogtoolError('not-found', 'producer snapshot file not found', { file });
  return decodeProducerSnapshot(buf, file);
}

/** The bytes Kafka writes for these entries, in this order, CRC filled in. */
export function encodeProducerSnapshot(entries: readonly ProducerSnapshotEntry[]): Buffer {
  const buf = Buffer.alloc(PRODUCER_SNAPSHOT_HEADER_BYTES + entries.length * PRODUCER_ENTRY_BYTES);
  buf.writeInt16BE(PRODUCER_SNAPSHOT_VERSION, 0);
  buf.writeInt32BE(entries.length, COUNT_OFFSET);
  let p = PRODUCER_SNAPSHOT_HEADER_BYTES;
  for (const e of entries) {
    buf.writeBigInt64BE(e.producerId, p);
    buf.writeInt16BE(e.epoch, p + 8);
    buf.writeInt32BE(e.lastSequence, p + 10);
    buf.writeBigInt64BE(e.lastOffset, p + 14);
    buf.writeInt32BE(e.offsetDelta, p + 22);
    buf.writeBigInt64BE(e.timestamp, p + 26);
    buf.writeInt32BE(e.coordinatorEpoch, p + 34);
    buf.writeBigInt64BE(e.currentTxnFirstOffset, p + 38);
    p += PRODUCER_ENTRY_BYTES;
  }
  buf.writeUInt32BE(crc32c(buf, CRC_COVERED_FROM, buf.length) >>> 0, CRC_OFFSET);
  return buf;
}
