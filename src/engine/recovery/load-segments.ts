/**
 * Pass 4 of Kafka's LogLoader (loadSegmentFiles, kafka-format.md §10.2): index files without a
 * `.log` removed, each `.log` opened as a segment, missing indexes noted (a writable open creates
 * them empty; recovery then rebuilds them). In a view (dry run, reader) the names are those passes
 * 1–3 would have left, segments are opened read-only, and files still named `.swap` are read under
 * that name.
 */
import path from 'node:path';
import { INDEX_SUFFIX, LOG_SUFFIX, LogSegment, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, parseBaseOffset, segmentFileName } from '../segment/segment.js';
import { SWAP_SUFFIX } from '../cleaner/swap.js';
import type { LoadContext } from './load-context.js';

const INDEX_SUFFIXES = [INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX];

/** The segments, ascending; `removed`: names passes 1–3 removed (in a view, only noted). */
export function openSegments(ctx: LoadContext, removed: Set<string>): LogSegment[] {
  let names = ctx.io.readdir(ctx.dir);
  if (ctx.viewOnly) {
    // The view of a dry run or a reader: what passes 1–3 would have left.
    names = names.filter((n) => !removed.has(n)).map((n) => (n.endsWith(SWAP_SUFFIX) ? n.slice(0, -SWAP_SUFFIX.length) : n));
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
      ctx.remove(n);
      orphansRemoved = true;
    }
  }
  if (orphansRemoved && !ctx.viewOnly) ctx.io.syncDir(ctx.dir);
  const { config } = ctx.opts;
  const present = new Set(names); // a lookup per index file: linear in the segments, not quadratic
  const segments: LogSegment[] = [];
  try {
    const bases = [...logBases].sort((a, b) => a - b);
    for (const base of bases) {
      // Before the segment is opened: a writable open creates missing index files (empty).
      for (const suffix of [INDEX_SUFFIX, TIME_INDEX_SUFFIX]) {
        const name = segmentFileName(base, suffix);
        if (!present.has(name)) ctx.missingIndexes.add(path.join(ctx.dir, name));
      }
      segments.push(
        new LogSegment({
          io: ctx.io,
          dir: ctx.dir,
          baseOffset: base,
          indexIntervalBytes: config.indexIntervalBytes,
          maxIndexBytes: config.segmentIndexBytes,
          writable: !ctx.viewOnly,
          files: ctx.opts.files,
          // Per file: a swap interrupted during its renames leaves some files named `.swap`.
          fileSuffixOf: (suffix) => (ctx.swapped.has(segmentFileName(base, suffix)) ? SWAP_SUFFIX : undefined),
          // A live writer may be appending to the last one: bound its indexes by what was there.
          snapshotIndexes: ctx.viewOnly && base === bases[bases.length - 1],
        }),
      );
    }
  } catch (e) {
    for (const s of segments) s.closeQuietly();
    throw e;
  }
  // Only the last segment may end in a writer's preallocated zeros (a roll trims them).
  if (segments.length > 0) segments[segments.length - 1]!.zeroTailIsEnd = true;
  return segments;
}
