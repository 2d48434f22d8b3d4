/**
 * `dump-log` for transaction indexes (`.txnindex`, kafka-format.md §6.3), as DumpLogSegments.dumpTxnIndex
 * prints TransactionIndex.allAbortedTxns (storage/.../log/TransactionIndex.java, AbortedTxn.java):
 * one `version: … producerId: … firstOffset: … lastOffset: … lastStableOffset: …` line per 34-byte
 * entry, a trailing partial entry ignored; with --json one object per entry with those fields.
 */
import path from 'node:path';
import { LogtoolError } from '../api/format.js';
import { parseBaseOffset } from '../inspect/format.js';
import { kafkaJsonText } from '../api/internal-topics.js';
import type { Output } from '../render/output.js';
import { readIndexFile } from './dump-log-index.js';

const ENTRY_BYTES = 34;
/** AbortedTxn.CURRENT_VERSION. */
const CURRENT_VERSION = 0;

/** A `.txnindex` file; an entry of an unknown version is a problem (exit 3) and, as in Kafka, prints no entry. */
export async function dumpTxnIndex(file: string, out: Output, json: boolean | undefined): Promise<boolean> {
  if (parseBaseOffset(path.basename(file)) === undefined) throw new LogtoolError('usage', 'index file name does not start with a base offset', { file });
  const { buf, entries } = readIndexFile(file, ENTRY_BYTES);
  // allAbortedTxns reads every entry before DumpLogSegments prints one; AbortedTxn.version() is
  // the first byte alone (signed), and only a version above the current one is rejected.
  for (let i = 0; i < entries; i++) {
    const version = buf.readInt8(i * ENTRY_BYTES);
    if (version > CURRENT_VERSION) {
      const message = `Unexpected aborted transaction version ${version} in transaction index ${path.resolve(file)}, current version is ${CURRENT_VERSION}`;
      process.stderr.write(`${new LogtoolError('corrupt', message, { file, position: i * ENTRY_BYTES }).describe()}\n`);
      return true;
    }
  }
  for (let i = 0; i < entries && !out.closed; i++) {
    const at = i * ENTRY_BYTES;
    const e = {
      version: buf.readInt8(at),
      producerId: buf.readBigInt64BE(at + 2),
      firstOffset: buf.readBigInt64BE(at + 10),
      lastOffset: buf.readBigInt64BE(at + 18),
      lastStableOffset: buf.readBigInt64BE(at + 26),
    };
    if (json) await out.line(kafkaJsonText(e));
    else await out.line(`version: ${e.version} producerId: ${e.producerId} firstOffset: ${e.firstOffset} lastOffset: ${e.lastOffset} lastStableOffset: ${e.lastStableOffset}`);
  }
  return false;
}
