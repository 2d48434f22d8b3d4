/**
 * Segment recovery (Kafka's LogLoader.recoverSegment / LogSegment.recover, kafka-format.md §10.3):
 * each planned segment validated batch by batch and its indexes rebuilt (its `.txnindex` from the
 * markers, written only when it changes: txn-index-rebuild.ts); at the first invalid
 * batch the segment is truncated — the cut-off bytes kept in lost+found/ first (unless
 * discarding), durably — and, for a segment of the recovered range, every later segment is
 * dropped (moved to lost+found/). A dry run scans and counts, and changes nothing.
 */
import path from 'node:path';
import type { ScanEnd } from '../segment/file-records.js';
import { TXN_INDEX_SUFFIX, segmentFileName, type LogSegment } from '../segment/segment.js';
import { countingSink, scanAndIndex } from './index-rebuilder.js';
import { truncateTxnIndex } from './index-sanity.js';
import type { LoadContext } from './load-context.js';
import { TxnIndexRebuilder } from '../partition-state/txn-index-rebuild.js';
import { finalName } from './load-report.js';
import { zerosLoseFlushedData, type RecoveryTask } from './recovery-plan.js';

interface SegmentScan {
  batches: number;
  validBytes: number;
  nextOffset: number | undefined;
  end: ScanEnd;
}

const scanEndReason = (end: ScanEnd, recoveryPoint: number): string =>
  end.kind !== 'end' ? end.reason : end.zeroTail ? `${end.zeroTail.bytes} zero bytes where data below the recovery point ${recoveryPoint} was flushed` : 'invalid data';

/**
 * Recovers the planned segments in order (`segments` loses those a truncation drops). Returns the
 * scan of the active segment when it was recovered (or became the last by a truncation).
 */
export function recoverSegments(ctx: LoadContext, segments: LogSegment[], tasks: Map<LogSegment, RecoveryTask>): { nextOffset: number | undefined } | undefined {
  const { report, opts } = ctx;
  const ordered = segments.filter((s) => tasks.has(s));
  const bytesTotal = ordered.reduce((n, s) => n + s.size, 0);
  let bytesBefore = 0;
  let activeResult: { nextOffset: number | undefined } | undefined;
  // Kafka's LogSegment.recover rebuilds the .txnindex too, from the producer state at the segment's base.
  const txnIndexes = new TxnIndexRebuilder({ io: ctx.io, dir: ctx.dir, segments }, ordered[0]?.baseOffset ?? -1);
  for (const seg of ordered) {
    if (!segments.includes(seg)) break; // dropped by an earlier truncation
    const sizeBefore = seg.size;
    const onProgress = opts.onProgress ? (done: number) => opts.onProgress!({ file: seg.logPath, bytesDone: bytesBefore + done, bytesTotal }) : undefined;
    const r: SegmentScan = ctx.dryRun
      ? scanAndIndex(seg.scanner({ verifyCrc: true, validateOffsets: true, reuseBuffer: true }), seg.size, { baseOffset: seg.baseOffset, indexIntervalBytes: opts.config.indexIntervalBytes, onProgress }, countingSink)
      : seg.recover({ truncate: false, onProgress, onEntry: txnIndexes.feeder(seg) });
    // The recovery point and the clean-shutdown marker will move past this segment (at the next
    // thorough flush or close): its rebuilt indexes must be on disk first. Their renames become
    // durable with the directory fsync that ends every writable open (Log.open).
    if (!ctx.dryRun) seg.flushIndexes();
    bytesBefore += sizeBefore;
    report.segmentsScanned++;
    report.batchesValidated += r.batches;
    report.bytesValidated += r.validBytes;
    report.indexesRebuilt.push(finalName(seg.indexPath), finalName(seg.timeIndexPath));
    if (seg === segments[segments.length - 1]) activeResult = r;
    const zeroTail = r.end.kind === 'end' ? r.end.zeroTail : undefined;
    const next = segments[segments.indexOf(seg) + 1];
    if (zeroTail && !zerosLoseFlushedData(r.nextOffset ?? seg.baseOffset, next?.baseOffset, ctx.report.recoveryPoint)) trimZeroTail(ctx, seg, zeroTail.position, r.nextOffset);
    else if (r.validBytes < sizeBefore && truncateSegment(ctx, segments, seg, tasks.get(seg)!, r, sizeBefore)) activeResult = r;
    const txnIndex = path.join(ctx.dir, segmentFileName(seg.baseOffset, TXN_INDEX_SUFFIX));
    if (!ctx.dryRun && txnIndexes.rebuild(seg, txnIndex)) report.indexesRebuilt.push(finalName(txnIndex));
  }
  return activeResult;
}

/**
 * Cuts preallocated zeros (a writer's space ahead of its log end, segment.ts) off a segment: not
 * data and not damage, so silently — no lost+found, no report, no warning. Made durable at once: a
 * segment below the recovery point is not scanned again.
 */
export function trimZeroTail(ctx: LoadContext, seg: LogSegment, position: number, nextOffset: number | undefined): void {
  if (ctx.dryRun) return;
  ctx.changing();
  seg.truncateToBytes(position, nextOffset ?? seg.baseOffset);
  seg.flushLog();
}

/**
 * Cuts a segment at its first invalid byte. Keeps the bytes first (durably), then drops later
 * segments, then truncates: a crash at any point leaves a state the next recovery handles the same
 * way. Returns true when the later segments were dropped (the segment is now the last).
 */
function truncateSegment(ctx: LoadContext, segments: LogSegment[], seg: LogSegment, task: RecoveryTask, r: SegmentScan, sizeBefore: number): boolean {
  const { io, report, opts } = ctx;
  const reason = scanEndReason(r.end, report.recoveryPoint);
  ctx.changing();
  const savedTo = ctx.lost.saveTail(finalName(seg.logPath), r.validBytes, sizeBefore);
  if (task.dropsLater) dropLaterSegments(ctx, segments, seg);
  const nextOffset = r.nextOffset ?? seg.baseOffset;
  if (!ctx.dryRun) {
    seg.truncateToBytes(r.validBytes, nextOffset);
    seg.flush();
  }
  const txn = path.join(ctx.dir, segmentFileName(seg.baseOffset, TXN_INDEX_SUFFIX));
  truncateTxnIndex(io, txn, nextOffset, ctx.dryRun);
  const cut = sizeBefore - r.validBytes;
  report.truncated.push({ file: finalName(seg.logPath), position: r.validBytes, bytes: cut, reason, savedTo });
  report.bytesTruncated += cut;
  opts.onWarning({
    file: finalName(seg.logPath),
    position: r.validBytes,
    message: `${ctx.dryRun ? 'would truncate' : 'truncated'} ${cut} bytes: ${reason}${savedTo ? `; ${ctx.dryRun ? 'would be ' : ''}saved to ${savedTo}` : ''}`,
  });
  return task.dropsLater;
}

/** Kafka's rule: after a truncation, every later segment goes (to lost+found/ unless discarding). */
function dropLaterSegments(ctx: LoadContext, segments: LogSegment[], seg: LogSegment): void {
  const { io, report, opts } = ctx;
  for (const later of segments.splice(segments.indexOf(seg) + 1)) {
    const files = later.files();
    const sizes = files.map((f) => io.stat(f)?.size ?? 0);
    later.closeQuietly();
    files.forEach((f, k) => {
      const saved = ctx.lost.moveAside(finalName(f));
      report.segmentsDropped.push({ file: finalName(f), bytes: sizes[k]!, savedTo: saved });
      opts.onWarning({ file: f, message: `segment after the truncated ${path.basename(seg.logPath)} ${ctx.dryRun ? 'would be' : 'is'} dropped${saved ? `; ${ctx.dryRun ? 'would be ' : ''}moved to ${saved}` : ''}` });
    });
  }
  ctx.lost.sync();
}
