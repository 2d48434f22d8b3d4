/**
 * Reading a log: records from an offset or a timestamp, batch metadata, per-segment summaries.
 * Streams one segment at a time through the bounded EntryScanner buffer; stops at the first torn
 * or corrupt entry with a warning naming the file and byte position.
 */
import { LogtoolError } from '../errors.js';
import type { LogWarning, ReadableLog, SegmentInfo } from './log-types.js';
import type { LogSegment } from '../segment/segment.js';
import { entryCrcValid, type LogEntry } from '../segment/file-records.js';
import { decodeEntryRecords, entryRecords } from '../format/entry-records.js';
import type { RecordView } from '../format/record-view.js';
import { RecordIterator, ViewIterator, type RecordPlan } from './record-iterator.js';
import { OFFSET_INDEX_ENTRY_BYTES } from '../segment/offset-index.js';
import { readGuessedBatch } from '../segment/segment-lookup.js';
import { committedView, ReadCommittedFilter, type CommittedView, type IsolationLevel } from '../partition-state/isolation.js';
import { controlTypeOf, exactMaxTimestamp, readTimestamp, type LogRecord, type Timestamp } from '../format/record-batch.js';

export interface ReadOptions {
  /** First offset to return (default: the log start offset). */
  fromOffset?: number;
  /** First record with timestamp ≥ this (epoch ms); combined with fromOffset, the later wins. */
  fromTime?: number;
  /** End of the range, exclusive: no record at or above this offset is returned. */
  toOffset?: number;
  /** Stop after this many records. */
  maxRecords?: number;
  /** Include control records (transaction markers), skipped by default (never read_committed). */
  includeControl?: boolean;
  /** Kafka's isolation level (default read_uncommitted); see partition-state/isolation.ts. */
  isolationLevel?: IsolationLevel;
  /**
   * For read_committed: the caller's `committedView(log, fromOffset)`, so that a caller that needs
   * the last stable offset too scans the log's producer state once, not twice. Computed when absent.
   */
  committedView?: CommittedView;
  /** Max decompressed bytes of one batch. */
  maxDecompressedBytes?: number;
  /**
   * Read through one buffer: a record (its key, value and header views) is valid only until the
   * next one is requested. For callers that copy what they keep, as `logtool read` does into its
   * output; off by default.
   */
  reuseBuffer?: boolean;
}

/** What Log.readViews() takes: read()'s options (it always reads through one buffer). */
export type ViewReadOptions = Omit<ReadOptions, 'reuseBuffer'>;

export interface BatchReadOptions {
  fromOffset?: number;
  maxBatches?: number;
  /** Verify each batch's CRC (reported, not fatal). */
  verifyCrc?: boolean;
  /**
   * Read through one buffer: a batch (its entry's bytes, and anything decoded from them) is valid
   * only until the next one is requested. For walks that keep nothing of a batch; off by default.
   */
  reuseBuffer?: boolean;
}

export interface EntryWithSegment {
  segment: LogSegment;
  entry: LogEntry;
}

export class LogReader {
  private readonly log: ReadableLog;
  private readonly warn: (w: LogWarning) => void;

  constructor(log: ReadableLog, warn: (w: LogWarning) => void) {
    this.log = log;
    this.warn = warn;
  }

  /** First offset whose record timestamp is ≥ ts, or undefined if none. */
  offsetForTimestamp(ts: number): number | undefined {
    for (const seg of this.log.segments) {
      // A segment's max timestamp is its time index's last entry (after trim) — or unknown, then scan.
      const last = seg.timeIndex.lastEntry.timestamp;
      if (last >= 0 && last < ts && seg !== this.log.activeSegment) continue;
      const found = seg.findOffsetByTimestamp(ts, this.log.logStartOffset);
      if (found) return found.offset;
    }
    return undefined;
  }

  private startOffset(options: { fromOffset?: number; fromTime?: number }): number | undefined {
    let start = options.fromOffset ?? this.log.logStartOffset;
    if (options.fromOffset !== undefined && options.fromOffset < this.log.logStartOffset) {
      throw belowLogStart(options.fromOffset, this.log);
    }
    if (options.fromTime !== undefined) {
      const byTime = this.offsetForTimestamp(options.fromTime);
      if (byTime === undefined) return undefined;
      start = Math.max(start, byTime);
    }
    return start;
  }

  /**
   * Entries (batches) from the one holding `start`, across segments. In the segment holding
   * `start`, the scan begins at the offset index's floor entry and passes over the batches below
   * `start` by their headers (Kafka's translateOffset): only the batches returned are read whole
   * and checked. An index entry that leads to no batch boundary is distrusted: the segment is then
   * searched from its start; a segment without an entry reaching `start` is passed over. A checked
   * read first tries the batch where the index says it starts, in one read (readGuessedBatch).
   */
  *entries(start: number, verifyCrc = false, reuseBuffer: boolean | 'compressed' = false): Generator<EntryWithSegment> {
    const segs = this.log.segments;
    let idx = 0;
    for (let i = 0; i < segs.length; i++) if (segs[i]!.baseOffset <= start) idx = i;
    for (let i = idx; i < segs.length; i++) {
      const seg = segs[i]!;
      let seek = i === idx && start > seg.baseOffset;
      let from = 0;
      let skipReadEnd: number | undefined;
      // A lookup's batch read in one go where the index tells where it lies (CRC-checked reads only).
      let guessed: LogEntry | undefined;
      if (seek) {
        const span = seg.offsetIndex.lookupSpan(start);
        guessed = verifyCrc ? readGuessedBatch(seg, start, span) : undefined;
        if (guessed) {
          yield { segment: seg, entry: guessed };
          // The batches after it, if asked for: a scan from it, checked as usual (it is not yielded again).
          from = guessed.position;
          seek = false;
        } else {
          const floor = span.floor.position;
          // An index entry past the end of the log (stale index) must not be trusted.
          from = floor >= 0 && floor <= seg.size ? floor : 0;
          // Where the batch holding `start` ends at the latest: read up to there in one go (at most a chunk).
          const end = span.endPosition ?? seg.size;
          if (end > from && end <= seg.size) skipReadEnd = end;
        }
      }
      for (;;) {
        const scanner = seg.scanner({ startPosition: from, verifyCrc, validateOffsets: true, skipBelowOffset: seek ? start : undefined, skipReadEnd, reuseBuffer });
        for (const entry of scanner.entries()) if (entry.position !== guessed?.position) yield { segment: seg, entry };
        if (scanner.end.kind === 'end') break;
        if (seek && !scanner.reachedOffset) {
          if (scanner.end.kind === 'corrupt' && from > 0) {
            from = 0; // a damaged index entry: search the segment from its start
            skipReadEnd = undefined;
            continue;
          }
          break; // no batch of this segment reaches `start`
        }
        this.warn({ file: seg.logPath, position: scanner.end.position, message: `${scanner.end.reason}; reading stops at the last valid batch` });
        return;
      }
    }
  }

  /** The records of a read (see RecordIterator): nothing is looked up before the first `next()`. */
  records(options: ReadOptions = {}): Generator<LogRecord> {
    // Without reuseBuffer, still refilled in place after a compressed batch: no record is a view of its bytes.
    return new RecordIterator(() => this.plan(options, options.reuseBuffer === true || 'compressed'));
  }

  /**
   * The records of a read shown one at a time in one RecordView, valid until the next step (see
   * RecordView): the same records and checks as records(options), read through one buffer.
   */
  views(options: ViewReadOptions = {}): Generator<RecordView> {
    return new ViewIterator(() => this.plan(options, true));
  }

  /** What a read walks (RecordPlan), decided at its first `next()`; undefined when nothing is to be read. */
  private plan(options: ViewReadOptions, reuseBuffer: boolean | 'compressed'): RecordPlan | undefined {
    const start = this.startOffset(options);
    if (start === undefined || this.log.segments.length === 0) return undefined;
    const remaining = options.maxRecords ?? Infinity;
    let end = options.toOffset ?? Infinity;
    let committed: ReadCommittedFilter | undefined;
    if (options.isolationLevel === 'read_committed' && remaining > 0 && start < end) {
      const view = options.committedView ?? committedView(this.log, start);
      end = Math.min(end, view.upperBound);
      committed = new ReadCommittedFilter(view.aborted);
    }
    if (remaining <= 0 || start >= end) return undefined;
    return { start, end, remaining, committed, includeControl: options.includeControl === true, maxDecompressedBytes: options.maxDecompressedBytes, entries: this.entries(start, true, reuseBuffer) };
  }

  *batches(options: BatchReadOptions = {}): Generator<EntryWithSegment & { crcValid: boolean | undefined }> {
    const start = options.fromOffset ?? this.log.logStartOffset;
    if (start < this.log.logStartOffset) throw belowLogStart(start, this.log);
    let remaining = options.maxBatches ?? Infinity;
    for (const e of this.entries(start, false, options.reuseBuffer)) {
      if (e.entry.lastOffset < start) continue;
      let crcValid: boolean | undefined;
      if (options.verifyCrc !== false) crcValid = entryCrcValid(e.entry);
      yield { segment: e.segment, entry: e.entry, crcValid }; // a literal: a spread per batch costs more
      if (--remaining <= 0) return;
    }
  }

  segmentInfo(seg: LogSegment): SegmentInfo {
    let firstOffset: number | undefined;
    let lastOffset: number | undefined;
    let firstTimestamp: Timestamp | undefined;
    let maxTimestamp: Timestamp | undefined;
    const scanner = seg.scanner({});
    const it = scanner.entries();
    const first = it.next();
    if (!first.done) {
      firstOffset = first.value.baseOffset;
      firstTimestamp = first.value.header ? (firstRecordTimestamp(seg) ?? readTimestamp(first.value.buf, first.value.bufPos + 27)) : first.value.maxTimestamp;
      if (!first.value.header && first.value.compression !== 0) {
        // A compressed legacy wrapper's offset is its last inner offset: decode this one entry for the first.
        try {
          const inner = decodeEntryRecords(first.value, { file: seg.logPath })[0];
          if (inner) {
            firstOffset = inner.offset;
            firstTimestamp = Number(inner.timestamp); // legacy messages: always a number
          }
        } catch {
          // Undecodable: keep the wrapper's offset and timestamp (the reader reports the corruption).
        }
      }
      maxTimestamp = exactMaxTimestamp(first.value);
      lastOffset = first.value.lastOffset;
      it.return(undefined);
      // Last batch: start from the last index entry, then scan to the end. An entry that does not
      // point at a batch of this segment is a damaged index (or one a crash left ahead of a torn
      // .log): a warning naming the entry — a data problem for the command — and a scan from the
      // segment's start instead, so the summary stays true.
      const lastEntry = seg.offsetIndex.entries - 1;
      const floor = lastEntry >= 0 ? seg.offsetIndex.entry(lastEntry).position : 0;
      const scanTail = (from: number) => {
        const tail = seg.scanner({ startPosition: from });
        let scanned = 0;
        for (const e of tail.entries()) {
          scanned++;
          lastOffset = e.lastOffset;
          const max = exactMaxTimestamp(e);
          if (max > (maxTimestamp ?? -1)) maxTimestamp = max;
        }
        return { scanned, end: tail.end };
      };
      const badEntry = (why: string) => {
        this.warn({ file: seg.offsetIndex.path, position: lastEntry * OFFSET_INDEX_ENTRY_BYTES, message: `offset index entry ${lastEntry} points at position ${floor}, ${why}; rebuild the index (logtool rebuild-index)` });
        scanTail(0);
      };
      if (floor < 0 || floor > seg.size) badEntry(`outside the ${seg.size}-byte segment`);
      else {
        const tail = scanTail(floor);
        if (floor > 0 && tail.scanned === 0) badEntry(`which is not the start of a batch (${tail.end.kind === 'end' ? 'end of the segment' : tail.end.reason})`);
      }
      const indexed = seg.timeIndex.lastEntry.timestamp;
      // Index entries are doubles: one beyond ±2^53 that equals the exact batch value once rounded is not larger.
      if (indexed > Number(maxTimestamp ?? -1)) maxTimestamp = seg.timeIndex.entries > 0 ? seg.timeIndex.exactTimestamp(seg.timeIndex.entries - 1) : indexed;
    }
    const info = {
      baseOffset: seg.baseOffset,
      file: seg.logPath,
      sizeBytes: seg.size,
      firstOffset,
      lastOffset,
      firstTimestamp,
      maxTimestamp,
      indexEntries: seg.offsetIndex.entries,
      timeIndexEntries: seg.timeIndex.entries,
    };
    seg.releaseIndexes();
    return info;
  }
}

export { entryCrcValid };

export { controlTypeOf };

/** Reads below the log start offset fail, naming it (records there were deleted by retention or delete-records). */
function belowLogStart(offset: number, log: ReadableLog): LogtoolError {
  return new LogtoolError(
    'out-of-range',
    `offset ${offset} is below the log start offset ${log.logStartOffset}: earlier records were deleted (retention or delete-records); read from offset ${log.logStartOffset} or later`,
    { file: log.dir },
  );
}

/**
 * The timestamp of a segment's first record (Kafka's DefaultRecordBatch record timestamps): not the
 * first batch's base timestamp, which holds the delete horizon once the cleaner set one (Kafka's
 * RecordBatch.deleteHorizonMs) and which LogAppendTime replaces by maxTimestamp. Empty batches
 * (kept only for producer state) have none: the first batch with a record gives it. Undefined when
 * nothing decodes (the reader reports the corruption) or the segment starts with legacy messages.
 */
function firstRecordTimestamp(seg: LogSegment): Timestamp | undefined {
  try {
    for (const e of seg.scanner({}).entries()) {
      if (!e.header) return undefined;
      for (const r of entryRecords(e, { file: seg.logPath })) return r.timestamp;
    }
  } catch {
    // Undecodable: the caller keeps the batch header's timestamp.
  }
  return undefined;
}
