/**
 * The cleaner's output (Kafka's Cleaner.groupSegmentsBySize and cleanSegments' LogSegment.open of
 * a `.cleaned` segment, kafka-format.md §15.3): segments grouped up to segment.bytes and the index
 * sizes, each group written into one `.cleaned` segment (log, offset and time index entries as the
 * segment appends them, the `.txnindex` of the aborted transactions it keeps), through one bounded
 * write buffer. A dry run writes to scratch segments in a temporary directory (read by the next
 * pass) or, on the final pass, only counts bytes.
 *
 * Writeback ahead: every WRITEBACK_AHEAD_BYTES written, the `.cleaned` log gets an fdatasync in
 * the thread pool (one at a time) while the filter goes on, so the disk writes the output as it is
 * produced and the fdatasync before the swap (finish, on the main thread as before) finds little
 * left. Crash safety rests on that last one alone; an earlier one's failure is reported by settle().
 */
import os from 'node:os';
import path from 'node:path';
import { realIO, removeTree, type FileIO } from '../io.js';
import type { LogConfig } from '../config.js';
import { LogSegment, TXN_INDEX_SUFFIX, segmentFileName, type AppendedBatchInfo } from '../segment/segment.js';
import { removeQuietly } from '../checkpoint.js';
import { writeTxnIndex } from '../partition-state/transaction-index.js';
import type { Allocate } from './batch-records.js';
import { CLEANED_SUFFIX, SEGMENT_FILE_ORDER } from './swap.js';
import type { TxnIndexEntry } from './types.js';

const WRITE_BUFFER_BYTES = 1 << 20;
/** Bytes written to a `.cleaned` log between two fdatasyncs in the background (see above). */
export const WRITEBACK_AHEAD_BYTES = 1 << 20;

export interface Output {
  readonly baseOffset: number;
  size: number;
  append(buf: Buffer, len: number, infos: AppendedBatchInfo[]): void;
  /** Waits for the background fdatasync in flight, if any; throws the first one's failure. */
  settle(): Promise<void>;
  finish(mtimeMs: number, txnEntries: TxnIndexEntry[]): void;
  discard(): void;
  /** Readable segment (scratch outputs of a dry run). */
  segment?: LogSegment;
}

/** Kafka's groupSegmentsBySize. */
export function groupSegmentsBySize(segs: LogSegment[], c: LogConfig, firstUncleanable: number): LogSegment[][] {
  const groups: LogSegment[][] = [];
  let i = 0;
  while (i < segs.length) {
    const group = [segs[i]!];
    let logSize = segs[i]!.size;
    let indexSize = segs[i]!.offsetIndex.sizeInBytes;
    let timeIndexSize = segs[i]!.timeIndex.sizeInBytes;
    i++;
    while (i < segs.length) {
      const s = segs[i]!;
      const lastOffsetOfS = i + 1 < segs.length ? segs[i + 1]!.baseOffset - 1 : firstUncleanable - 1;
      if (
        logSize + s.size <= c.segmentBytes &&
        indexSize + s.offsetIndex.sizeInBytes <= c.segmentIndexBytes &&
        timeIndexSize + s.timeIndex.sizeInBytes <= c.segmentIndexBytes &&
        (s.size === 0 || lastOffsetOfS - group[0]!.baseOffset <= 0x7fffffff)
      ) {
        group.push(s);
        logSize += s.size;
        indexSize += s.offsetIndex.sizeInBytes;
        timeIndexSize += s.timeIndex.sizeInBytes;
        i++;
      } else break;
    }
    groups.push(group);
  }
  return groups;
}

/** The write buffer batches are filtered into, flushed to the current output when full. */
export class CleanedWriter {
  out: Output | undefined;
  private wbuf = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private wlen = 0;
  private winfos: AppendedBatchInfo[] = [];

  /** Space for one batch at the end of the write buffer (flushing it first if needed). */
  readonly alloc: Allocate = (size) => {
    if (this.wlen + size > this.wbuf.length) {
      this.flush(this.out!);
      if (size > this.wbuf.length) this.wbuf = Buffer.allocUnsafe(size);
    }
    return { buf: this.wbuf, pos: this.wlen };
  };

  /** Copies a batch as it is into the write buffer. */
  write(buf: Buffer, pos: number, size: number, lastOffset: number, maxTimestamp: number): void {
    const region = this.alloc(size);
    buf.copy(region.buf, region.pos, pos, pos + size);
    this.commit(size, lastOffset, maxTimestamp);
  }

  /** Accounts a batch just written at the end of the write buffer. */
  commit(size: number, lastOffset: number, maxTimestamp: number): void {
    this.wlen += size;
    this.winfos.push({ size, lastOffset, maxTimestamp });
  }

  flush(out: Output): void {
    if (this.wlen === 0) return;
    out.append(this.wbuf, this.wlen, this.winfos);
    this.wlen = 0;
    this.winfos = [];
    if (this.wbuf.length > WRITE_BUFFER_BYTES) this.wbuf = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  }
}

/** A dry run's scratch directory and the scratch segments kept open for the next pass. */
export class ScratchSpace {
  private dir: string | undefined;
  readonly segments: LogSegment[] = [];
  private readonly io: FileIO;

  constructor(io: FileIO) {
    this.io = io;
  }

  passDir(pass: number): string {
    const prefix = path.join(os.tmpdir(), 'logtool-compact-dry-run-');
    this.dir ??= this.io.mkdtemp ? this.io.mkdtemp(prefix) : realIO.mkdtemp(prefix);
    const d = path.join(this.dir, `pass-${pass}`);
    this.io.mkdirp(d);
    return d;
  }

  /** Closes the scratch segments and removes the directory. */
  remove(): void {
    for (const s of this.segments) s.closeQuietly();
    if (this.dir) removeTree(this.io, this.dir);
  }
}

/** Output that only counts bytes (the final pass of a dry run). */
export function countingOutput(base: number): Output {
  const o: Output = {
    baseOffset: base,
    size: 0,
    append(_buf, len) {
      o.size += len;
    },
    settle: () => Promise.resolve(),
    finish() {},
    discard() {},
  };
  return o;
}

/**
 * A new segment at `base` in `dir`: `.cleaned` files in the log directory, plain names in a dry
 * run's scratch directory (`scratch` given), whose segments stay open for the next pass.
 */
export function segmentOutput(io: FileIO, c: LogConfig, dir: string, base: number, scratch?: ScratchSpace): Output {
  const suffix = scratch ? '' : CLEANED_SUFFIX;
  let seg: LogSegment;
  try {
    seg = new LogSegment({ io, dir, baseOffset: base, indexIntervalBytes: c.indexIntervalBytes, maxIndexBytes: c.segmentIndexBytes, writable: true, create: true, fileSuffix: suffix });
  } catch (e) {
    // A segment half created (its .log made, an index not: a full disk) leaves no empty file.
    for (const s of SEGMENT_FILE_ORDER) removeQuietly(io, path.join(dir, segmentFileName(base, s) + suffix));
    throw e;
  }
  const txnPath = path.join(dir, segmentFileName(base, TXN_INDEX_SUFFIX) + suffix);
  io.unlink(txnPath);
  // Writeback ahead (see the header): the fdatasync in flight, the size it was started at, its failure.
  let syncing: Promise<void> | undefined;
  let syncedBytes = 0;
  let syncFailure: { error: unknown } | undefined;
  const writeBack = (): void => {
    if (syncing || syncFailure || o.size - syncedBytes < WRITEBACK_AHEAD_BYTES) return;
    syncedBytes = o.size;
    syncing = seg.flushLogAsync().then(
      () => {
        syncing = undefined;
      },
      (error: unknown) => {
        syncing = undefined;
        syncFailure = { error };
      },
    );
  };
  const o: Output = {
    baseOffset: base,
    size: 0,
    segment: seg,
    append(buf, len, infos) {
      seg.append(buf, 0, len, infos);
      o.size = seg.size;
      writeBack();
    },
    async settle() {
      await syncing;
      if (syncFailure) throw syncFailure.error;
    },
    finish(mtimeMs, txnEntries) {
      seg.onBecomeInactive();
      seg.flush();
      const files = [seg.logPath, seg.indexPath, seg.timeIndexPath];
      if (txnEntries.length > 0) {
        writeTxnIndex(io, txnPath, txnEntries);
        files.push(txnPath);
      }
      // Kafka keeps the last input segment's modification time on the cleaned files.
      for (const f of files) io.utimes(f, mtimeMs);
      // Scratch outputs of a dry run stay open: the next pass reads them.
      if (scratch) scratch.segments.push(seg);
      else seg.close();
    },
    discard() {
      const files = [seg.logPath, seg.indexPath, seg.timeIndexPath, txnPath];
      seg.closeQuietly();
      for (const f of files) io.unlink(f);
    },
  };
  return o;
}
