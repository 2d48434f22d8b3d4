/**
 * One round's recopy (Kafka's Cleaner.cleanInto / cleanSegments, kafka-format.md §15.3–15.4): the
 * segments from the log start up to the round end, grouped by size, each group filtered into one
 * `.cleaned` segment and swapped in crash-safely (swap.ts). A group of one segment in which
 * nothing changed is left in place. A dry run recopies into scratch segments instead (or, on the
 * final pass, only counts) and leaves the log directory alone.
 */
import path from 'node:path';
import { LOG_SUFFIX, segmentFileName, type LogSegment } from '../segment/segment.js';
import { CleanedWriter, countingOutput, groupSegmentsBySize, ScratchSpace, segmentOutput, type Output } from './cleaned-output.js';
import { segmentMtime } from './cleanable-range.js';
import type { OffsetMap } from './offset-map.js';
import { RecordFilter } from './record-filter.js';
import type { CleanRun } from './scan.js';
import { DELETED_SUFFIX, removeDeletedFiles, swapBegun, type RemovedFile } from './swap.js';
import { removeQuietly } from '../checkpoint.js';
import type { ActiveProducer, CleanedTxnTracker } from './types.js';

export interface CleanRound {
  /** The round ends here (exclusive): the offset map covers the dirty records below. */
  endOffset: number;
  firstUncleanable: number;
  pass: number;
  finalPass: boolean;
}

export class SegmentsCleaner {
  private readonly run: CleanRun;
  private readonly writer = new CleanedWriter();
  private readonly filter: RecordFilter;
  readonly scratch: ScratchSpace;

  constructor(run: CleanRun) {
    this.run = run;
    this.filter = new RecordFilter(run, this.writer);
    this.scratch = new ScratchSpace(run.log.io);
  }

  /** Recopies [log start, endOffset) group by group; returns the segment list afterwards. */
  async clean(segments: LogSegment[], map: OffsetMap, txn: CleanedTxnTracker, active: Map<number, ActiveProducer>, round: CleanRound): Promise<LogSegment[]> {
    const { log, opts, report } = this.run;
    const toClean = segments.filter((s) => s.baseOffset < round.endOffset);
    const rest = segments.filter((s) => s.baseOffset >= round.endOffset);
    const groups = groupSegmentsBySize(toClean, log.config, round.firstUncleanable);
    this.run.progress.start('clean', toClean.reduce((n, s) => n + s.size, 0), round.pass);
    const result: LogSegment[] = [];
    // The active producers' last data offsets, sorted: their batches are kept (dead-runs.ts).
    const lastData = Float64Array.from([...active.values()].map((p) => p.lastDataOffset).filter((o) => o >= 0)).sort();
    // The previous group's `.deleted` files, being removed in the background while this group is
    // filtered (with no delete delay); it ends before this group's first step, so steps keep their order.
    let removal: Promise<void> | undefined;
    try {
      for (const group of groups) {
        const before = group.reduce((n, s) => n + s.size, 0);
        txn.cleanedIndex = [];
        const { out, unchanged } = await this.writeGroup(group, map, txn, active, round, lastData);
        if (removal) {
          const previous = removal;
          removal = undefined;
          try {
            await previous;
          } catch (e) {
            out.discard();
            throw e;
          }
        }
        const file = path.join(log.dir, segmentFileName(out.baseOffset, LOG_SUFFIX));
        report.groups.push({ pass: round.pass, replaced: group.map((s) => s.baseOffset), file, bytesBefore: before, bytesAfter: out.size, unchanged });
        if (unchanged) {
          // Every batch was copied byte for byte: leave the segment in place.
          out.discard();
          result.push(group[0]!);
          if (opts.dryRun && round.finalPass) report.bytesAfter += before;
          continue;
        }
        if (opts.dryRun) {
          if (round.finalPass) report.bytesAfter += out.size;
          else result.push(out.segment!);
          continue;
        }
        this.run.scan.changed = true;
        opts.onStep?.({ phase: 'cleaned-written', file: out.segment!.logPath });
        const { removed, deleted } = this.swapIn(out, group);
        report.removedFiles.push(...removed);
        if (deleted.length > 0) {
          removal = removeDeletedFiles(log.io, deleted, opts.onStep);
          removal.catch(() => {}); // handled where it is awaited: not an unhandled rejection meanwhile
        }
      }
      await removal;
    } catch (e) {
      await removal?.catch(() => {}); // the first failure is the one reported
      throw e;
    }
    if (opts.dryRun && round.finalPass) {
      for (const s of rest) if (s.baseOffset < round.firstUncleanable) report.bytesAfter += s.size;
      report.segmentsAfter = groups.length + rest.length;
      return segments;
    }
    if (!opts.dryRun) return [...log.segments];
    return [...result, ...rest];
  }

  /** Filters a group's batches into a new output; unchanged when every batch was copied as it was. */
  private async writeGroup(group: LogSegment[], map: OffsetMap, txn: CleanedTxnTracker, active: Map<number, ActiveProducer>, round: CleanRound, lastData: Float64Array): Promise<{ out: Output; unchanged: boolean }> {
    const { log, opts, scan, progress, report } = this.run;
    const base = group[0]!.baseOffset;
    const out = opts.dryRun && round.finalPass
      ? countingOutput(base)
      : opts.dryRun
        ? segmentOutput(log.io, log.config, this.scratch.passDir(round.pass), base, this.scratch)
        : segmentOutput(log.io, log.config, log.dir, base);
    this.writer.out = out;
    let unchanged = group.length === 1;
    try {
      for (const seg of group) {
        // Batches the filter would drop whole, skipped unread (dead-runs.ts); counted as dropped.
        const skips = scan.deadRuns?.deadRanges(seg, map, lastData, round.firstUncleanable);
        for (const s of skips ?? []) {
          progress.add(s.to - s.from);
          report.bytesScanned += s.to - s.from;
          report.batchesRemoved += s.batches;
          report.recordsRemoved += s.records;
          unchanged = false;
        }
        for (const e of scan.entries(seg, 0, skips)) {
          progress.add(e.size);
          report.bytesScanned += e.size;
          if (!this.filter.filterBatch(e, seg, txn, active, round.firstUncleanable, map)) unchanged = false;
          await progress.maybeYield();
        }
      }
      this.writer.flush(out);
      await out.settle();
      out.finish(segmentMtime(log.io, group[group.length - 1]!), txn.cleanedIndex ?? []);
    } catch (e) {
      out.discard();
      throw e;
    }
    return { out, unchanged };
  }

  /**
   * The crash-safe swap of the written output for its group; returns the files removed and, with
   * no delete delay, their `.deleted` names for the caller to remove.
   */
  private swapIn(out: Output, group: LogSegment[]): { removed: RemovedFile[]; deleted: string[] } {
    const opts = this.run.opts;
    const io = this.run.log.io;
    // The names step 2 gives the old files (the removal is deferred to the caller with no delay).
    const deleted = (opts.deleteDelayMs ?? 0) <= 0 ? group.flatMap((s) => s.files()).map((f) => f + DELETED_SUFFIX) : [];
    try {
      const removed = this.run.log.replaceSegments(out.baseOffset, group, {
        keepRemovedDir: opts.keepRemovedDir,
        deleteDelayMs: opts.deleteDelayMs,
        deferRemoval: true,
        onStep: opts.onStep,
      });
      return { removed, deleted };
    } catch (e) {
      // A swap that never began (keep dir unusable, disk full) leaves its `.cleaned` output:
      // remove it. One whose renames began is the loader's to complete or undo (swapBegun): its
      // remaining `.cleaned` files are what tells the loader to undo it.
      // A swap that completed before a later failure (the generation file, disk full) had its old
      // files renamed `.deleted`: removed here, as the swap's own step 5 would have.
      if (!(typeof e === 'object' && e !== null && swapBegun.has(e))) {
        try {
          out.discard();
          for (const f of deleted) removeQuietly(io, f);
        } catch {
          // the swap's error is the one to report
        }
      }
      throw e;
    }
  }
}
