/**
 * Segment file names: the suffixes of a segment's files and their 20-digit base-offset prefix.
 * Below both segment.ts and index-rebuilder.ts so neither imports the other
 * for them; segment.ts re-exports everything here.
 */

export const LOG_SUFFIX = '.log';
export const INDEX_SUFFIX = '.index';
export const TIME_INDEX_SUFFIX = '.timeindex';
export const TXN_INDEX_SUFFIX = '.txnindex';
export const SEGMENT_SUFFIXES = [LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX] as const;

export function segmentFileName(baseOffset: number, suffix: string): string {
  return `${String(baseOffset).padStart(20, '0')}${suffix}`;
}

/** Base offset from a segment file name (digits before the first '.'), or undefined. */
export function parseBaseOffset(fileName: string): number | undefined {
  const m = /^(\d{1,20})\./.exec(fileName);
  if (!m) return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? n : undefined;
}
