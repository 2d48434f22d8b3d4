/**
 * Passes 1–3 of Kafka's LogLoader (removeTempFilesAndCollectSwapFiles, then the swap completion
 * of load(); kafka-format.md §10.1), for what a crash left of a clean, a split or a deletion:
 *
 *  1. `*.deleted` removed (and logtool's own stale `*.index.tmp`), `*.cleaned` removed, `*.swap`
 *     at or above the lowest `.cleaned` base offset removed (an unfinished clean/split);
 *  2. interrupted swaps: every file numbered inside the remaining `.log.swap` segments' offset
 *     range removed;
 *  3. the remaining `.swap` files renamed into place.
 *
 * In a view (dry run, reader) nothing is removed or renamed: the names are only noted.
 */
import path from 'node:path';
import { LOG_SUFFIX, LogSegment, parseBaseOffset } from '../segment/segment.js';
import { CLEANED_SUFFIX, DELETED_SUFFIX, SWAP_SUFFIX } from '../cleaner/swap.js';
import type { LoadContext } from './load-context.js';

const STALE_INDEX_TMP_RE = /^\d{20}\.(index|timeindex)\.tmp$/;

/** Returns the names that are gone after the passes (really, or in the dry run's view). */
export function resolveLeftovers(ctx: LoadContext): Set<string> {
  const removed = new Set<string>();
  const names = ctx.io.readdir(ctx.dir).sort();
  const keptSwaps = removeTempFiles(ctx, names, removed);
  if (keptSwaps.length === 0) return removed;
  removeSwappedRange(ctx, names, keptSwaps, removed);
  // Pass 3: rename the swaps into place.
  ctx.changing();
  for (const s of keptSwaps) {
    const target = s.slice(0, -SWAP_SUFFIX.length);
    if (!ctx.viewOnly) ctx.io.rename(path.join(ctx.dir, s), path.join(ctx.dir, target));
    else ctx.swapped.add(target);
    removed.delete(target);
    ctx.report.swapsCompleted.push(s);
  }
  if (!ctx.viewOnly) ctx.io.syncDir(ctx.dir);
  return removed;
}

/** Pass 1; returns the `.swap` files that stay. */
function removeTempFiles(ctx: LoadContext, names: string[], removed: Set<string>): string[] {
  const swaps: string[] = [];
  const cleaned: string[] = [];
  let minCleanedBase = Infinity;
  for (const n of names) {
    if (n.endsWith(DELETED_SUFFIX)) {
      // KRaft snapshots pending deletion are the metadata log's business (Kafka skips them too).
      if (n.endsWith(`.checkpoint${DELETED_SUFFIX}`)) continue;
      ctx.remove(n, false);
      removed.add(n);
    } else if (STALE_INDEX_TMP_RE.test(n) && parseBaseOffset(n) !== undefined) {
      // logtool's own index rebuild output, left by a crash before its rename.
      ctx.remove(n, false);
      removed.add(n);
    } else if (n.endsWith(CLEANED_SUFFIX)) {
      cleaned.push(n);
      const b = parseBaseOffset(n);
      if (b !== undefined) minCleanedBase = Math.min(minCleanedBase, b);
    } else if (n.endsWith(SWAP_SUFFIX)) swaps.push(n);
  }
  const keptSwaps: string[] = [];
  for (const s of swaps) {
    const b = parseBaseOffset(s);
    if (b !== undefined && b >= minCleanedBase) {
      ctx.remove(s);
      removed.add(s);
    } else keptSwaps.push(s);
  }
  for (const c of cleaned) {
    ctx.remove(c, false);
    removed.add(c);
  }
  return keptSwaps;
}

/** Pass 2: the range covered by the swap segments replaces every older file inside it. */
function removeSwappedRange(ctx: LoadContext, names: string[], keptSwaps: string[], removed: Set<string>): void {
  const logSwaps = keptSwaps.filter((s) => s.endsWith(`${LOG_SUFFIX}${SWAP_SUFFIX}`) && parseBaseOffset(s) !== undefined);
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of logSwaps) {
    const base = parseBaseOffset(s)!;
    const seg = new LogSegment({ io: ctx.io, dir: ctx.dir, baseOffset: base, indexIntervalBytes: ctx.opts.config.indexIntervalBytes, maxIndexBytes: 0, writable: false, fileSuffix: SWAP_SUFFIX });
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
    if (n.endsWith(SWAP_SUFFIX) || removed.has(n)) continue;
    const b = parseBaseOffset(n);
    if (b !== undefined && b >= lo && b < hi && ctx.io.stat(path.join(ctx.dir, n))?.isFile) {
      ctx.remove(n);
      removed.add(n);
    }
  }
}
