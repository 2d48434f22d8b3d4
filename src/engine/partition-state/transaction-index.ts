/**
 * The transaction index, `<20-digit base offset>.txnindex` (kafka-format.md §6.3; Kafka's
 * TransactionIndex / AbortedTxn): one 34-byte entry per aborted transaction whose ABORT marker lies
 * in the segment — version int16 0, producerId int64, firstOffset int64, lastOffset int64 (the
 * marker's offset), lastStableOffset int64 (the LSO once the abort completed). Not preallocated;
 * absent means empty; a trailing partial entry is ignored, as Kafka does.
 */
import type { FileIO } from '../io.js';
import { writeFileDurable } from '../checkpoint.js';
import { readInt64, writeInt64 } from '../format/record-batch.js';
import { forEachEntry, TXN_INDEX_ENTRY_BYTES } from '../recovery/index-sanity.js';

export { TXN_INDEX_ENTRY_BYTES };

/** Kafka's AbortedTxn. */
export interface AbortedTxn {
  producerId: number;
  firstOffset: number;
  lastOffset: number;
  lastStableOffset: number;
}

/** The bytes of these entries, in this order. */
export function encodeTxnIndex(entries: readonly AbortedTxn[]): Buffer {
  const buf = Buffer.alloc(entries.length * TXN_INDEX_ENTRY_BYTES);
  entries.forEach((t, i) => {
    const p = i * TXN_INDEX_ENTRY_BYTES;
    buf.writeInt16BE(0, p);
    writeInt64(buf, p + 2, t.producerId);
    writeInt64(buf, p + 10, t.firstOffset);
    writeInt64(buf, p + 18, t.lastOffset);
    writeInt64(buf, p + 26, t.lastStableOffset);
  });
  return buf;
}

/** Writes a whole `.txnindex` (created or truncated) durably. */
export function writeTxnIndex(io: FileIO, file: string, entries: readonly AbortedTxn[]): void {
  writeFileDurable(io, file, encodeTxnIndex(entries));
}

/**
 * Kafka's TransactionIndex.append: one entry after the file's whole entries (a trailing partial
 * entry, which Kafka ignores, is overwritten), made durable.
 */
export function appendTxnIndex(io: FileIO, file: string, entry: AbortedTxn): void {
  const fd = io.open(file, io.stat(file) ? 'r+' : 'w+');
  try {
    const at = Math.floor(io.fstat(fd).size / TXN_INDEX_ENTRY_BYTES) * TXN_INDEX_ENTRY_BYTES;
    const buf = encodeTxnIndex([entry]);
    io.write(fd, buf, 0, buf.length, at);
    io.truncate(fd, at + buf.length);
    io.datasync(fd);
  } finally {
    io.close(fd);
  }
}

/**
 * Kafka's TransactionIndex.collectAbortedTxns for a fetch of [fetchOffset, upperBoundOffset): the
 * entries with lastOffset ≥ fetchOffset and firstOffset < upperBoundOffset. `complete` is true
 * when an entry's lastStableOffset reaches the upper bound (later segments need not be searched).
 * A missing file has no entries.
 */
export function collectAbortedTxns(io: FileIO, file: string, fetchOffset: number, upperBoundOffset: number): { aborted: AbortedTxn[]; complete: boolean } {
  const aborted: AbortedTxn[] = [];
  let complete = false;
  if (!io.stat(file)) return { aborted, complete };
  forEachEntry(io, file, TXN_INDEX_ENTRY_BYTES, (buf, at) => {
    const t: AbortedTxn = {
      producerId: readInt64(buf, at + 2),
      firstOffset: readInt64(buf, at + 10),
      lastOffset: readInt64(buf, at + 18),
      lastStableOffset: readInt64(buf, at + 26),
    };
    if (t.lastOffset >= fetchOffset && t.firstOffset < upperBoundOffset) aborted.push(t);
    if (t.lastStableOffset >= upperBoundOffset) {
      complete = true;
      return { file, position: 0, reason: 'stop' };
    }
    return undefined;
  });
  return { aborted, complete };
}
