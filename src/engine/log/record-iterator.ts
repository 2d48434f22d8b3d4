/**
 * The records of Log.read(), one `next()` per record: the consumer side of Kafka's fetch
 * (KafkaConsumer's CompletedFetch over FileRecords batches, kafka-format.md §2): records from the
 * start offset up to the end offset or maxRecords, control batches passed over unless asked for,
 * read_committed's aborted batches dropped.
 *
 * A hand-written iterator rather than a generator: a generator's suspend and resume per record
 * cost about as much as decoding a 100-byte record (issue 15, read-decode-100B). It behaves as the
 * generator did: nothing runs before the first `next()`; an error closes it; `return()` closes the
 * walk over batches (its scanner) at once; once done, it stays done.
 */
import { isControl, type LogRecord } from '../format/record-batch.js';
import { entryRecordSource, type RecordSource } from '../format/entry-records.js';
import type { LogEntry } from '../segment/file-records.js';
import type { ReadCommittedFilter } from '../partition-state/isolation.js';

/** What a read walks, decided at its first `next()` (LogReader.records). */
export interface RecordPlan {
  /** First offset returned. */
  start: number;
  /** No record at or above this offset is returned. */
  end: number;
  /** Records still to return (maxRecords). */
  remaining: number;
  /** read_committed: drops aborted batches (and `end` is the last stable offset). */
  committed: ReadCommittedFilter | undefined;
  includeControl: boolean;
  maxDecompressedBytes: number | undefined;
  /** The batches from the one holding `start` (LogReader.entries). */
  entries: Iterator<{ segment: { logPath: string }; entry: LogEntry }>;
}

/** %IteratorPrototype%, a generator's grandparent: what makes an iterator an iterator. */
const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())) as object;

export class RecordIterator implements Generator<LogRecord, undefined> {
  private plan: RecordPlan | undefined;
  /** The records of the current batch. */
  private source: RecordSource | undefined;
  private finished = false;

  /** `begin` decides the plan at the first `next()` (undefined: nothing to read). */
  constructor(private readonly begin: () => RecordPlan | undefined) {}

  next(): IteratorResult<LogRecord, undefined> {
    try {
      for (;;) {
        const p = this.plan ?? this.open();
        if (p === undefined || p.remaining <= 0) return this.close(undefined);
        const r = this.source?.next();
        if (r === undefined) {
          if (!this.nextBatch(p)) return this.close(undefined);
          continue;
        }
        if (r.offset < p.start) continue;
        if (r.offset >= p.end) return this.close(undefined);
        p.remaining--;
        return { value: r, done: false };
      }
    } catch (e) {
      this.close(undefined);
      throw e;
    }
  }

  return(value?: undefined): IteratorResult<LogRecord, undefined> {
    return this.close(value);
  }

  throw(e: unknown): IteratorResult<LogRecord, undefined> {
    this.close(undefined);
    throw e;
  }

  [Symbol.iterator](): this {
    return this;
  }

  private open(): RecordPlan | undefined {
    if (this.finished) return undefined;
    this.plan = this.begin();
    if (this.plan === undefined) this.finished = true;
    return this.plan;
  }

  /** Moves to the next batch with records to return; false at the end. */
  private nextBatch(p: RecordPlan): boolean {
    this.source = undefined;
    for (;;) {
      const n = p.entries.next();
      if (n.done) return false;
      const { segment, entry } = n.value;
      if (entry.lastOffset < p.start) continue;
      if (p.committed) {
        if (entry.header && entry.header.baseOffset >= p.end) return false;
        if (p.committed.skip(entry)) continue;
      } else if (entry.header && isControl(entry.header) && !p.includeControl) continue;
      this.source = entryRecordSource(entry, { file: segment.logPath, maxDecompressedBytes: p.maxDecompressedBytes, fromOffset: p.start });
      return true;
    }
  }

  /** Done for good: the walk over batches is closed (its scanner's finally runs). */
  private close(value: undefined): IteratorResult<LogRecord, undefined> {
    const p = this.plan;
    this.finished = true;
    this.plan = undefined;
    this.source = undefined;
    p?.entries.return?.(undefined);
    return { value, done: true };
  }
}
Object.setPrototypeOf(RecordIterator.prototype, IteratorPrototype);
