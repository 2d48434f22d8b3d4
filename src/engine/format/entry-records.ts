/**
 * Records of any log entry, whatever its format: v2 batches here, legacy v0/v1 message sets
 * through legacy.ts. Readers call this, never a format-specific decoder.
 */
import './codecs/index.js';
import { entryBytes, type LogEntry } from '../segment/file-records.js';
import { decodeRecords, RecordDecoder, type DecodeOptions, type LogRecord } from './record-batch.js';
import { decodeLegacyEntry } from './legacy.js';
import type { RecordView } from './record-view.js';

/**
 * The entry's whole bytes, and the decode options naming its position: every option written out
 * (the type makes a new one a compile error here), as `{ ...opts, filePosition }` cost V8 11 (Node
 * 20) 4–7 µs per batch — a spread with a key added makes a new map each time.
 */
function entryInput(entry: LogEntry, opts: DecodeOptions): { buf: Buffer; pos: number; o: DecodeOptions } {
  const { buf, pos } = entryBytes(entry);
  const o: DecodeOptions = {
    maxDecompressedBytes: opts.maxDecompressedBytes,
    file: opts.file,
    filePosition: opts.filePosition ?? entry.position,
    fromOffset: opts.fromOffset,
  } satisfies Record<keyof DecodeOptions, unknown>;
  return { buf, pos, o };
}

export function decodeEntryRecords(entry: LogEntry, opts: DecodeOptions = {}): LogRecord[] {
  const { buf, pos, o } = entryInput(entry, opts);
  if (entry.header) return decodeRecords(buf, pos, entry.header, o);
  return decodeLegacyEntry(buf, pos, entry.size, o);
}

/** Records one at a time: `next()` until undefined. */
export interface RecordSource<T = LogRecord> {
  next(): T | undefined;
}

/**
 * The records of an entry one at a time: what readers of untrusted data use, so that a v2 batch
 * makes them hold one record whatever its record count (a legacy entry is decoded whole: its
 * messages are at least 26 bytes each within maxDecompressedBytes). A plain `next()` rather than
 * a generator: a sequential read calls it once per record.
 */
export function entryRecordSource(entry: LogEntry, opts: DecodeOptions = {}): RecordSource {
  const { buf, pos, o } = entryInput(entry, opts);
  if (entry.header) return new RecordDecoder(buf, pos, entry.header, o);
  const records = decodeLegacyEntry(buf, pos, entry.size, o);
  let i = 0;
  return { next: () => records[i++] };
}

/** The decoder of a v2 entry's records (entry.header set): what entryRecordSource reads it with. */
export function entryDecoder(entry: LogEntry, opts: DecodeOptions): RecordDecoder {
  const { buf, pos, o } = entryInput(entry, opts);
  return new RecordDecoder(buf, pos, entry.header!, o);
}

/**
 * The records of an entry shown one at a time in `view` (RecordDecoder.nextView: every check
 * entryRecordSource makes, no object per record); a legacy entry is decoded whole as there.
 */
export function entryViewSource(entry: LogEntry, opts: DecodeOptions, view: RecordView): RecordSource<RecordView> {
  if (entry.header) {
    const d = entryDecoder(entry, opts);
    return { next: () => (d.nextView(view) ? view : undefined) };
  }
  const { buf, pos, o } = entryInput(entry, opts);
  const records = decodeLegacyEntry(buf, pos, entry.size, o);
  let i = 0;
  return { next: () => (i < records.length ? view.showRecord(records[i++]!) : undefined) };
}

/**
 * How many records an entry holds, every one checked as a read would (the same errors), none
 * built: a v2 batch is validated without a record object or view per record.
 */
export function entryRecordCount(entry: LogEntry, opts: DecodeOptions = {}): number {
  const { buf, pos, o } = entryInput(entry, opts);
  if (entry.header) return new RecordDecoder(buf, pos, entry.header, o).checkRest();
  return decodeLegacyEntry(buf, pos, entry.size, o).length;
}

/** entryRecordSource as an iterable. */
export function* entryRecords(entry: LogEntry, opts: DecodeOptions = {}): Generator<LogRecord> {
  const source = entryRecordSource(entry, opts);
  for (let r = source.next(); r !== undefined; r = source.next()) yield r;
}
