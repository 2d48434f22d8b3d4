/**
 * Open-time rules (Kafka's LogLoader, kafka-format.md §10): temporary files, interrupted swaps,
 * orphan indexes, recovery from the recovery point unless the directory was shut down cleanly.
 * Everything it changes is recorded in a LoadReport; what it cuts off goes to lost+found/.
 */
import path from 'node:path';
import type { FileIO } from './io.js';
import type { LogConfig } from './config.js';
import type { TopicPartition } from './partition.js';
import type { LogWarning } from './log.js';
import { LogSegment, INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, parseBaseOffset, segmentFileName } from './segment.js';
import { CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, readOffsetCheckpoint, tpKey } from './checkpoint.js';
import { moveAside, saveTail } from './lost-and-found.js';

export interface TruncationReport {
  file: string;
  position: number;
  bytes: number;
  reason: string;
  /** Where the cut-off bytes were kept (absent with discard). */
  savedTo?: string;
}

export interface LoadReport {
  cleanShutdown: boolean;
  recoveryPoint: number;
  segmentsScanned: number;
  batchesValidated: number;
  bytesValidated: number;
  indexesRebuilt: string[];
  truncated: TruncationReport[];
  segmentsDropped: { file: string; savedTo?: string }[];
  tempFilesRemoved: string[];
  swapsCompleted: string[];
  /** True when anything on disk was (or, dry-run, would be) changed by recovery. */
  repaired: boolean;
}

export interface LoadOptions {
  io: FileIO;
  dir: string;
  tp: TopicPartition | undefined;
  config: LogConfig;
  readOnly: boolean;
  onWarning: (w: LogWarning) => void;
  discardLost: boolean;
  /** Force full recovery of every segment (the `recover` command with --full). */
  forceRecoverAll?: boolean;
}

export interface LoadResult {
  segments: LogSegment[];
  logStartOffset: number;
  nextOffset: number;
  recoveryPoint: number;
  report: LoadReport;
}

const INDEX_SUFFIXES = [INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX];

function emptyReport(): LoadReport {
  return {
    cleanShutdown: false,
    recoveryPoint: 0,
    segmentsScanned: 0,
    batchesValidated: 0,
    bytesValidated: 0,
    indexesRebuilt: [],
    truncated: [],
    segmentsDropped: [],
    tempFilesRemoved: [],
    swapsCompleted: [],
    repaired: false,
  };
}

/** Pass 1–3: `.deleted`, `.cleaned` and `.swap` files by Kafka's rules. */
function resolveTempFiles(io: FileIO, dir: string, report: LoadReport): void {
  const names = io.readdir(dir);
  const swaps: string[] = [];
  let minCleanedBase = Infinity;
  const cleaned: string[] = [];
  for (const n of names) {
    if (n.endsWith('.deleted')) {
      io.unlink(path.join(dir, n));
      report.tempFilesRemoved.push(n);
    } else if (n.endsWith('.cleaned')) {
      cleaned.push(n);
      const b = parseBaseOffset(n);
      if (b !== undefined) minCleanedBase = Math.min(minCleanedBase, b);
    } else if (n.endsWith('.swap')) swaps.push(n);
  }
  const keptSwaps: string[] = [];
  for (const s of swaps) {
    const b = parseBaseOffset(s);
    if (b !== undefined && b >= minCleanedBase) {
      io.unlink(path.join(dir, s));
      report.tempFilesRemoved.push(s);
    } else keptSwaps.push(s);
  }
  for (const c of cleaned) {
    io.unlink(path.join(dir, c));
    report.tempFilesRemoved.push(c);
  }
  if (keptSwaps.length === 0) return;
  // Pass 2: the range covered by the swap segments replaces every older file inside it.
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of keptSwaps) {
    if (!s.endsWith(`${LOG_SUFFIX}.swap`)) continue;
    const base = parseBaseOffset(s)!;
    const seg = new LogSegment({ io, dir, baseOffset: base, indexIntervalBytes: 4096, maxIndexBytes: 0, writable: false, fileSuffix: '.swap' });
    let next = base;
    try {
      const r = seg.readNextOffset();
      if (r.nextOffset !== undefined) next = r.nextOffset;
    } finally {
      seg.closeQuietly();
    }
    lo = Math.min(lo, base);
    hi = Math.max(hi, next);
  }
  for (const n of io.readdir(dir)) {
    if (n.endsWith('.swap')) continue;
    const b = parseBaseOffset(n);
    if (b === undefined || !/\.(log|index|timeindex|txnindex)$/.test(n)) continue;
    if (b >= lo && b < hi) {
      io.unlink(path.join(dir, n));
      report.tempFilesRemoved.push(n);
    }
  }
  // Pass 3: rename the swaps into place.
  for (const s of keptSwaps) {
    io.rename(path.join(dir, s), path.join(dir, s.slice(0, -'.swap'.length)));
    report.swapsCompleted.push(s);
  }
  io.syncDir(dir);
}

export function loadLog(opts: LoadOptions): LoadResult {
  const { io, dir, tp, config, readOnly } = opts;
  const report = emptyReport();
  const logDir = path.dirname(dir);
  if (!readOnly) resolveTempFiles(io, dir, report);

  // Pass 4: segments and orphan indexes.
  const names = io.readdir(dir).sort();
  const logBases = new Set<number>();
  for (const n of names) if (n.endsWith(LOG_SUFFIX)) {
    const b = parseBaseOffset(n);
    if (b !== undefined && n === segmentFileName(b, LOG_SUFFIX)) logBases.add(b);
  }
  if (!readOnly) {
    for (const n of names) {
      const b = parseBaseOffset(n);
      if (b === undefined) continue;
      if (INDEX_SUFFIXES.some((s) => n === segmentFileName(b, s)) && !logBases.has(b)) {
        io.unlink(path.join(dir, n));
        report.tempFilesRemoved.push(n);
      }
    }
  }
  const bases = [...logBases].sort((a, b) => a - b);
  const segOpts = { io, dir, indexIntervalBytes: config.indexIntervalBytes, maxIndexBytes: config.segmentIndexBytes, writable: !readOnly, maxEntryBytes: config.maxReadEntryBytes };
  const segments: LogSegment[] = [];
  for (const base of bases) {
    const indexMissing = io.stat(path.join(dir, segmentFileName(base, INDEX_SUFFIX))) === undefined;
    const seg = new LogSegment({ ...segOpts, baseOffset: base });
    segments.push(seg);
    if (indexMissing && !readOnly) {
      const r = seg.recover();
      report.indexesRebuilt.push(path.basename(seg.indexPath), path.basename(seg.timeIndexPath));
      if (r.truncatedBytes > 0) opts.onWarning({ file: seg.logPath, position: r.validBytes, message: `${r.end.kind === 'end' ? '' : (r.end as { reason: string }).reason}` });
    }
  }

  // Checkpoints and the clean-shutdown marker live in the parent (Kafka's log directory).
  const key = tp ? tpKey(tp.topic, tp.partition) : undefined;
  const readCp = (name: string): number | undefined => {
    if (!key) return undefined;
    try {
      return readOffsetCheckpoint(io, path.join(logDir, name)).get(key);
    } catch (e) {
      opts.onWarning({ file: path.join(logDir, name), message: `unreadable checkpoint treated as empty: ${(e as Error).message}` });
      return undefined;
    }
  };
  const markerPath = path.join(logDir, CLEAN_SHUTDOWN_FILE);
  const clean = io.stat(markerPath) !== undefined && !opts.forceRecoverAll;
  report.cleanShutdown = clean;
  if (!readOnly && io.stat(markerPath)) io.unlink(markerPath);
  const checkpointedRecoveryPoint = readCp(RECOVERY_POINT_CHECKPOINT) ?? 0;
  const checkpointedStart = readCp(LOG_START_OFFSET_CHECKPOINT);
  report.recoveryPoint = checkpointedRecoveryPoint;

  let nextOffset: number | undefined;
  if (segments.length > 0 && !readOnly) {
    if (!clean) {
      // Recover from the segment containing the recovery point to the end.
      let startIdx = 0;
      for (let i = 0; i < segments.length; i++) if (segments[i]!.baseOffset <= checkpointedRecoveryPoint) startIdx = i;
      if (opts.forceRecoverAll) startIdx = 0;
      for (let i = startIdx; i < segments.length; i++) {
        const seg = segments[i]!;
        const sizeBefore = seg.size;
        const preview = seg.recover({ truncate: false });
        report.segmentsScanned++;
        report.batchesValidated += preview.batches;
        report.bytesValidated += preview.validBytes;
        report.indexesRebuilt.push(path.basename(seg.indexPath), path.basename(seg.timeIndexPath));
        if (preview.nextOffset !== undefined) nextOffset = preview.nextOffset;
        if (preview.truncatedBytes > 0) {
          const reason = preview.end.kind === 'end' ? 'invalid data' : preview.end.reason;
          const savedTo = opts.discardLost ? undefined : saveTail(io, dir, seg.logPath, preview.validBytes);
          seg.truncateToBytes(preview.validBytes, preview.nextOffset ?? seg.baseOffset);
          report.truncated.push({ file: seg.logPath, position: preview.validBytes, bytes: sizeBefore - preview.validBytes, reason, savedTo });
          opts.onWarning({ file: seg.logPath, position: preview.validBytes, message: `truncated ${sizeBefore - preview.validBytes} bytes: ${reason}` });
          // Kafka deletes every later segment once a segment lost bytes.
          for (const later of segments.splice(i + 1)) {
            const files = later.files();
            later.closeQuietly();
            for (const f of files) {
              const saved = opts.discardLost ? (io.unlink(f), undefined) : moveAside(io, dir, f);
              report.segmentsDropped.push({ file: f, savedTo: saved });
            }
          }
          break;
        }
      }
    } else {
      // Clean shutdown: trust sealed data, but check the active segment's tail (cheap) so a
      // marker written for a sibling partition never hides a torn tail here.
      const active = segments[segments.length - 1]!;
      const tail = active.readNextOffset();
      if (tail.end.kind !== 'end') {
        const sizeBefore = active.size;
        const r = active.recover({ truncate: false });
        report.segmentsScanned++;
        report.batchesValidated += r.batches;
        report.bytesValidated += r.validBytes;
        report.indexesRebuilt.push(path.basename(active.indexPath), path.basename(active.timeIndexPath));
        if (r.truncatedBytes > 0) {
          const reason = r.end.kind === 'end' ? 'invalid data' : r.end.reason;
          const savedTo = opts.discardLost ? undefined : saveTail(io, dir, active.logPath, r.validBytes);
          active.truncateToBytes(r.validBytes, r.nextOffset ?? active.baseOffset);
          report.truncated.push({ file: active.logPath, position: r.validBytes, bytes: sizeBefore - r.validBytes, reason, savedTo });
        }
        nextOffset = r.nextOffset;
      } else nextOffset = tail.nextOffset;
    }
  }

  if (readOnly) {
    const last = segments[segments.length - 1];
    if (last) {
      const tail = last.readNextOffset();
      nextOffset = tail.nextOffset;
      if (tail.end.kind !== 'end') opts.onWarning({ file: last.logPath, position: tail.end.position, message: tail.end.reason });
    }
  }

  // Walk back over empty trailing segments to find the log end offset.
  if (nextOffset === undefined && segments.length > 0) {
    for (let i = segments.length - 1; i >= 0 && nextOffset === undefined; i--) {
      const s = segments[i]!;
      if (i === segments.length - 1 && s.size === 0) {
        nextOffset = s.baseOffset;
        break;
      }
      const r = s.readNextOffset();
      nextOffset = r.nextOffset ?? (s.size === 0 ? s.baseOffset : undefined);
    }
  }

  const firstBase = segments[0]?.baseOffset;
  let logStartOffset = Math.max(checkpointedStart ?? 0, firstBase ?? 0);
  if (segments.length === 0) {
    if (readOnly) {
      // An empty, read-only log: a virtual empty segment is not possible, so report emptiness.
      return { segments, logStartOffset, nextOffset: logStartOffset, recoveryPoint: checkpointedRecoveryPoint, report };
    }
    const seg = new LogSegment({ ...segOpts, baseOffset: logStartOffset, create: true });
    segments.push(seg);
    io.syncDir(dir);
    nextOffset = logStartOffset;
  }
  if (nextOffset === undefined) nextOffset = segments[segments.length - 1]!.baseOffset;
  if (logStartOffset > nextOffset) logStartOffset = nextOffset;
  if (!readOnly) segments[segments.length - 1]!.resizeIndexes();
  report.repaired = report.truncated.length > 0 || report.segmentsDropped.length > 0 || report.tempFilesRemoved.length > 0 || report.swapsCompleted.length > 0;
  const recoveryPoint = clean ? nextOffset : Math.min(checkpointedRecoveryPoint, nextOffset);
  return { segments, logStartOffset, nextOffset, recoveryPoint, report };
}
