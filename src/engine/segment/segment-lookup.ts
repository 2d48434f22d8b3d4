/**
 * Finding a place in one segment (Kafka's LogSegment.translateOffset, findOffsetByTimestamp and
 * readNextOffset): the floor entry of an index, then a scan of the `.log` from it. An index entry
 * that points outside the log, or not at a batch boundary (a stale or damaged index), is not
 * trusted: the scan then starts at the segment's beginning.
 */
import { DEFAULT_CHUNK_BYTES, entryCrcValid, type EntryScanner, type FileSource, type LogEntry, type ScanEnd } from './file-records.js';
import type { OffsetIndex, OffsetSpan } from './offset-index.js';
import type { TimeIndex } from './time-index.js';
import { LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, readBatchHeader, type LogRecord } from '../format/record-batch.js';
import { entryRecords } from '../format/entry-records.js';

/** What the lookups need of a segment (LogSegment). */
export interface ScannableSegment {
  readonly baseOffset: number;
  readonly logPath: string;
  /** Bytes of log entries in the `.log`. */
  readonly size: number;
  readonly offsetIndex: OffsetIndex;
  readonly timeIndex: TimeIndex;
  /** The `.log`, read by position. */
  readonly file: FileSource;
  scanner(opts: { startPosition?: number; verifyCrc?: boolean }): EntryScanner;
}

/**
 * The batch holding `target` in one read of the range the offset index guessed for it
 * (OffsetSpan.batch): a CRC-checked v2 batch starting there whose offsets, within the segment's,
 * reach `target`. Undefined when the guess does not hold (then the caller scans from the floor
 * entry, which also reports any damage found): a guess is never trusted beyond those checks.
 */
export function readGuessedBatch(seg: ScannableSegment, target: number, span: OffsetSpan): LogEntry | undefined {
  const guess = span.batch;
  if (guess === undefined) return undefined;
  const bytes = guess.end - guess.position;
  // A damaged entry may point anywhere: read only a sane range inside the segment (at most a chunk).
  if (!(guess.position >= 0 && guess.end <= seg.size && bytes >= RECORD_BATCH_OVERHEAD && bytes <= DEFAULT_CHUNK_BYTES)) return undefined;
  const buf = Buffer.allocUnsafe(bytes);
  const entry = seg.file.read(buf, 0, bytes, guess.position) === bytes ? batchHolding(buf, guess.position, seg, target) : undefined;
  seg.offsetIndex.batchGuessed(entry !== undefined);
  return entry;
}

/** The v2 batch at buf[0] as a scanned entry, if it lies whole in buf, passes its CRC and its offsets reach `target`. */
function batchHolding(buf: Buffer, position: number, seg: ScannableSegment, target: number): LogEntry | undefined {
  const size = buf.readInt32BE(8) + LOG_OVERHEAD;
  if (buf[16] !== 2 || size < RECORD_BATCH_OVERHEAD || size > buf.length) return undefined;
  const header = readBatchHeader(buf, 0);
  const lastOffset = header.baseOffset + header.lastOffsetDelta;
  if (header.lastOffsetDelta < 0 || header.recordsCount < 0 || header.baseOffset > target || lastOffset < target) return undefined;
  if (header.baseOffset < seg.baseOffset || lastOffset - seg.baseOffset > 0x7fffffff) return undefined;
  const entry: LogEntry = {
    position,
    size,
    magic: 2,
    header,
    baseOffset: header.baseOffset,
    lastOffset,
    maxTimestamp: header.maxTimestamp,
    compression: header.attributes & 0x07,
    buf,
    bufPos: 0,
    complete: true,
    source: seg.file,
  };
  return entryCrcValid(entry) ? entry : undefined;
}

/**
 * Position of the first entry whose last offset ≥ target (floor lookup, then scan), or
 * undefined if no entry in the segment reaches the target.
 */
export function translateOffset(seg: ScannableSegment, target: number, startingFilePosition = 0, ignoreIndex = false): { position: number; entry: LogEntry } | undefined {
  const floor = ignoreIndex ? { offset: seg.baseOffset, position: 0 } : seg.offsetIndex.lookup(target);
  const start = Math.max(floor.position, startingFilePosition);
  // An index entry past the end of the log (stale index) must not be trusted.
  const from = start >= 0 && start <= seg.size ? start : 0;
  const scanner = seg.scanner({ startPosition: from });
  for (const entry of scanner.entries()) {
    if (entry.lastOffset >= target) return { position: entry.position, entry };
  }
  // An index entry that does not point at a batch boundary (damaged index): scan from the start.
  if (scanner.end.kind === 'corrupt' && from > 0) return translateOffset(seg, target, 0, true);
  return undefined;
}

/** First record with timestamp ≥ ts and offset ≥ startOffset (Kafka's findOffsetByTimestamp). */
export function findOffsetByTimestamp(seg: ScannableSegment, ts: number, startOffset = seg.baseOffset): LogRecord | undefined {
  const floor = seg.timeIndex.lookup(ts);
  const pos = seg.offsetIndex.lookup(Math.max(floor.offset, startOffset)).position;
  const scanner = seg.scanner({ startPosition: pos >= 0 && pos <= seg.size ? pos : 0 });
  for (const entry of scanner.entries()) {
    if (entry.maxTimestamp < ts || entry.lastOffset < startOffset) continue;
    for (const r of entryRecords(entry, { file: seg.logPath })) {
      if (r.timestamp >= ts && r.offset >= startOffset) return r;
    }
  }
  return undefined;
}

/**
 * Next offset after the last entry: scans from the last index entry (cheap: at most about
 * index.interval.bytes plus one batch). Also reports how the scan ended, so a torn tail is seen.
 */
export function readNextOffset(seg: ScannableSegment): { nextOffset: number | undefined; end: ScanEnd; validBytes: number } {
  const index = seg.offsetIndex;
  const last = index.entries > 0 ? index.entry(index.entries - 1) : { offset: seg.baseOffset, position: 0 };
  // A damaged entry may point anywhere (negative, past the end): then scan from the start.
  let start = last.position >= 0 && last.position <= seg.size ? last.position : 0;
  let next: number | undefined;
  const scan = (from: number) => {
    const s = seg.scanner({ startPosition: from, verifyCrc: true });
    for (const e of s.entries()) next = e.lastOffset + 1;
    return s;
  };
  let s = scan(start);
  if ((s.end.kind === 'corrupt' || (s.end.kind === 'end' && s.end.zeroTail)) && start > 0 && next === undefined) {
    // The index pointed somewhere that is not a batch boundary: fall back to a full scan.
    start = 0;
    s = scan(0);
  }
  return { nextOffset: next, end: s.end, validBytes: s.end.kind === 'end' && !s.end.zeroTail ? seg.size : s.validBytes };
}
