/**
 * The cleaner's reading of sealed segments (Kafka's Cleaner reads each segment through
 * FileRecords.batches and MemoryRecords.filterTo): every batch CRC-checked (batch-reader.ts), its
 * records walked into one reusable RecordRefs (batch-records.ts) with decompression bounded by the
 * memory sizing; corruption stops the cleaner, saying whether anything had been swapped in.
 */
import { LogtoolError } from '../errors.js';
import type { LogSegment } from '../segment/segment.js';
import { BatchReader, type Batch, type PositionRange } from './batch-reader.js';
import { RecordRefs, walkRecords } from './batch-records.js';
import type { DeadRuns, SkipRange } from './dead-runs.js';
import type { CleanerProgress, CleanReport } from './stats.js';
import type { CleanableLog, CleanerOptions } from './types.js';

export class CleanerScan {
  /** The records of the batch walked last. */
  readonly refs = new RecordRefs();
  /** Bound on one batch's decompressed records (0 = none set). */
  maxDecompressedBytes = 0;
  /** A cleaned group has been swapped into the log. */
  changed = false;
  /** Runs of batches the recopy may skip, recorded by the map build (none without LatestMarks). */
  deadRuns: DeadRuns | undefined;
  private readonly reader: BatchReader;
  /** Per segment, the positions whose batches have had their CRC verified in this run. */
  private readonly verified = new Map<LogSegment, PositionRange>();

  constructor(reader: BatchReader) {
    this.reader = reader;
  }

  /** Bytes whose CRC was computed in this run. */
  get bytesCrcChecked(): number {
    return this.reader.bytesCrcChecked;
  }

  /**
   * Entries of a segment with CRC verification; corruption stops the cleaner. Each batch's CRC is
   * computed once per run: a segment's later scans (the recopy after the map build, the next
   * pass) skip it over the positions an earlier scan verified — the cleaner holds the log's lock,
   * so a sealed segment's bytes do not change between its scans. The batches of `skips` (checked
   * by an earlier scan of this run) are passed over unread.
   */
  *entries(seg: LogSegment, startPosition: number, skips?: readonly SkipRange[]): Generator<Batch> {
    const before = this.verified.get(seg);
    // The range verified so far, extended by this scan while it stays contiguous with it.
    const range = before && before.from <= startPosition && startPosition <= before.to ? before : { from: startPosition, to: startPosition };
    this.verified.set(seg, range);
    let skipAt = 0;
    const passSkips = (upTo: number): void => {
      for (; skips && skipAt < skips.length && skips[skipAt]!.to <= upTo; skipAt++) if (skips[skipAt]!.from === range.to) range.to = skips[skipAt]!.to;
    };
    try {
      for (const e of this.reader.batches(seg, startPosition, before ?? range, skips)) {
        passSkips(e.position);
        if (e.position === range.to) range.to = e.position + e.size;
        yield e;
      }
      passSkips(Infinity);
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
