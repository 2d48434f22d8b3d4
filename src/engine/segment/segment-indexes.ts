/**
 * The `.index` and `.timeindex` of one segment as its appends keep them: the index half of Kafka's
 * LogSegment (lazyOffsetIndex, lazyTimeIndex, bytesSinceLastIndexEntry, maxTimestampAndOffsetSoFar
 * and the index part of append and onBecomeInactiveSegment). Entries follow Kafka's interval rule
 * (kafka-format.md §8) and stay pending in memory until a flush, a roll, a close or
 * PENDING_MAX_BYTES of them (abstract-index.ts), then go to each file with one write(2), after the
 * `.log` bytes they point at: an entry never points past written data.
 */
import { LazyIndex } from './lazy-index.js';
import type { OffsetIndex } from './offset-index.js';
import type { TimeIndex } from './time-index.js';

/** What an append tells the indexes of each batch. */
export interface AppendedBatchInfo {
  size: number;
  lastOffset: number;
  maxTimestamp: number;
}

export interface SegmentIndexesOptions {
  indexPath: string;
  timeIndexPath: string;
  /** Open the files (with the segment's options at the time of opening). */
  openOffsetIndex: (path: string) => OffsetIndex;
  openTimeIndex: (path: string) => TimeIndex;
  baseOffset: number;
  indexIntervalBytes: number;
  /** Read-only: count the entries now and never read past them (LogSegment's snapshotIndexes). */
  snapshot: boolean;
}

export class SegmentIndexes {
  readonly offset: LazyIndex<OffsetIndex>;
  readonly time: LazyIndex<TimeIndex>;
  private readonly indexIntervalBytes: number;
  private bytesSinceLastIndexEntry = 0;
  /** Largest timestamp appended and the offset it came with (−1 and the base offset: none known). */
  maxTimestampSoFar = -1;
  offsetOfMaxTimestampSoFar: number;

  constructor(opts: SegmentIndexesOptions) {
    this.offset = new LazyIndex(opts.indexPath, opts.openOffsetIndex);
    this.time = new LazyIndex(opts.timeIndexPath, opts.openTimeIndex);
    this.indexIntervalBytes = opts.indexIntervalBytes;
    this.offsetOfMaxTimestampSoFar = opts.baseOffset;
    if (opts.snapshot) {
      this.offset.snapshotEntries();
      this.time.snapshotEntries();
      this.release();
    }
  }

  /**
   * A writable segment: the largest timestamp so far from the last time-index entry. (A reader of
   * a partition with hundreds of segments opens no index for it: read-only index files are opened
   * on first use and released after summaries.)
   */
  loadMaxTimestamp(): void {
    const last = this.time.get().lastEntry;
    this.maxTimestampSoFar = last.timestamp;
    this.offsetOfMaxTimestampSoFar = last.offset;
  }

  /** Whether either index is full (Kafka rolls then). */
  get full(): boolean {
    return this.offset.get().isFull || this.time.get().isFull;
  }

  /** Kafka's LogSegment.append index rule for batches just written at `position`: at most one entry per batch in each index. */
  append(position: number, batches: readonly AppendedBatchInfo[]): void {
    const offsetIndex = this.offset.get();
    const timeIndex = this.time.get();
    // An index loop over locals, written back once (also if an index append throws): it runs once
    // per commit over up to thousands of batches, often before the optimising compiler takes it,
    // where for...of makes an iterator result and a double field read a number box per batch.
    const interval = this.indexIntervalBytes;
    let maxTimestamp = this.maxTimestampSoFar;
    let offsetOfMax = this.offsetOfMaxTimestampSoFar;
    let sinceEntry = this.bytesSinceLastIndexEntry;
    let p = position;
    try {
      for (let i = 0; i < batches.length; i++) {
        const b = batches[i]!;
        if (b.maxTimestamp > maxTimestamp) {
          maxTimestamp = b.maxTimestamp;
          offsetOfMax = b.lastOffset;
        }
        if (sinceEntry > interval) {
          offsetIndex.append(b.lastOffset, p);
          timeIndex.maybeAppend(maxTimestamp, offsetOfMax);
          sinceEntry = 0;
        }
        sinceEntry += b.size;
        p += b.size;
      }
    } finally {
      this.maxTimestampSoFar = maxTimestamp;
      this.offsetOfMaxTimestampSoFar = offsetOfMax;
      this.bytesSinceLastIndexEntry = sinceEntry;
    }
  }

  /** Writes both files' pending entries (a flush: before the recovery point moves past them). */
  writePending(): void {
    this.each((index) => index.writePending());
  }

  /** After recovery rebuilt the files: the interval rule restarts from the rebuild's end. */
  recovered(maxTimestamp: number, offsetOfMaxTimestamp: number): void {
    this.maxTimestampSoFar = maxTimestamp;
    this.offsetOfMaxTimestampSoFar = offsetOfMaxTimestamp;
    this.bytesSinceLastIndexEntry = 0;
  }

  /** Kafka's onBecomeInactiveSegment, index part: the final time-index entry, both files trimmed. */
  onBecomeInactive(): void {
    if (this.maxTimestampSoFar >= 0) this.time.get().maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar, true);
    this.each((index) => index.trimToValidSize());
  }

  /** Re-extends both files to their max size (the active segment after load). */
  resize(maxIndexBytes: number): void {
    this.each((index) => index.resize(maxIndexBytes));
  }

  /** fdatasync of both files. */
  flush(): void {
    this.each((index) => index.flush());
  }

  /** Drops the entries at or above nextOffset. */
  truncateTo(nextOffset: number): void {
    this.each((index) => index.truncateTo(nextOffset));
  }

  /** Closes both files; the next use opens them again. */
  release(): void {
    this.offset.release();
    this.time.release();
  }

  /** After the files were renamed `<name><suffix>`. */
  renamed(suffix: string): void {
    this.offset.renamed(suffix);
    this.time.renamed(suffix);
  }

  /** The offset index, then the time index (Kafka's order). */
  private each(action: (index: OffsetIndex | TimeIndex) => void): void {
    action(this.offset.get());
    action(this.time.get());
  }
}
