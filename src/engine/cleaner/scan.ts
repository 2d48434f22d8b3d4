/**
 * The cleaner's reading of sealed segments (Kafka's Cleaner reads each segment through
 * FileRecords.batches and MemoryRecords.filterTo): every batch CRC-checked (batch-reader.ts), its
 * records walked into one reusable RecordRefs (batch-records.ts) with decompression bounded by the
 * memory sizing; corruption stops the cleaner, saying whether anything had been swapped in.
 */
import { LogtoolError } from '../errors.js';
import type { LogSegment } from '../segment/segment.js';
import { BatchReader, type Batch } from './batch-reader.js';
import { RecordRefs, walkRecords } from './batch-records.js';
import type { CleanerProgress, CleanReport } from './stats.js';
import type { CleanableLog, CleanerOptions } from './types.js';

export class CleanerScan {
  /** The records of the batch walked last. */
  readonly refs = new RecordRefs();
  /** Bound on one batch's decompressed records (0 = none set). */
  maxDecompressedBytes = 0;
  /** A cleaned group has been swapped into the log. */
  changed = false;
  private readonly reader: BatchReader;

  constructor(reader: BatchReader) {
    this.reader = reader;
  }

  /** Entries of a segment with CRC verification; corruption stops the cleaner. */
  *entries(seg: LogSegment, startPosition: number): Generator<Batch> {
    try {
      yield* this.reader.batches(seg, startPosition);
    } catch (e) {
      if (!(e instanceof LogtoolError) || e.kind !== 'corrupt') throw e;
      throw new LogtoolError(
        'corrupt',
        `${e.message}; compaction stopped${this.changed ? ' (groups already swapped in are complete and consistent)' : ' before changing anything'} — run \`logtool recover\` first`,
        { file: e.file, position: e.position },
        { cause: e },
      );
    }
  }

  /** Walks the batch's records into `refs`. */
  walk(e: Batch, seg: LogSegment): void {
    walkRecords(e.buf, e.bufPos, e.header, this.refs, {
      file: seg.logPath,
      filePosition: e.position,
      maxDecompressedBytes: this.maxDecompressedBytes || undefined,
    });
  }
}

/** One cleaning run: the log, its options and time, and the report, progress and reader it shares. */
export interface CleanRun {
  readonly log: CleanableLog;
  readonly opts: CleanerOptions;
  readonly nowMs: number;
  readonly report: CleanReport;
  readonly progress: CleanerProgress;
  readonly scan: CleanerScan;
}
