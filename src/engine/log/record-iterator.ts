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
 * Log.readViews() its RecordViews: what a step yields comes from the plan's `source`.
 */
import { isControl, type DecodeOptions } from '../format/record-batch.js';
import type { RecordSource } from '../format/entry-records.js';
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

/** The records of one batch, as a read steps through them (entryRecordSource, entryViewSource). */
export type SourceOf<T> = (entry: LogEntry, opts: DecodeOptions) => RecordSource<T>;

/** %IteratorPrototype%, a generator's grandparent: what makes an iterator an iterator. */
const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())) as object;

export class RecordIterator<T extends { offset: number }> implements Generator<T, undefined> {
  private plan: RecordPlan | undefined;
  /** The records of the current batch. */
  private source: RecordSource<T> | undefined;
  private finished = false;
  /** The one result object of a `reuseResult` iterator. */
  private result: IteratorYieldResult<T> | undefined;

  /**
   * `begin` decides the plan at the first `next()` (undefined: nothing to read); `sourceOf` reads
   * each batch's records. `reuseResult`: every step returns the same result object, refilled (for
   * records that are themselves reused, RecordViews: a fresh object per record was the only
   * allocation left per step, nearly all of a view read's scavenges).
   */
  constructor(
    private readonly begin: () => RecordPlan | undefined,
    private readonly sourceOf: SourceOf<T>,
    private readonly reuseResult = false,
  ) {}

  next(): IteratorResult<T, undefined> {
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
        if (!this.reuseResult) return { value: r, done: false };
        const res = (this.result ??= { value: r, done: false });
        res.value = r;
        return res;
      }
    } catch (e) {
      this.close(undefined);
      throw e;
    }
  }

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
      this.source = this.sourceOf(entry, { file: segment.logPath, maxDecompressedBytes: p.maxDecompressedBytes, fromOffset: p.start });
      return true;
    }
  }

  /** Done for good: the walk over batches is closed (its scanner's finally runs). */
  private close(value: undefined): IteratorResult<T, undefined> {
    const p = this.plan;
    this.finished = true;
    this.plan = undefined;
    this.source = undefined;
    p?.entries.return?.(undefined);
    return { value, done: true };
  }
}
Object.setPrototypeOf(RecordIterator.prototype, IteratorPrototype);
