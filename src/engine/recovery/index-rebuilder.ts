/**
 * Kafka's recovery rule for a segment's `.index` and `.timeindex` (kafka-format.md §10.3), in one
 * place: LogSegment.recover (writing into the live indexes), `rebuild-index` (writing temporary
 * files renamed into place), `rebuild-index --verify` (comparing) and the loader's dry run
 * (counting) all feed the same scan through an IndexEntrySink.
 *
 * The rule, per valid batch from position 0: track the running max timestamp and the last offset
 * of the batch holding it; if `batchPosition − lastIndexedPosition > index.interval.bytes`, add
 * offset entry (batch.lastOffset, batchPosition) and time entry (maxTs, offsetOfMaxTs) — the
 * latter only if maxTs grew since the last time entry. At the end, one final time entry for the
 * segment's max (only if it grew). The scan stops at the first invalid batch (EntryScanner with
 * CRC and offset validation), which is where recovery truncates.
 *
 * Memory is bounded: the scanner reads through a fixed buffer (an entry above its
 * maxBufferedEntryBytes is checked in chunks, never loaded) and the file writers below buffer at most WRITE_BUFFER_BYTES.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { LogtoolError } from '../errors.js';
import { EntryScanner, type LogEntry, type ScanEnd } from '../segment/file-records.js';
import { INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, segmentFileName } from '../segment/segment-files.js';
import { OffsetIndex, OFFSET_INDEX_ENTRY_BYTES } from '../segment/offset-index.js';
import { TimeIndex, TIME_INDEX_ENTRY_BYTES } from '../segment/time-index.js';
import { readInt64, writeInt64 } from '../format/record-batch.js';

/** Receives index entries in file order. */
export interface IndexEntrySink {
  offsetEntry(offset: number, position: number): void;
  /** `final` marks the segment-max entry appended after the last batch (Kafka's skipFullCheck). */
  timeEntry(timestamp: number, offset: number, final: boolean): void;
}

export interface IndexScanResult {
  /** Position just after the last valid batch: where recovery would truncate. */
  validBytes: number;
  /** Size of the `.log` the scan covered. */
  fileBytes: number;
  batches: number;
  end: ScanEnd;
  /** Offset after the last valid batch; undefined if there is none. */
  nextOffset: number | undefined;
  maxTimestamp: number;
  offsetOfMaxTimestamp: number;
  offsetEntries: number;
  timeEntries: number;
}

export interface IndexScanOptions {
  baseOffset: number;
  indexIntervalBytes: number;
  /** Called with the bytes scanned so far, at most every PROGRESS_STEP_BYTES. */
  onProgress?: (bytesDone: number) => void;
  /** Called with every valid entry, in order, while the scan holds it (recovery feeds the producer state: one pass); the entry's buffer may be reused after the call. */
  onEntry?: (entry: LogEntry) => void;
}

/** Granularity of progress callbacks: often enough for a spinner, rare enough to cost nothing. */
export const PROGRESS_STEP_BYTES = 8 << 20;

/**
 * Runs Kafka's recovery rule over a scanner that must validate CRCs and offsets (so that it stops
 * where recovery would truncate).
 */
export function scanAndIndex(scanner: EntryScanner, fileBytes: number, opts: IndexScanOptions, sink: IndexEntrySink): IndexScanResult {
  let maxTs = -1;
  let offsetOfMaxTs = opts.baseOffset;
  let lastIndexedPosition = 0;
  let lastTimeEntryTs = -1; // an empty time index reports −1 as its last timestamp
  let batches = 0;
  let offsetEntries = 0;
  let timeEntries = 0;
  let nextOffset: number | undefined;
  let nextProgress = PROGRESS_STEP_BYTES;
  for (const entry of scanner.entries()) {
    opts.onEntry?.(entry);
    if (entry.maxTimestamp > maxTs) {
      maxTs = entry.maxTimestamp;
      offsetOfMaxTs = entry.lastOffset;
    }
    if (entry.position - lastIndexedPosition > opts.indexIntervalBytes) {
      sink.offsetEntry(entry.lastOffset, entry.position);
      offsetEntries++;
      if (maxTs > lastTimeEntryTs) {
        sink.timeEntry(maxTs, offsetOfMaxTs, false);
        lastTimeEntryTs = maxTs;
        timeEntries++;
      }
      lastIndexedPosition = entry.position;
    }
    batches++;
    nextOffset = entry.lastOffset + 1;
    if (opts.onProgress && entry.position + entry.size >= nextProgress) {
      opts.onProgress(entry.position + entry.size);
      nextProgress = entry.position + entry.size + PROGRESS_STEP_BYTES;
    }
  }
  if (maxTs > lastTimeEntryTs) {
    sink.timeEntry(maxTs, offsetOfMaxTs, true);
    timeEntries++;
  }
  const validBytes = scanner.end.kind === 'end' && !scanner.end.zeroTail ? fileBytes : scanner.validBytes;
  opts.onProgress?.(fileBytes);
  return { validBytes, fileBytes, batches, end: scanner.end, nextOffset, maxTimestamp: maxTs, offsetOfMaxTimestamp: offsetOfMaxTs, offsetEntries, timeEntries };
}

/** A sink that only counts (the loader's dry run). */
export const countingSink: IndexEntrySink = { offsetEntry() {}, timeEntry() {} };

// ---------------------------------------------------------------------------------------------
// Writing index files

const WRITE_BUFFER_BYTES = 64 * 1024;

/** Appends fixed-size entries to a new file through a bounded buffer. */
class IndexFileWriter {
  readonly path: string;
  private readonly io: FileIO;
  private readonly fd: number;
  private readonly buf = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private used = 0;
  private written = 0;

  constructor(io: FileIO, filePath: string) {
    this.io = io;
    this.path = filePath;
    this.fd = io.open(filePath, 'w');
  }

  /** Space for one entry of `bytes` bytes; fill it before the next call. */
  reserve(bytes: number): { buf: Buffer; at: number } {
    if (this.used + bytes > this.buf.length) this.drain();
    const at = this.used;
    this.used += bytes;
    return { buf: this.buf, at };
  }

  private drain(): void {
    if (this.used === 0) return;
    this.io.write(this.fd, this.buf, 0, this.used, this.written);
    this.written += this.used;
    this.used = 0;
  }

  /** Flushes (fsyncs when durable) and closes. */
  finish(durable: boolean): void {
    try {
      this.drain();
      if (durable) this.io.datasync(this.fd);
    } finally {
      this.io.close(this.fd);
    }
  }

  abandon(): void {
    try {
      this.io.close(this.fd);
    } finally {
      this.io.unlink(this.path);
    }
  }
}

/** Writes entries in Kafka's layout: offset index (rel int32, pos int32), time index (ts int64, rel int32). */
class IndexFilesSink implements IndexEntrySink {
  constructor(
    private readonly baseOffset: number,
    private readonly offsets: IndexFileWriter,
    private readonly times: IndexFileWriter,
  ) {}

  offsetEntry(offset: number, position: number): void {
    const { buf, at } = this.offsets.reserve(OFFSET_INDEX_ENTRY_BYTES);
    buf.writeInt32BE(offset - this.baseOffset, at);
    buf.writeInt32BE(position, at + 4);
  }

  timeEntry(timestamp: number, offset: number): void {
    const { buf, at } = this.times.reserve(TIME_INDEX_ENTRY_BYTES);
    writeInt64(buf, at, timestamp);
    buf.writeInt32BE(offset - this.baseOffset, at + 8);
  }
}

// ---------------------------------------------------------------------------------------------
// Comparing against existing index files

/** Reads the valid entries of an existing index file sequentially, in chunks. */
class IndexFileReader {
  /** Valid entries (before the zero padding of a preallocated file). */
  readonly entries: number;
  private readonly io: FileIO;
  private readonly fd: number | undefined;
  private readonly entrySize: number;
  private readonly buf: Buffer;
  private bufFirst = 0;
  private bufCount = 0;

  constructor(io: FileIO, filePath: string, baseOffset: number, kind: 'index' | 'timeindex') {
    this.io = io;
    this.entrySize = kind === 'index' ? OFFSET_INDEX_ENTRY_BYTES : TIME_INDEX_ENTRY_BYTES;
    this.buf = Buffer.allocUnsafe(Math.floor(WRITE_BUFFER_BYTES / this.entrySize) * this.entrySize);
    const opts = { io, path: filePath, baseOffset, maxIndexBytes: 0, writable: false };
    const idx = kind === 'index' ? new OffsetIndex(opts) : new TimeIndex(opts);
    this.entries = idx.entries;
    idx.close();
    this.fd = io.stat(filePath) ? io.open(filePath, 'r') : undefined;
  }

  /** Entry i's bytes (valid until the next call), or undefined past the valid entries. */
  entry(i: number): { buf: Buffer; at: number } | undefined {
    if (i >= this.entries || this.fd === undefined) return undefined;
    if (i < this.bufFirst || i >= this.bufFirst + this.bufCount) {
      const count = Math.min(this.buf.length / this.entrySize, this.entries - i);
      const n = this.io.read(this.fd, this.buf, 0, count * this.entrySize, i * this.entrySize);
      this.bufFirst = i;
      this.bufCount = Math.floor(n / this.entrySize);
      if (this.bufCount === 0) return undefined;
    }
    return { buf: this.buf, at: (i - this.bufFirst) * this.entrySize };
  }

  close(): void {
    if (this.fd !== undefined) this.io.close(this.fd);
  }
}

export interface IndexDifference {
  file: string;
  /** Entry number (0-based), or undefined for a whole-file difference. */
  entry: number | undefined;
  message: string;
}

/** Most differences listed per file; the rest are counted. */
const MAX_LISTED_DIFFERENCES = 20;

/** Compares each rebuilt entry with the existing file's entry at the same index. */
class CompareSink implements IndexEntrySink {
  readonly differences: IndexDifference[] = [];
  differenceCount = 0;
  private offsetI = 0;
  private timeI = 0;

  constructor(
    private readonly baseOffset: number,
    private readonly offsets: IndexFileReader,
    private readonly offsetsPath: string,
    private readonly times: IndexFileReader,
    private readonly timesPath: string,
  ) {}

  private differ(file: string, entry: number | undefined, message: string): void {
    this.differenceCount++;
    if (this.differences.length < MAX_LISTED_DIFFERENCES) this.differences.push({ file, entry, message });
  }

  offsetEntry(offset: number, position: number): void {
    const i = this.offsetI++;
    const e = this.offsets.entry(i);
    if (!e) return; // counted once in finish()
    const have = { offset: this.baseOffset + e.buf.readInt32BE(e.at), position: e.buf.readInt32BE(e.at + 4) };
    if (have.offset !== offset || have.position !== position) {
      this.differ(this.offsetsPath, i, `has offset ${have.offset} position ${have.position}, a rebuild gives offset ${offset} position ${position}`);
    }
  }

  timeEntry(timestamp: number, offset: number): void {
    const i = this.timeI++;
    const e = this.times.entry(i);
    if (!e) return;
    const have = { timestamp: readInt64(e.buf, e.at), offset: this.baseOffset + e.buf.readInt32BE(e.at + 8) };
    if (have.timestamp !== timestamp || have.offset !== offset) {
      this.differ(this.timesPath, i, `has timestamp ${have.timestamp} offset ${have.offset}, a rebuild gives timestamp ${timestamp} offset ${offset}`);
    }
  }

  finish(): void {
    for (const [reader, count, file] of [
      [this.offsets, this.offsetI, this.offsetsPath],
      [this.times, this.timeI, this.timesPath],
    ] as const) {
      if (reader.entries !== count) this.differ(file, undefined, `has ${reader.entries} entries, a rebuild gives ${count}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// One segment

export interface RebuildOptions {
  indexIntervalBytes: number;
  onProgress?: (bytesDone: number) => void;
}

export interface RebuildResult {
  logPath: string;
  indexPath: string;
  timeIndexPath: string;
  scan: IndexScanResult;
}

export interface VerifyResult extends RebuildResult {
  /** Missing index files. */
  missing: string[];
  differences: IndexDifference[];
  differenceCount: number;
}

function segmentPaths(dir: string, baseOffset: number) {
  return {
    logPath: path.join(dir, segmentFileName(baseOffset, LOG_SUFFIX)),
    indexPath: path.join(dir, segmentFileName(baseOffset, INDEX_SUFFIX)),
    timeIndexPath: path.join(dir, segmentFileName(baseOffset, TIME_INDEX_SUFFIX)),
  };
}

function scanSegment(io: FileIO, logPath: string, baseOffset: number, opts: RebuildOptions, sink: IndexEntrySink): IndexScanResult {
  if (!io.stat(logPath)) throw new LogtoolError('not-found', 'no such segment file', { file: logPath });
  const fd = io.open(logPath, 'r');
  try {
    const size = io.fstat(fd).size;
    const scanner = new EntryScanner({ io, path: logPath, fd, endPosition: size, verifyCrc: true, segmentBaseOffset: baseOffset, reuseBuffer: true });
    return scanAndIndex(scanner, size, { baseOffset, indexIntervalBytes: opts.indexIntervalBytes, onProgress: opts.onProgress }, sink);
  } finally {
    io.close(fd);
  }
}

/**
 * Runs `scan` with a sink writing both index files to `<path>.tmp` and renames them into place.
 * With `durable`, both are fsynced before the renames and the directory after them, so a crash
 * leaves either the old or the new files (rebuild-index); without, the caller redoes the work
 * after a crash (recovery, whose recovery point has not advanced).
 */
export function writeIndexFiles(io: FileIO, dir: string, baseOffset: number, paths: { indexPath: string; timeIndexPath: string }, durable: boolean, scan: (sink: IndexEntrySink) => IndexScanResult): IndexScanResult {
  const offsets = new IndexFileWriter(io, `${paths.indexPath}.tmp`);
  let times: IndexFileWriter | undefined;
  let result: IndexScanResult;
  try {
    times = new IndexFileWriter(io, `${paths.timeIndexPath}.tmp`);
    result = scan(new IndexFilesSink(baseOffset, offsets, times));
    offsets.finish(durable);
    times.finish(durable);
  } catch (e) {
    for (const w of [offsets, times]) {
      try {
        w?.abandon();
      } catch {
        // already closed by finish(); a stale .tmp is removed by the next load
      }
    }
    throw e;
  }
  io.rename(`${paths.indexPath}.tmp`, paths.indexPath);
  io.rename(`${paths.timeIndexPath}.tmp`, paths.timeIndexPath);
  if (durable) io.syncDir(dir);
  return result;
}

/**
 * Rebuilds a segment's `.index` and `.timeindex` from its `.log` in one pass: both are written to
 * `<name>.tmp`, fsynced, renamed over the old files, then the directory is fsynced. The files are
 * trimmed (what Kafka's recovery leaves); the loader re-extends the active segment's on open.
 * The caller must hold the partition's writer lock.
 */
export function rebuildSegmentIndexes(io: FileIO, dir: string, baseOffset: number, opts: RebuildOptions): RebuildResult {
  const paths = segmentPaths(dir, baseOffset);
  const scan = writeIndexFiles(io, dir, baseOffset, paths, true, (sink) => scanSegment(io, paths.logPath, baseOffset, opts, sink));
  return { ...paths, scan };
}

/** Compares a segment's index files with what a rebuild would write; changes nothing. */
export function verifySegmentIndexFiles(io: FileIO, dir: string, baseOffset: number, opts: RebuildOptions): VerifyResult {
  const paths = segmentPaths(dir, baseOffset);
  const missing = [paths.indexPath, paths.timeIndexPath].filter((p) => !io.stat(p));
  const offsets = new IndexFileReader(io, paths.indexPath, baseOffset, 'index');
  const times = new IndexFileReader(io, paths.timeIndexPath, baseOffset, 'timeindex');
  try {
    const sink = new CompareSink(baseOffset, offsets, paths.indexPath, times, paths.timeIndexPath);
    const scan = scanSegment(io, paths.logPath, baseOffset, opts, sink);
    if (missing.length === 0) sink.finish();
    return { ...paths, scan, missing, differences: missing.length ? [] : sink.differences, differenceCount: missing.length ? 0 : sink.differenceCount };
  } finally {
    offsets.close();
    times.close();
  }
}
