/**
 * Open-time rules (Kafka's LogLoader, kafka-format.md §10), in Kafka's order of passes:
 *
 *  1. temporary files: `*.deleted` removed (and logtool's own stale `*.index.tmp`), `*.cleaned`
 *     removed, `*.swap` at or above the lowest `.cleaned` base offset removed (an unfinished
 *     clean/split);
 *  2. interrupted swaps: every file numbered inside the remaining `.log.swap` segments' offset
 *     range removed;
 *  3. the remaining `.swap` files renamed into place;
 *  4. segments: orphan index files removed; each `.log` opened; missing or insane indexes noted;
 *  5. recovery: without a trusted clean-shutdown marker, every segment from the one holding the
 *     recovery point onward is validated batch by batch and its indexes rebuilt; the first invalid
 *     batch truncates its segment and every later segment is dropped. Segments noted in pass 4 are
 *     recovered too (truncated alone, as Kafka does, if they lie below the recovery point).
 *
 * logtool's additions, all on the side of not losing or hiding data:
 *  - the clean-shutdown marker is per log directory (the parent), so a marker written when a
 *    sibling closed must not vouch for this partition: it is trusted only if this partition's
 *    checkpointed recovery point reaches its log end offset (a clean close always writes it so),
 *    and the active segment's tail is still checked (cheaply: from its last index entry);
 *  - deleting the marker is made durable (directory fsync) before anything is written, so a
 *    crash later cannot resurrect it;
 *  - a missing `.timeindex` is rebuilt too (Kafka starts an empty one), and indexes of segments
 *    not recovered anyway pass sanity checks beyond Kafka's own (index-sanity.ts);
 *  - what is cut off or dropped goes to lost+found/ (unless discarding), saved durably before the
 *    truncation;
 *  - a dry run computes the same report with every file opened read-only;
 *  - changes are bracketed by the partition's generation (cleaner/generation.ts) for readers in
 *    other processes.
 *
 * Everything it does (or would do) is recorded in a LoadReport; `logtool recover` renders it.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { LogtoolError } from '../errors.js';
import { DirectoryLock } from '../log/lock.js';
import type { LogConfig } from '../config.js';
import { parseTopicPartition, requireUnambiguousPartition, type TopicPartition } from '../log/topic-partition.js';
import type { LogWarning } from '../log/log-types.js';
import { LogSegment, INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, parseBaseOffset, segmentFileName } from '../segment/segment.js';
import { CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, readCleanShutdownMarker, readOffsetCheckpoint, tpKey } from '../checkpoint.js';
import { LostAndFound } from './lost-and-found.js';
import { countingSink, scanAndIndex } from './index-rebuilder.js';
import { checkOffsetIndex, checkTimeIndex, checkTxnIndex, truncateTxnIndex } from './index-sanity.js';
import type { ScanEnd } from '../segment/file-records.js';
import { beginChange, endChange } from '../cleaner/generation.js';

export interface TruncationReport {
  file: string;
  /** Byte position of the first invalid byte: the new size of the file. */
  position: number;
  bytes: number;
  reason: string;
  /** Where the cut-off bytes were kept (absent with discard). */
  savedTo?: string;
}

export interface DroppedFileReport {
  file: string;
  bytes: number;
  /** Where the file was moved (absent with discard). */
  savedTo?: string;
}

export interface IndexProblemReport {
  file: string;
  /** Byte position in the index file, when known. */
  position?: number;
  reason: string;
}

export interface LoadReport {
  dir: string;
  /** Nothing was changed: the report says what would be done. */
  dryRun: boolean;
  /** The clean-shutdown marker was found in the log directory. */
  markerFound: boolean;
  /** The marker was found and trusted, so sealed data was not scanned. */
  cleanShutdown: boolean;
  /** Why a marker that was found was not trusted. */
  markerNote?: string;
  /** Recovery point from the checkpoint (0 when absent). */
  recoveryPoint: number;
  logStartOffset: number;
  logEndOffset: number;
  /** Segments after loading. */
  segments: number;
  segmentsScanned: number;
  /** `.log` files trusted without validation (clean shutdown, below the recovery point): `--full` checks them. */
  segmentsNotChecked: string[];
  batchesValidated: number;
  bytesValidated: number;
  /** Index files rebuilt from their `.log` (routinely during recovery, or to repair them). */
  indexesRebuilt: string[];
  /** Index files that were missing or failed a sanity check (a repair). */
  indexProblems: IndexProblemReport[];
  truncated: TruncationReport[];
  bytesTruncated: number;
  segmentsDropped: DroppedFileReport[];
  tempFilesRemoved: string[];
  swapsCompleted: string[];
  /** Checkpoint files that could not be read (treated as empty, as Kafka does). */
  checkpointProblems: { file: string; reason: string }[];
  /** True when anything on disk was (or, dry run, would be) repaired. */
  repaired: boolean;
}

export interface LoadProgress {
  file: string;
  /** Bytes validated so far over all segments being recovered. */
  bytesDone: number;
  bytesTotal: number;
}

export interface LoadOptions {
  io: FileIO;
  dir: string;
  tp: TopicPartition | undefined;
  config: LogConfig;
  /** Readers: change nothing, scan nothing beyond the active segment's tail. */
  readOnly: boolean;
  onWarning: (w: LogWarning) => void;
  /** Delete what recovery cuts off instead of keeping it in lost+found/. */
  discardLost: boolean;
  /** Recover every segment, whatever the marker and the recovery point say. */
  forceRecoverAll?: boolean;
  /** Compute the report of a full (non-read-only) load without changing anything. */
  dryRun?: boolean;
  onProgress?: (p: LoadProgress) => void;
  /**
   * The log directory's clean-shutdown marker as another writer of this process already read (and
   * deleted) it; the loader then does not read the file (logdir/clean-shutdown.ts).
   */
  directoryMarker?: { content: Buffer | undefined };
}

export interface LoadResult {
  segments: LogSegment[];
  logStartOffset: number;
  nextOffset: number;
  recoveryPoint: number;
  report: LoadReport;
  /** The clean-shutdown marker's content when found (writable loads; it is deleted at open). */
  markerContent?: Buffer;
}

const INDEX_SUFFIXES = [INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX];
const SWAP = '.swap';
const STALE_INDEX_TMP_RE = /^\d{20}\.(index|timeindex)\.tmp$/;

function emptyReport(dir: string, dryRun: boolean): LoadReport {
  return {
    dir,
    dryRun,
    markerFound: false,
    cleanShutdown: false,
    recoveryPoint: 0,
    logStartOffset: 0,
    logEndOffset: 0,
    segments: 0,
    segmentsScanned: 0,
    segmentsNotChecked: [],
    batchesValidated: 0,
    bytesValidated: 0,
    indexesRebuilt: [],
    indexProblems: [],
    truncated: [],
    bytesTruncated: 0,
    segmentsDropped: [],
    tempFilesRemoved: [],
    swapsCompleted: [],
    checkpointProblems: [],
    repaired: false,
  };
}

/** A dry run opens a segment still named `.swap`; reports name the file the swap would become. */
const finalName = (file: string): string => (file.endsWith(SWAP) ? file.slice(0, -SWAP.length) : file);

const scanEndReason = (end: ScanEnd): string => (end.kind === 'end' ? 'invalid data' : end.reason);

/** Why a segment is recovered, and whether a truncation in it drops the later segments. */
interface RecoveryTask {
  seg: LogSegment;
  /** In the range recovered after an unclean shutdown (or the active tail): Kafka's drop rule. */
  dropsLater: boolean;
}

export function loadLog(opts: LoadOptions): LoadResult {
  // Checkpoint entries are keyed by topic and partition number: refuse a second directory naming it.
  if (opts.tp) requireUnambiguousPartition(opts.dir, opts.tp, opts.io.readdir(path.dirname(opts.dir)));
  return new LogLoader(opts).load();
}

class LogLoader {
  private readonly io: FileIO;
  private readonly dir: string;
  private readonly logDir: string;
  private readonly dryRun: boolean;
  private readonly report: LoadReport;
  private readonly lost: LostAndFound;
  /**
   * Passes 1–4 only compute what they would leave (a dry run, or a reader): nothing is removed or
   * renamed, and segments are opened read-only under the names they have on disk.
   */
  private readonly viewOnly: boolean;
  /** Final names still served by their `.swap` file (view only: the rename is only simulated). */
  private readonly swapped = new Set<string>();
  /** Index files that did not exist when the segments were listed. */
  private readonly missingIndexes = new Set<string>();
  /** Generation token while a change is in progress (see changing()). */
  private changeToken: number | undefined;

  constructor(private readonly opts: LoadOptions) {
    this.io = opts.io;
    this.dir = opts.dir;
    this.logDir = path.dirname(opts.dir);
    this.dryRun = opts.dryRun === true && !opts.readOnly;
    this.viewOnly = this.dryRun || opts.readOnly;
    this.report = emptyReport(opts.dir, this.dryRun);
    this.lost = new LostAndFound(opts.io, opts.dir, { discard: opts.discardLost, dryRun: this.dryRun });
  }

  load(): LoadResult {
    if (this.opts.readOnly) return this.loadReadOnly();
    try {
      const removed = this.resolveTempFiles();
      const segments = this.openSegments(removed);
      try {
        return this.recover(segments);
      } catch (e) {
        for (const s of segments) s.closeQuietly();
        throw e;
      }
    } finally {
      if (this.changeToken !== undefined) endChange(this.io, this.dir, this.changeToken);
    }
  }

  /**
   * Before the first change that removes, replaces or shortens segment files: readers in other
   * processes (Log.openStable) retry while the partition's generation is odd.
   */
  private changing(): void {
    if (this.viewOnly || this.changeToken !== undefined) return;
    this.changeToken = beginChange(this.io, this.dir);
  }

  // -------------------------------------------------------------------------------------------
  // Passes 1–3

  /**
   * Removes a file (really, or in the dry run's view). Leftovers no reader opens (`.deleted`,
   * `.cleaned`, logtool's index `.tmp`) go without bumping the generation, so recovery can clear
   * them on a full disk, where the generation file cannot be written.
   */
  private remove(name: string, readersSeeIt = true): void {
    if (readersSeeIt) this.changing();
    if (!this.viewOnly) this.io.unlink(path.join(this.dir, name));
    this.report.tempFilesRemoved.push(name);
  }

  /** Returns the names that are gone after the passes (really, or in the dry run's view). */
  private resolveTempFiles(): Set<string> {
    const removed = new Set<string>();
    const names = this.io.readdir(this.dir).sort();
    const swaps: string[] = [];
    const cleaned: string[] = [];
    let minCleanedBase = Infinity;
    for (const n of names) {
      if (n.endsWith('.deleted')) {
        // KRaft snapshots pending deletion are the metadata log's business (Kafka skips them too).
        if (n.endsWith('.checkpoint.deleted')) continue;
        this.remove(n, false);
        removed.add(n);
      } else if (STALE_INDEX_TMP_RE.test(n) && parseBaseOffset(n) !== undefined) {
        // logtool's own index rebuild output, left by a crash before its rename.
        this.remove(n, false);
        removed.add(n);
      } else if (n.endsWith('.cleaned')) {
        cleaned.push(n);
        const b = parseBaseOffset(n);
        if (b !== undefined) minCleanedBase = Math.min(minCleanedBase, b);
      } else if (n.endsWith(SWAP)) swaps.push(n);
    }
    const keptSwaps: string[] = [];
    for (const s of swaps) {
      const b = parseBaseOffset(s);
      if (b !== undefined && b >= minCleanedBase) {
        this.remove(s);
        removed.add(s);
      } else keptSwaps.push(s);
    }
    for (const c of cleaned) {
      this.remove(c, false);
      removed.add(c);
    }
    const logSwaps = keptSwaps.filter((s) => s.endsWith(`${LOG_SUFFIX}${SWAP}`) && parseBaseOffset(s) !== undefined);
    if (keptSwaps.length === 0) return removed;

    // Pass 2: the range covered by the swap segments replaces every older file inside it.
    let lo = Infinity;
    let hi = -Infinity;
    for (const s of logSwaps) {
      const base = parseBaseOffset(s)!;
      const seg = new LogSegment({ io: this.io, dir: this.dir, baseOffset: base, indexIntervalBytes: this.opts.config.indexIntervalBytes, maxIndexBytes: 0, writable: false, fileSuffix: SWAP });
      let next = base;
      try {
        next = seg.readNextOffset().nextOffset ?? base;
      } finally {
        seg.closeQuietly();
      }
      lo = Math.min(lo, base);
      hi = Math.max(hi, next);
    }
    // Kafka removes every file named by an offset in the range (producer snapshots too), not
    // only segment files.
    for (const n of names) {
      if (n.endsWith(SWAP) || removed.has(n)) continue;
      const b = parseBaseOffset(n);
      if (b !== undefined && b >= lo && b < hi && this.io.stat(path.join(this.dir, n))?.isFile) {
        this.remove(n);
        removed.add(n);
      }
    }
    // Pass 3: rename the swaps into place.
    this.changing();
    for (const s of keptSwaps) {
      const target = s.slice(0, -SWAP.length);
      if (!this.viewOnly) this.io.rename(path.join(this.dir, s), path.join(this.dir, target));
      else this.swapped.add(target);
      removed.delete(target);
      this.report.swapsCompleted.push(s);
    }
    if (!this.viewOnly) this.io.syncDir(this.dir);
    return removed;
  }

  // -------------------------------------------------------------------------------------------
  // Pass 4

  private openSegments(removed: Set<string>): LogSegment[] {
    let names = this.io.readdir(this.dir);
    if (this.viewOnly) {
      // The view of a dry run or a reader: what passes 1–3 would have left.
      names = names.filter((n) => !removed.has(n)).map((n) => (n.endsWith(SWAP) ? n.slice(0, -SWAP.length) : n));
    }
    names = [...new Set(names)].sort();
    const logBases = new Set<number>();
    for (const n of names) {
      const b = parseBaseOffset(n);
      if (b !== undefined && n === segmentFileName(b, LOG_SUFFIX)) logBases.add(b);
    }
    let orphansRemoved = false;
    for (const n of names) {
      const b = parseBaseOffset(n);
      if (b === undefined || logBases.has(b)) continue;
      if (INDEX_SUFFIXES.some((s) => n === segmentFileName(b, s))) {
        this.remove(n);
        orphansRemoved = true;
      }
    }
    if (orphansRemoved && !this.viewOnly) this.io.syncDir(this.dir);
    const { config } = this.opts;
    const segments: LogSegment[] = [];
    try {
      const bases = [...logBases].sort((a, b) => a - b);
      for (const base of bases) {
        // Before the segment is opened: a writable open creates missing index files (empty).
        for (const suffix of [INDEX_SUFFIX, TIME_INDEX_SUFFIX]) {
          const name = segmentFileName(base, suffix);
          if (!names.includes(name)) this.missingIndexes.add(path.join(this.dir, name));
        }
        segments.push(
          new LogSegment({
            io: this.io,
            dir: this.dir,
            baseOffset: base,
            indexIntervalBytes: config.indexIntervalBytes,
            maxIndexBytes: config.segmentIndexBytes,
            writable: !this.viewOnly,
            // Per file: a swap interrupted during its renames leaves some files named `.swap`.
            fileSuffixOf: (suffix) => (this.swapped.has(segmentFileName(base, suffix)) ? SWAP : undefined),
            // A live writer may be appending to the last one: bound its indexes by what was there.
            snapshotIndexes: this.viewOnly && base === bases[bases.length - 1],
          }),
        );
      }
    } catch (e) {
      for (const s of segments) s.closeQuietly();
      throw e;
    }
    return segments;
  }

  /** Missing or insane index files of a segment that recovery would otherwise not touch. */
  private indexProblems(seg: LogSegment, next: LogSegment | undefined, checkContents: boolean): { file: string; position?: number; reason: string }[] {
    const out: { file: string; position?: number; reason: string }[] = [];
    for (const file of [seg.indexPath, seg.timeIndexPath].map(finalName)) {
      if (this.missingIndexes.has(file)) out.push({ file, reason: 'missing' });
    }
    if (!checkContents) return out;
    const limits = { baseOffset: seg.baseOffset, logSizeBytes: seg.size, nextBaseOffset: next?.baseOffset };
    if (out.length === 0) {
      const p = checkOffsetIndex(this.io, seg.indexPath, limits) ?? checkTimeIndex(this.io, seg.timeIndexPath, limits);
      if (p) out.push(p);
    }
    const txnName = segmentFileName(seg.baseOffset, TXN_INDEX_SUFFIX);
    const txn = path.join(this.dir, txnName + (this.swapped.has(txnName) ? SWAP : ''));
    if (this.io.stat(txn)) {
      const p = checkTxnIndex(this.io, txn, seg.baseOffset);
      if (p) {
        out.push({ ...p, reason: `${p.reason}; logtool does not rebuild transaction indexes, so the file is left for Kafka, which rebuilds it when it recovers the segment` });
      }
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Marker, checkpoints, recovery (pass 5)

  private readCheckpoint(name: string): number | undefined {
    const tp = this.opts.tp;
    if (!tp) return undefined;
    const file = path.join(this.logDir, name);
    try {
      return readOffsetCheckpoint(this.io, file).get(tpKey(tp.topic, tp.partition));
    } catch (e) {
      this.report.checkpointProblems.push({ file, reason: (e as Error).message });
      this.opts.onWarning({ file, message: `unreadable checkpoint treated as empty: ${(e as Error).message}` });
      return undefined;
    }
  }

  /** Log end offset without a full scan: from the active segment's last index entry. */
  private cheapLogEnd(segments: LogSegment[]): { nextOffset: number; tailEnd: ScanEnd } {
    const active = segments[segments.length - 1];
    if (!active) return { nextOffset: 0, tailEnd: { kind: 'end' } };
    if (active.size === 0) return { nextOffset: active.baseOffset, tailEnd: { kind: 'end' } };
    const tail = active.readNextOffset();
    return { nextOffset: tail.nextOffset ?? active.baseOffset, tailEnd: tail.end };
  }

  private recover(segments: LogSegment[]): LoadResult {
    const { io, report, opts } = this;
    const markerPath = path.join(this.logDir, CLEAN_SHUTDOWN_FILE);
    const markerContent = opts.directoryMarker ? opts.directoryMarker.content : readCleanShutdownMarker(io, this.logDir);
    report.markerFound = markerContent !== undefined;
    if (report.markerFound && !this.dryRun && io.stat(markerPath)) {
      // Kafka deletes the marker as soon as it sees it (KAFKA-10471); the directory fsync makes
      // the deletion durable before this writer changes anything, so a crash cannot revive it.
      io.unlink(markerPath);
      io.syncDir(this.logDir);
    }
    const checkpointedRecoveryPoint = this.readCheckpoint(RECOVERY_POINT_CHECKPOINT);
    const checkpointedStart = this.readCheckpoint(LOG_START_OFFSET_CHECKPOINT);
    const recoveryPointFromCheckpoint = checkpointedRecoveryPoint ?? 0;
    report.recoveryPoint = recoveryPointFromCheckpoint;

    const cheap = this.cheapLogEnd(segments);
    let trusted = report.markerFound && !opts.forceRecoverAll;
    if (trusted && opts.tp) {
      if (checkpointedRecoveryPoint === undefined || checkpointedRecoveryPoint < cheap.nextOffset) {
        trusted = false;
        report.markerNote =
          checkpointedRecoveryPoint === undefined
            ? 'the clean-shutdown marker was ignored: this partition has no recovery point in the checkpoint'
            : `the clean-shutdown marker was ignored: this partition's recovery point ${checkpointedRecoveryPoint} is below its log end offset ${cheap.nextOffset}, so it was not closed cleanly`;
      }
    } else if (report.markerFound && opts.forceRecoverAll) {
      report.markerNote = 'the clean-shutdown marker was ignored: full recovery was requested';
    }
    report.cleanShutdown = trusted;

    // Which segments to recover, in ascending order.
    const tasks = new Map<LogSegment, RecoveryTask>();
    if (segments.length > 0) {
      if (!trusted) {
        let startIdx = 0;
        if (!opts.forceRecoverAll) for (let i = 0; i < segments.length; i++) if (segments[i]!.baseOffset <= recoveryPointFromCheckpoint) startIdx = i;
        for (let i = startIdx; i < segments.length; i++) tasks.set(segments[i]!, { seg: segments[i]!, dropsLater: true });
      } else if (cheap.tailEnd.kind !== 'end') {
        const active = segments[segments.length - 1]!;
        tasks.set(active, { seg: active, dropsLater: true });
      }
    }
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i]!;
      const problems = this.indexProblems(seg, segments[i + 1], !tasks.has(seg));
      for (const p of problems) {
        report.indexProblems.push(p);
        opts.onWarning({ file: p.file, position: p.position, message: p.file.endsWith(TXN_INDEX_SUFFIX) ? p.reason : `${p.reason}; the segment ${this.dryRun ? 'would be' : 'is'} recovered and its indexes rebuilt` });
      }
      if (problems.length > 0 && !tasks.has(seg)) tasks.set(seg, { seg, dropsLater: false });
    }

    report.segmentsNotChecked = segments.filter((s) => !tasks.has(s)).map((s) => finalName(s.logPath));
    const ordered = segments.filter((s) => tasks.has(s));
    const bytesTotal = ordered.reduce((n, s) => n + s.size, 0);
    let bytesBefore = 0;
    let activeResult: { nextOffset: number | undefined } | undefined;
    for (const seg of ordered) {
      if (!segments.includes(seg)) break; // dropped by an earlier truncation
      const task = tasks.get(seg)!;
      const sizeBefore = seg.size;
      const onProgress = opts.onProgress ? (done: number) => opts.onProgress!({ file: seg.logPath, bytesDone: bytesBefore + done, bytesTotal }) : undefined;
      const r = this.dryRun
        ? scanAndIndex(seg.scanner({ verifyCrc: true, validateOffsets: true }), seg.size, { baseOffset: seg.baseOffset, indexIntervalBytes: opts.config.indexIntervalBytes, onProgress }, countingSink)
        : seg.recover({ truncate: false, onProgress });
      // The recovery point and the clean-shutdown marker will move past this segment (at the next
      // thorough flush or close): its rebuilt indexes must be on disk first. Their renames become
      // durable with the directory fsync that ends every writable open (Log.open).
      if (!this.dryRun) seg.flushIndexes();
      bytesBefore += sizeBefore;
      report.segmentsScanned++;
      report.batchesValidated += r.batches;
      report.bytesValidated += r.validBytes;
      report.indexesRebuilt.push(finalName(seg.indexPath), finalName(seg.timeIndexPath));
      if (seg === segments[segments.length - 1]) activeResult = r;
      if (r.validBytes >= sizeBefore) continue;

      // Bytes to cut. Keep them first (durably), then drop later segments, then truncate: a crash
      // at any point leaves a state the next recovery handles the same way.
      const reason = scanEndReason(r.end);
      this.changing();
      const savedTo = this.lost.saveTail(finalName(seg.logPath), r.validBytes, sizeBefore);
      const idx = segments.indexOf(seg);
      if (task.dropsLater) {
        for (const later of segments.splice(idx + 1)) {
          const files = later.files();
          const sizes = files.map((f) => io.stat(f)?.size ?? 0);
          later.closeQuietly();
          files.forEach((f, k) => {
            const saved = this.lost.moveAside(finalName(f));
            report.segmentsDropped.push({ file: finalName(f), bytes: sizes[k]!, savedTo: saved });
            opts.onWarning({ file: f, message: `segment after the truncated ${path.basename(seg.logPath)} ${this.dryRun ? 'would be' : 'is'} dropped${saved ? `; ${this.dryRun ? 'would be ' : ''}moved to ${saved}` : ''}` });
          });
        }
        this.lost.sync();
        activeResult = r;
      }
      const nextOffset = r.nextOffset ?? seg.baseOffset;
      if (!this.dryRun) {
        seg.truncateToBytes(r.validBytes, nextOffset);
        seg.flush();
      }
      const txn = path.join(this.dir, segmentFileName(seg.baseOffset, TXN_INDEX_SUFFIX));
      truncateTxnIndex(io, txn, nextOffset, this.dryRun);
      const cut = sizeBefore - r.validBytes;
      report.truncated.push({ file: finalName(seg.logPath), position: r.validBytes, bytes: cut, reason, savedTo });
      report.bytesTruncated += cut;
      opts.onWarning({
        file: finalName(seg.logPath),
        position: r.validBytes,
        message: `${this.dryRun ? 'would truncate' : 'truncated'} ${cut} bytes: ${reason}${savedTo ? `; ${this.dryRun ? 'would be ' : ''}saved to ${savedTo}` : ''}`,
      });
    }

    // The log end offset: from the active segment's recovery if it ran, else the cheap tail read.
    let nextOffset: number | undefined;
    const active = segments[segments.length - 1];
    if (active) nextOffset = activeResult ? (activeResult.nextOffset ?? active.baseOffset) : cheap.nextOffset;

    let logStartOffset = Math.max(checkpointedStart ?? 0, segments[0]?.baseOffset ?? 0);
    if (segments.length === 0) {
      // Kafka: an empty log gets an empty segment at the log start offset.
      if (!this.dryRun) {
        segments.push(
          new LogSegment({
            io,
            dir: this.dir,
            baseOffset: logStartOffset,
            indexIntervalBytes: opts.config.indexIntervalBytes,
            maxIndexBytes: opts.config.segmentIndexBytes,
            writable: true,
            create: true,
          }),
        );
        io.syncDir(this.dir);
      }
      nextOffset = logStartOffset;
    }
    nextOffset ??= logStartOffset;
    // Kafka deletes every segment when the log end is below the checkpointed start offset; a
    // checkpoint that disagrees with the data is more likely wrong than the data, so clamp.
    if (logStartOffset > nextOffset) logStartOffset = nextOffset;
    if (!this.dryRun) segments[segments.length - 1]!.resizeIndexes();

    report.logStartOffset = logStartOffset;
    report.logEndOffset = nextOffset;
    report.segments = segments.length;
    report.repaired =
      report.truncated.length > 0 ||
      report.segmentsDropped.length > 0 ||
      report.tempFilesRemoved.length > 0 ||
      report.swapsCompleted.length > 0 ||
      report.indexProblems.length > 0;
    const recoveryPoint = trusted ? nextOffset : Math.min(recoveryPointFromCheckpoint, nextOffset);
    return { segments, logStartOffset, nextOffset, recoveryPoint, report, markerContent };
  }

  // -------------------------------------------------------------------------------------------
  // Readers

  /**
   * A partition directory without segments is an empty log. A directory without segments that is
   * not one (a broker's log directory, a mistyped path) must not read as an empty, healthy log.
   */
  private requirePartitionDirectory(): void {
    const logDirEntry = this.io.readdir(this.dir).find((n) => n === 'meta.properties' || (parseTopicPartition(n) !== undefined && this.io.stat(path.join(this.dir, n))?.isDirectory));
    if (this.opts.tp && logDirEntry === undefined) return;
    throw new LogtoolError(
      'usage',
      logDirEntry !== undefined
        ? `this is a broker's log directory (it holds ${logDirEntry}), not a partition directory; give one of its partition directories, such as ${this.dir}/<topic>-<partition>`
        : 'not a partition directory: it holds no segments and is not named <topic>-<partition> as Kafka names them',
      { file: this.dir },
    );
  }

  /**
   * Read-only open: no pass changes anything; only the active tail is read for the log end. The
   * segments are exactly those passes 1–4 would keep (an interrupted swap resolved as the loader
   * resolves it: a `.swap` whose old segment is gone is the live segment, old files in its range
   * are not), opened under the names they have now.
   */
  private loadReadOnly(): LoadResult {
    const { io, opts, report } = this;
    const segments = this.openSegments(this.resolveTempFiles());
    if (segments.length === 0) this.requirePartitionDirectory();
    report.markerFound = io.stat(path.join(this.logDir, CLEAN_SHUTDOWN_FILE)) !== undefined;
    report.cleanShutdown = report.markerFound;
    const checkpointedRecoveryPoint = this.readCheckpoint(RECOVERY_POINT_CHECKPOINT) ?? 0;
    const checkpointedStart = this.readCheckpoint(LOG_START_OFFSET_CHECKPOINT);
    report.recoveryPoint = checkpointedRecoveryPoint;
    const cheap = this.cheapLogEnd(segments);
    const last = segments[segments.length - 1];
    if (last && cheap.tailEnd.kind === 'partial' && DirectoryLock.isHeld(this.dir)) {
      // A writer holds the partition, so an incomplete last batch is one it is writing now (a
      // file grows page by page during a write), not a torn tail: the view ends before it.
      last.size = cheap.tailEnd.position;
    } else if (last && cheap.tailEnd.kind !== 'end') opts.onWarning({ file: last.logPath, position: cheap.tailEnd.position, message: cheap.tailEnd.reason });
    let logStartOffset = Math.max(checkpointedStart ?? 0, segments[0]?.baseOffset ?? 0);
    const nextOffset = last ? cheap.nextOffset : logStartOffset;
    if (logStartOffset > nextOffset) logStartOffset = nextOffset;
    report.logStartOffset = logStartOffset;
    report.logEndOffset = nextOffset;
    report.segments = segments.length;
    return { segments, logStartOffset, nextOffset, recoveryPoint: Math.min(checkpointedRecoveryPoint, nextOffset), report };
  }
}
