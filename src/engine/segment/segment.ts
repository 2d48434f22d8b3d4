/**
 * One segment: a `.log` with its `.index` and `.timeindex` (Kafka's LogSegment). Appends maintain
 * the sparse indexes by Kafka's rules (kafka-format.md §8, segment-indexes.ts); lookups start at
 * an index entry (segment-lookup.ts); `recover` rebuilds the indexes from the log
 * the way Kafka's recovery does (§10.3). Its three files are opened through the descriptor cache
 * (fd-cache.ts) when used: a segment nobody reads or appends to holds no descriptor.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { LogtoolError, assert } from '../errors.js';
import { OffsetIndex } from './offset-index.js';
import { TimeIndex } from './time-index.js';
import { SegmentIndexes, type AppendedBatchInfo } from './segment-indexes.js';
import { EntryScanner, type LogEntry, type ScanEnd } from './file-records.js';
import { CachedFile, FileDescriptorCache } from './fd-cache.js';
import { SegmentPreallocation, type PreallocationPolicy } from './preallocation.js';
import { decodeRecords, type LogRecord } from '../format/record-batch.js';
import { findOffsetByTimestamp, readNextOffset, translateOffset } from './segment-lookup.js';
import { scanAndIndex, writeIndexFiles } from '../recovery/index-rebuilder.js';
import { INDEX_SUFFIX, LOG_SUFFIX, SEGMENT_SUFFIXES, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, segmentFileName } from './segment-files.js';

export { LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, SEGMENT_SUFFIXES, segmentFileName, parseBaseOffset } from './segment-files.js';

export interface SegmentOptions {
  io: FileIO;
  dir: string;
  baseOffset: number;
  indexIntervalBytes: number;
  maxIndexBytes: number;
  writable: boolean;
  /**
   * Create new, empty files: `true` replaces any with the same name; `'exclusive'` fails if the
   * `.log` exists (a roll never truncates a file it did not create).
   */
  create?: boolean | 'exclusive';
  /** Suffix appended to every file name (".cleaned" for compaction output). */
  fileSuffix?: string;
  /**
   * Read-only: count the index entries before taking the `.log`'s size, and never read entries
   * past those counts. For the active segment of a live writer, which appends a batch to the
   * `.log` before the index entries that point at it: every counted entry then lies inside the
   * size taken, whatever the writer appends meanwhile.
   */
  snapshotIndexes?: boolean;
  /** Per file, overrides fileSuffix (readers of an interrupted swap: some files are still `.swap`). */
  fileSuffixOf?: (segmentSuffix: string) => string | undefined;
  /** The descriptor cache of the log (default: a private one holding this segment's files until close). */
  files?: FileDescriptorCache;
}

export interface RecoverResult {
  validBytes: number;
  truncatedBytes: number;
  batches: number;
  end: ScanEnd;
  nextOffset: number | undefined;
}

export class LogSegment {
  readonly baseOffset: number;
  readonly dir: string;
  readonly logPath: string;
  /** Opened on first use; reopened when recover() rebuilds the files, hence behind getters. */
  private readonly indexes: SegmentIndexes;
  readonly io: FileIO;
  /** The descriptor cache this segment's files are opened through. */
  readonly fdCache: FileDescriptorCache;
  private readonly logFile: CachedFile;
  private closed = false;
  /** Its files were renamed away (retention, a swap): later reads go to the renamed files, read-only. */
  private retired = false;
  private readonly writable: boolean;
  private readonly indexIntervalBytes: number;
  readonly maxIndexBytes: number;
  /** Bytes of log entries in the `.log` (committed to the OS): the write position. */
  size: number;
  /** Zeros written ahead of `size` (preallocation.ts). */
  private readonly preallocation: SegmentPreallocation;
  /**
   * Scans end quietly at an all-zero tail (preallocated space): set on the last segment only (by
   * the loader and the roll); in a sealed segment zeros are damage, since a roll trims them.
   */
  zeroTailIsEnd = false;
  /** Last offset appended by this process (undefined: not known without a scan; the base bounds it). */
  private lastAppendedOffset: number | undefined;
  /** Max timestamp of the first batch (segment.ms roll reference), loaded lazily. */
  private rollingBasedTimestamp: number | undefined;
  /** In-memory creation time (Kafka resets it on every load). */
  readonly createdMs = Date.now();
  /** Set when the `.log` got bytes since the last flush. */
  dirty = false;

  constructor(opts: SegmentOptions) {
    this.io = opts.io;
    this.baseOffset = opts.baseOffset;
    this.dir = opts.dir;
    this.writable = opts.writable;
    this.indexIntervalBytes = opts.indexIntervalBytes;
    this.maxIndexBytes = opts.maxIndexBytes;
    const sfx = opts.fileSuffix ?? '';
    const file = (s: string) => path.join(opts.dir, segmentFileName(opts.baseOffset, s) + (opts.fileSuffixOf?.(s) ?? sfx));
    this.logPath = file(LOG_SUFFIX);
    this.fdCache = opts.files ?? new FileDescriptorCache(opts.io, 3);
    assert(this.fdCache.io === opts.io, 'a segment and its descriptor cache use different I/O layers', { file: this.logPath });
    const mode = opts.writable ? 'r+' : 'r';
    let logFile: CachedFile | undefined;
    if (opts.create) {
      // Exclusive first: a failed open must not have removed another segment's index files.
      if (opts.create === 'exclusive') logFile = new CachedFile(this.fdCache, this.logPath, mode, 'wx+');
      for (const s of [INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX]) this.io.unlink(file(s));
      logFile ??= new CachedFile(this.fdCache, this.logPath, mode, 'w+');
    }
    this.logFile = logFile ?? new CachedFile(this.fdCache, this.logPath, mode);
    this.indexes = new SegmentIndexes({
      indexPath: file(INDEX_SUFFIX),
      timeIndexPath: file(TIME_INDEX_SUFFIX),
      openOffsetIndex: (p) => new OffsetIndex({ ...this.indexOptions(), path: p }),
      openTimeIndex: (p) => new TimeIndex({ ...this.indexOptions(), path: p }),
      baseOffset: opts.baseOffset,
      indexIntervalBytes: opts.indexIntervalBytes,
      snapshot: opts.snapshotIndexes === true && !opts.writable,
    });
    this.size = this.logFile.fstat().size;
    this.preallocation = new SegmentPreallocation(this.logFile, opts.writable, this.size);
    // A new segment's `.index` exists as soon as its `.log` does (its `.timeindex` is opened just
    // below): a reader beside the writer must never meet a `.log` without it, which verify reports.
    if (opts.create) this.indexes.offset.get();
    if (opts.writable) this.indexes.loadMaxTimestamp();
  }

  private indexOptions() {
    return { io: this.io, baseOffset: this.baseOffset, maxIndexBytes: this.maxIndexBytes, writable: this.writable && !this.retired, files: this.fdCache };
  }

  get offsetIndex(): OffsetIndex {
    return this.indexes.offset.get();
  }
  get timeIndex(): TimeIndex {
    return this.indexes.time.get();
  }

  /** Read-only segments: closes the index files (reopened on next use). */
  releaseIndexes(): void {
    if (!this.writable) this.indexes.release();
  }

  get indexPath(): string {
    return this.indexes.offset.path;
  }
  get timeIndexPath(): string {
    return this.indexes.time.path;
  }
  /** The `.log`, read through the descriptor cache (each call takes the descriptor for itself). */
  get file(): CachedFile {
    if (this.closed) throw new LogtoolError('closed', 'segment is closed', { file: this.logPath });
    return this.logFile;
  }

  get largestTimestamp(): number {
    if (!this.writable) return this.timeIndex.lastEntry.timestamp;
    return this.indexes.maxTimestampSoFar;
  }

  /** Whether the indexes can take another entry (Kafka rolls when either is full). */
  get indexesFull(): boolean {
    return this.indexes.full;
  }

  /** Max timestamp of the first batch, or −1 if empty or without timestamps. */
  firstBatchMaxTimestamp(): number {
    if (this.rollingBasedTimestamp === undefined) {
      const first = this.scanner({}).entries().next();
      this.rollingBasedTimestamp = first.done ? -1 : first.value.maxTimestamp;
      if (first.done) this.rollingBasedTimestamp = undefined;
    }
    return this.rollingBasedTimestamp ?? -1;
  }

  /**
   * Appends whole batches held in buf[start, end) at the end of the `.log`. `batches` describes
   * each batch (its size, last offset and max timestamp) in order; each gets index entries by
   * Kafka's interval rule, so that every entry points at a single batch. The entries stay pending
   * in memory (Kafka's are in a mapped file): written with one write(2) per index at the next
   * flush, roll or close, or once 4 KiB of them are pending (segment-indexes.ts).
   */
  append(buf: Buffer, start: number, end: number, batches: readonly AppendedBatchInfo[]): number {
    if (!this.writable) throw new LogtoolError('io', 'segment is read-only', { file: this.logPath });
    const position = this.size;
    this.checkAppend(buf, start, end, batches);
    const written = this.file.write(buf, start, end - start, position);
    if (written !== end - start) assert(false, `short write of ${written} of ${end - start} bytes`, { file: this.logPath, position });
    if (this.size === 0 && batches.length > 0) this.rollingBasedTimestamp = batches[0]!.maxTimestamp;
    this.indexes.append(position, batches);
    this.size = position + written;
    this.preallocation.appended(this.size);
    this.dirty = true;
    return position;
  }

  /**
   * How many zeros are kept written ahead of `size` (preallocation.ts). Set by the writer on its
   * active segment only; cleared, and the zeros trimmed, when the segment becomes inactive.
   */
  preallocate(policy: PreallocationPolicy): void {
    this.preallocation.setPolicy(policy);
  }

  /** Cuts preallocated zeros off the `.log` (on roll and close); the next fdatasync commits the size. */
  trimPreallocated(): void {
    this.preallocation.trim(this.size);
  }

  /**
   * The append's invariants, checked before anything is written: whole batches within buf,
   * offsets above everything already in the segment and increasing from batch to batch, no batch
   * below the segment's base offset nor beyond the 32-bit offsets relative to it. On this path a
   * message is built only when its check fails (a template string per batch cost more than the
   * rest of the check).
   */
  private checkAppend(buf: Buffer, start: number, end: number, batches: readonly AppendedBatchInfo[]): void {
    const where = { file: this.logPath, position: this.size };
    if (!(start >= 0 && start <= end && end <= buf.length)) assert(false, `append of bytes [${start}, ${end}) outside a buffer of ${buf.length}`, where);
    let bytes = 0;
    const baseOffset = this.baseOffset;
    let prev = this.lastAppendedOffset ?? baseOffset - 1;
    // An index loop over locals (per commit, over up to thousands of batches; no iterator results).
    for (let i = 0; i < batches.length; i++) {
      const b = batches[i]!;
      if (b.lastOffset <= prev) assert(false, `batch ending at offset ${b.lastOffset} appended after offset ${prev}: offsets must increase`, where);
      if (b.lastOffset - baseOffset > 0x7fffffff) throw new LogtoolError('out-of-range', `offset ${b.lastOffset} overflows segment ${baseOffset}`, { file: this.logPath });
      prev = b.lastOffset;
      bytes += b.size;
    }
    if (bytes !== end - start) assert(false, `batches of ${bytes} bytes described for an append of ${end - start}`, where);
    this.lastAppendedOffset = prev;
  }

  scanner(opts: { startPosition?: number; endPosition?: number; verifyCrc?: boolean; validateOffsets?: boolean; skipBelowOffset?: number; skipReadEnd?: number; chunkBytes?: number; headersOnly?: boolean; reuseBuffer?: boolean | 'compressed' }): EntryScanner {
    return new EntryScanner({
      io: this.io,
      path: this.logPath,
      file: this.file,
      startPosition: opts.startPosition,
      endPosition: opts.endPosition ?? this.size,
      verifyCrc: opts.verifyCrc,
      segmentBaseOffset: opts.validateOffsets ? this.baseOffset : undefined,
      zeroTailIsEnd: this.zeroTailIsEnd,
      skipBelowOffset: opts.skipBelowOffset,
      skipReadEnd: opts.skipReadEnd,
      chunkBytes: opts.chunkBytes,
      headersOnly: opts.headersOnly,
      reuseBuffer: opts.reuseBuffer,
    });
  }

  /** Position of the first entry whose last offset ≥ target, or undefined (segment-lookup.ts). */
  translateOffset(target: number, startingFilePosition = 0, ignoreIndex = false): { position: number; entry: LogEntry } | undefined {
    return translateOffset(this, target, startingFilePosition, ignoreIndex);
  }

  /** First record with timestamp ≥ ts and offset ≥ startOffset (segment-lookup.ts). */
  findOffsetByTimestamp(ts: number, startOffset = this.baseOffset): LogRecord | undefined {
    return findOffsetByTimestamp(this, ts, startOffset);
  }

  /**
   * Validates every entry and rebuilds both indexes exactly as Kafka's LogSegment.recover does
   * (the rule lives in index-rebuilder.ts, shared with `rebuild-index`); truncates the `.log` at
   * the first invalid entry unless `truncate: false` (the loader truncates itself, after saving
   * the cut bytes).
   */
  recover(opts: { truncate?: boolean; onProgress?: (bytesDone: number) => void; onEntry?: (entry: LogEntry) => void } = {}): RecoverResult {
    if (!this.writable) throw new LogtoolError('io', 'segment is read-only', { file: this.logPath });
    // Both files are written in one pass through bounded buffers and renamed into place (one
    // write per 64 KiB, not one per entry). Not fsynced: the recovery point does not advance
    // past this segment until a flush, so a crash redoes the recovery.
    const paths = { indexPath: this.indexPath, timeIndexPath: this.timeIndexPath };
    this.indexes.release();
    // Nothing keeps an entry of this walk (onEntry uses it while the scan holds it): one read buffer.
    const scanner = this.scanner({ verifyCrc: true, validateOffsets: true, reuseBuffer: true });
    let r: ReturnType<typeof scanAndIndex>;
    try {
      r = writeIndexFiles(this.io, this.dir, this.baseOffset, paths, false, (sink) =>
        scanAndIndex(scanner, this.size, { baseOffset: this.baseOffset, indexIntervalBytes: this.indexIntervalBytes, onProgress: opts.onProgress, onEntry: opts.onEntry }, sink),
      );
    } finally {
      // Reopened at once (the rebuilt files), as writable as before: recover() runs on writable segments only.
      this.indexes.offset.get();
      this.indexes.time.get();
    }
    const truncatedBytes = this.size - r.validBytes;
    if (truncatedBytes > 0 && opts.truncate !== false) {
      this.file.truncate(r.validBytes);
      this.size = r.validBytes;
      this.preallocation.truncated(r.validBytes);
    }
    this.indexes.recovered(r.maxTimestamp, r.offsetOfMaxTimestamp);
    this.rollingBasedTimestamp = undefined;
    this.lastAppendedOffset = undefined;
    return { validBytes: r.validBytes, truncatedBytes, batches: r.batches, end: r.end, nextOffset: r.nextOffset };
  }

  /** Next offset after the last entry, and how the scan from the last index entry ended (segment-lookup.ts). */
  readNextOffset(): { nextOffset: number | undefined; end: ScanEnd; validBytes: number } {
    return readNextOffset(this);
  }

  /** Kafka's onBecomeInactiveSegment: final time-index entry, indexes and log trimmed. */
  onBecomeInactive(): void {
    if (!this.writable) return;
    this.trimPreallocated();
    this.zeroTailIsEnd = false;
    this.indexes.onBecomeInactive();
  }

  /**
   * Before this segment's files are renamed or removed (retention, a swap): its descriptors leave
   * the cache, so that no later open of the same names gets one of these files.
   */
  closeDescriptors(): void {
    this.indexes.release();
    this.logFile.renamed(this.logFile.path);
  }

  /**
   * After its files were renamed `<name><suffix>` (`.deleted`): readers still iterating it read the
   * renamed files, read-only, until they are removed.
   */
  retire(suffix: string): void {
    this.closeDescriptors();
    this.retired = true;
    this.logFile.renamed(this.logPath + suffix);
    this.indexes.renamed(suffix);
  }

  /** Re-extends the indexes to their max size (for the active segment after load). */
  resizeIndexes(): void {
    this.indexes.resize(this.maxIndexBytes);
  }

  /** fdatasync of the `.log` only (group commit). */
  flushLog(): void {
    if (this.writable && !this.closed && !this.retired) {
      this.logFile.datasync();
      this.preallocation.synced();
    }
  }

  flushLogAsync(): Promise<void> {
    if (!this.writable || this.closed || this.retired) return Promise.resolve();
    this.preallocation.synced();
    return this.logFile.datasyncAsync();
  }

  /** Log, then indexes (Kafka's LogSegment.flush order). */
  flush(): void {
    this.flushLog();
    this.flushIndexes();
    this.dirty = false;
  }

  /** fdatasync of `.index` and `.timeindex`. */
  flushIndexes(): void {
    this.indexes.flush();
  }

  /** Truncates the `.log` to `bytes` and drops index entries past it. */
  truncateToBytes(bytes: number, nextOffset: number): void {
    this.file.truncate(bytes);
    this.size = bytes;
    this.preallocation.truncated(bytes);
    this.indexes.truncateTo(nextOffset);
    this.lastAppendedOffset = undefined;
  }

  close(): void {
    if (this.closed) return;
    if (this.writable && !this.retired) this.onBecomeInactive();
    this.indexes.offset.close();
    this.indexes.time.close();
    this.closeLogFile();
  }

  /** close(2) releases the fd even when it fails: mark it closed first, so that it is never closed twice. */
  private closeLogFile(): void {
    this.closed = true;
    this.logFile.close();
  }

  /**
   * Closes without trimming or writing pending index entries (a crash-like close, or a read-only
   * segment). Every descriptor is closed even when an earlier close(2) fails; the first failure is thrown afterwards.
   */
  closeQuietly(): void {
    if (this.closed) return;
    let first: unknown;
    const attempt = (fn: () => void) => {
      try {
        fn();
      } catch (e) {
        first ??= e;
      }
    };
    attempt(() => this.indexes.offset.close(true));
    attempt(() => this.indexes.time.close(true));
    attempt(() => this.closeLogFile());
    if (first !== undefined) throw first;
  }

  /** All file paths of this segment that exist. */
  files(): string[] {
    const base = path.join(this.dir, segmentFileName(this.baseOffset, ''));
    return SEGMENT_SUFFIXES.map((s) => base + s).filter((p) => this.io.stat(p) !== undefined);
  }
}

export type { AppendedBatchInfo };

export { decodeRecords };
