/**
 * The records of Log.read(), one `next()` per record: the consumer side of Kafka's fetch
 * (KafkaConsumer's CompletedFetch over FileRecords batches, kafka-format.md §2): records from the
 * start offset up to the end offset or maxRecords, control batches passed over unless asked for,
 * read_committed's aborted batches dropped.
 *
 * A hand-written iterator rather than a generator: a generator's suspend and resume per record
 * cost about as much as decoding a 100-byte record (issue 15, read-decode-100B). It behaves as the
 * generator did: nothing runs before the first `next()`; an error closes it; `return()` closes the
 * walk over batches (its scanner) at once; once done, it stays done. The same walk gives
 * Log.readViews() its RecordViews (ViewIterator).
 */
import { isControl, type DecodeOptions, type LogRecord, type RecordDecoder } from '../format/record-batch.js';
import { entryDecoder, entryRecordSource, entryViewSource, type RecordSource } from '../format/entry-records.js';
import { RecordView } from '../format/record-view.js';
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

/**
 * The walk over a plan's batches that both iterators share; each has its own `next()`, so that
 * V8's feedback for one does not see the other's records (a read() and a readViews() in one
 * process made the one shared `next()` polymorphic: its source call and its record's `offset`).
 */
abstract class BatchWalk<T> implements Generator<T, undefined> {
  protected plan: RecordPlan | undefined;
  private finished = false;

  /** `begin` decides the plan at the first `next()` (undefined: nothing to read). */
  constructor(private readonly begin: () => RecordPlan | undefined) {}

  abstract next(): IteratorResult<T, undefined>;

  /** Reads the records of `entry` from the next step on. */
  protected abstract startBatch(entry: LogEntry, opts: DecodeOptions): void;

  /** Drops the current batch's records. */
  protected abstract endBatch(): void;

  return(value?: undefined): IteratorResult<T, undefined> {
    return this.close(value);
  }

  throw(e: unknown): IteratorResult<T, undefined> {
    this.close(undefined);
    throw e;
  }

  [Symbol.iterator](): this {
    return this;
  }

  protected open(): RecordPlan | undefined {
    if (this.finished) return undefined;
    this.plan = this.begin();
    if (this.plan === undefined) this.finished = true;
    return this.plan;
  }

  /** Moves to the next batch with records to return; false at the end. */
  protected nextBatch(p: RecordPlan): boolean {
    this.endBatch();
    for (;;) {
      const n = p.entries.next();
      if (n.done) return false;
      const { segment, entry } = n.value;
      if (entry.lastOffset < p.start) continue;
      if (p.committed) {
        if (entry.header && entry.header.baseOffset >= p.end) return false;
        if (p.committed.skip(entry)) continue;
      } else if (entry.header && isControl(entry.header) && !p.includeControl) continue;
      this.startBatch(entry, { file: segment.logPath, maxDecompressedBytes: p.maxDecompressedBytes, fromOffset: p.start });
      return true;
    }
  }

  /** Done for good: the walk over batches is closed (its scanner's finally runs). */
  protected close(value: undefined): IteratorResult<T, undefined> {
    const p = this.plan;
    this.finished = true;
    this.plan = undefined;
    this.endBatch();
    p?.entries.return?.(undefined);
    return { value, done: true };
  }
}
Object.setPrototypeOf(BatchWalk.prototype, IteratorPrototype);

/** The records of Log.read(): a new result object per step. */
export class RecordIterator extends BatchWalk<LogRecord> {
  /** The records of the current batch. */
  private source: RecordSource | undefined;

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

  protected startBatch(entry: LogEntry, opts: DecodeOptions): void {
    this.source = entryRecordSource(entry, opts);
  }

  protected endBatch(): void {
    this.source = undefined;
  }
}

/**
 * The records of Log.readViews(), shown one at a time in one RecordView: a v2 batch's decoder is
 * called straight (RecordDecoder.nextView), not through a source per batch, and every step returns
 * the same result object (a fresh one per record was the only allocation left per step, nearly all
 * of a view read's scavenges). Legacy entries go through entryViewSource.
 */
export class ViewIterator extends BatchWalk<RecordView> {
  private readonly view = new RecordView();
  private readonly result: IteratorYieldResult<RecordView> = { value: this.view, done: false };
  /** The current v2 batch's records. */
  private decoder: RecordDecoder | undefined;
  /** The current legacy entry's records. */
  private legacy: RecordSource<RecordView> | undefined;

  next(): IteratorResult<RecordView, undefined> {
    try {
      for (;;) {
        const p = this.plan ?? this.open();
        if (p === undefined || p.remaining <= 0) return this.close(undefined);
        const d = this.decoder;
        const shown = d !== undefined ? d.nextView(this.view) : this.legacy?.next() !== undefined;
        if (!shown) {
          if (!this.nextBatch(p)) return this.close(undefined);
          continue;
        }
        const offset = this.view.offset;
        if (offset < p.start) continue;
        if (offset >= p.end) return this.close(undefined);
        p.remaining--;
        return this.result;
      }
    } catch (e) {
      this.close(undefined);
      throw e;
    }
  }

  protected startBatch(entry: LogEntry, opts: DecodeOptions): void {
    if (entry.header) this.decoder = entryDecoder(entry, opts);
    else this.legacy = entryViewSource(entry, opts, this.view);
  }

  protected endBatch(): void {
    this.decoder = undefined;
    this.legacy = undefined;
  }
}
