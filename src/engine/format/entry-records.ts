/**
 * Records of any log entry, whatever its format: v2 batches here, legacy v0/v1 message sets
 * through legacy.ts. Readers call this, never a format-specific decoder.
 */
import './codecs/index.js';
import { entryBytes, type LogEntry } from '../file-records.js';
import { decodeRecords, type DecodeOptions, type LogRecord } from './record-batch.js';
import { decodeLegacyEntry } from './legacy.js';

export function decodeEntryRecords(entry: LogEntry, opts: DecodeOptions = {}): LogRecord[] {
  const o = { ...opts, filePosition: opts.filePosition ?? entry.position };
  const { buf, pos } = entryBytes(entry);
  if (entry.header) return decodeRecords(buf, pos, entry.header, o);
  return decodeLegacyEntry(buf, pos, entry.size, o);
}
