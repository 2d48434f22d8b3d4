/**
 * Kafka's crash-safe segment replacement (LocalLog.replaceSegments, kafka-format.md §15.4):
 *
 *   0. (logtool, --keep-removed) hard-link or copy every old file into the keep dir, durably, while
 *      the swap can still be undone: an unusable keep dir fails the swap with nothing renamed;
 *   1. rename the new segment's files `.cleaned` → `.swap` (new segments in descending base-offset
 *      order; per segment: log, index, time index, txn index — Kafka's changeFileSuffixes order);
 *      then fsync the directory, so the swap files are durable before anything old goes away;
 *   2. rename each old segment's files to `<name>.deleted`; then fsync the directory (logtool; Kafka
 *      relies on renames reaching the disk in the order made, which nothing promises before a
 *      directory fsync — see below);
 *   3. rename the `.swap` files to their final names;
 *   4. fsync the directory;
 *   5. remove the `.deleted` files (at once, or after file.delete.delay.ms by the caller).
 *
 * A crash at any point is completed or undone by the loader (loader.ts, §10.1): `.cleaned` files
 * are deleted (undo); a `.swap` whose base is ≥ the lowest `.cleaned` base is deleted (undo of a
 * half-done step 1); remaining `.swap` files replace every old file in their offset range and are
 * renamed into place (completion of steps 2–3); `.deleted` files are removed. The loader finds the
 * range to clear only from `.log.swap` files, so a new `.log` under its final name must never be
 * on disk while an old file in its range still has its own name: without the fsync after step 2
 * a power loss can keep the rename of step 3 and lose one of step 2, and the loader (Kafka's
 * rules) then keeps old and new segments side by side, overlapping.
 *
 * Live readers in other processes: every replacement bumps a generation file (seqlock, see
 * generation.ts) around steps 1–5, so a reader can tell that the directory changed under it.
 */
import path from 'node:path';
import { unlinkAsync, type FileIO } from '../io.js';
import { removeQuietly } from '../checkpoint.js';
import { INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, segmentFileName } from '../segment/segment.js';

export const CLEANED_SUFFIX = '.cleaned';
export const SWAP_SUFFIX = '.swap';
export const DELETED_SUFFIX = '.deleted';
/** Kafka's changeFileSuffixes order. */
export const SEGMENT_FILE_ORDER = [LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX] as const;

export type SwapPhase =
  /** (cleaner) the `.cleaned` segment is written and fsynced. */
  | 'cleaned-written'
  | 'kept-aside'
  | 'cleaned-to-swap'
  | 'swap-durable'
  | 'old-to-deleted'
  /** Directory fsync after step 2: every old file is `.deleted` before a `.swap` takes its final name. */
  | 'deleted-durable'
  | 'swap-to-final'
  | 'final-durable'
  | 'deleted-removed'
  /** (cleaner) cleaner-offset-checkpoint written at the end of a round. */
  | 'checkpointed';

export interface SwapStep {
  phase: SwapPhase;
  /** The file just renamed or removed (absent for directory fsyncs). */
  file?: string;
}

/** Called after every step; tests throw from it to simulate a crash right after that step. */
export type StepHook = (step: SwapStep) => void;

export interface RemovedFile {
  /** Original path of the file that left the log. */
  file: string;
  /** Where a copy was kept (with --keep-removed), if anywhere. */
  keptAt?: string;
}

export interface SwapRequest {
  io: FileIO;
  dir: string;
  /** Base offsets of the new segments (their files carry the `.cleaned` suffix now). */
  newBases: number[];
  /** Old segments: base offset and the paths of their existing files. */
  old: { baseOffset: number; files: string[] }[];
  /** Keep a copy (hard link, or copy across file systems) of every old file here before it goes. */
  keepDir?: string;
  /**
   * Remove the `.deleted` files at once (the CLI); otherwise the caller schedules it, or removes
   * them itself (removeDeletedFiles).
   */
  deleteNow: boolean;
  hook?: StepHook;
}

export interface SwapResult {
  /** Files renamed to `.deleted` (removed already when deleteNow). */
  deleted: string[];
  removed: RemovedFile[];
}

function existing(io: FileIO, dir: string, base: number, suffix: string): string[] {
  const out: string[] = [];
  for (const s of SEGMENT_FILE_ORDER) {
    const p = path.join(dir, segmentFileName(base, s) + suffix);
    if (io.stat(p)) out.push(p);
  }
  return out;
}

/**
 * Errors thrown by swapSegments once its renames had begun. The caller must then leave the
 * `.cleaned` files where they are: with any of them left, the loader undoes the swap (Kafka's
 * rule); removing them would make the loader complete a half-renamed swap.
 */
export const swapBegun = new WeakSet<object>();

/** Copy buffer for keeping a file aside where hard links are refused. */
const KEEP_COPY_CHUNK_BYTES = 1 << 20;

const linkRefused = (e: unknown): boolean => {
  const code = ((e as { cause?: NodeJS.ErrnoException })?.cause ?? (e as NodeJS.ErrnoException))?.code;
  return code === 'EXDEV' || code === 'EPERM' || code === 'ENOTSUP';
};

/** Copies `from` to a new file `to` (never overwriting) in bounded chunks, then fdatasyncs it. */
function copyFileDurable(io: FileIO, from: string, to: string): void {
  const src = io.open(from, 'r');
  try {
    const dst = io.open(to, 'wx');
    try {
      const buf = Buffer.allocUnsafe(KEEP_COPY_CHUNK_BYTES);
      for (let pos = 0; ; ) {
        const n = io.read(src, buf, 0, buf.length, pos);
        if (n <= 0) break;
        io.write(dst, buf, 0, n, pos);
        pos += n;
      }
      io.datasync(dst);
    } finally {
      io.close(dst);
    }
  } finally {
    io.close(src);
  }
}

/**
 * Hard-links (or, across file systems, copies) each file into dir through the I/O layer and makes
 * the new names durable; returns the new paths in order. Never overwrites: a later pass can
 * replace a segment of the same name again. If any file cannot be kept, the copies made so far are
 * removed and the error (naming the path under dir) is thrown, so nothing is half-kept.
 */
export function keepAside(io: FileIO, files: string[], dir: string): string[] {
  const kept: string[] = [];
  try {
    io.mkdirp(dir);
    for (const file of files) {
      let target = path.join(dir, path.basename(file));
      for (let n = 1; io.stat(target); n++) target = path.join(dir, `${path.basename(file)}.${n}`);
      try {
        io.link(file, target);
      } catch (e) {
        if (!linkRefused(e)) throw e;
        try {
          copyFileDurable(io, file, target);
        } catch (copyError) {
          removeQuietly(io, target);
          throw copyError;
        }
      }
      kept.push(target);
    }
    io.syncDir(dir);
    return kept;
  } catch (e) {
    for (const k of kept) removeQuietly(io, k);
    throw e;
  }
}

export function swapSegments(req: SwapRequest): SwapResult {
  const { io, dir, hook } = req;
  const step = (phase: SwapPhase, file?: string) => hook?.({ phase, file });
  const newBases = [...req.newBases].sort((a, b) => a - b);
  // 0. Copies kept aside (durably) before the swap can no longer be undone: from step 1 on the next
  //    open may complete it, so a keep dir that cannot take the copies must fail the swap here,
  //    with every old file still in place.
  const removed: RemovedFile[] = [];
  const old = [...req.old].sort((a, b) => a.baseOffset - b.baseOffset);
  const oldFiles = old.flatMap((seg) => seg.files);
  if (req.keepDir) {
    const kept = keepAside(io, oldFiles, req.keepDir);
    oldFiles.forEach((file, i) => {
      removed.push({ file, keptAt: kept[i] });
      step('kept-aside', kept[i]);
    });
  } else for (const file of oldFiles) removed.push({ file });
  // From the first rename on, the swap belongs to the loader: it undoes the swap while any
  // `.cleaned` file is left and completes it otherwise. A failure from then on must leave every
  // file as it is (swapBegun tells the caller not to remove the `.cleaned` output).
  const deleted: string[] = [];
  let begun = false;
  try {
    // 1. .cleaned → .swap, newest segment first.
    for (const base of [...newBases].reverse()) {
      for (const f of existing(io, dir, base, CLEANED_SUFFIX)) {
        const to = f.slice(0, -CLEANED_SUFFIX.length) + SWAP_SUFFIX;
        io.rename(f, to);
        begun = true;
        step('cleaned-to-swap', to);
      }
    }
    io.syncDir(dir);
    step('swap-durable');
    // 2. old files → .deleted.
    for (const seg of old) {
      for (const f of seg.files) {
        const to = f + DELETED_SUFFIX;
        io.rename(f, to);
        deleted.push(to);
        step('old-to-deleted', to);
      }
    }
    io.syncDir(dir);
    step('deleted-durable');
    // 3. .swap → final names, oldest first.
    for (const base of newBases) {
      for (const f of existing(io, dir, base, SWAP_SUFFIX)) {
        const to = f.slice(0, -SWAP_SUFFIX.length);
        io.rename(f, to);
        step('swap-to-final', to);
      }
    }
    // 4. make the renames durable.
    io.syncDir(dir);
    step('final-durable');
  } catch (e) {
    if (begun && typeof e === 'object' && e !== null) swapBegun.add(e);
    throw e;
  }
  // 5. physical removal.
  if (req.deleteNow) {
    for (const f of deleted) {
      io.unlink(f);
      step('deleted-removed', f);
    }
  }
  return { deleted, removed };
}

/**
 * Step 5 in the background (the cleaner, while it filters the next group): each `.deleted` file
 * unlinked in libuv's thread pool, in order, with the same step after each. A crash before it
 * ends leaves `.deleted` files, which the loader removes.
 */
export async function removeDeletedFiles(io: FileIO, files: string[], hook?: StepHook): Promise<void> {
  for (const f of files) {
    await unlinkAsync(io, f);
    hook?.({ phase: 'deleted-removed', file: f });
  }
}
