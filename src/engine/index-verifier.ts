/**
 * Checks a segment's `.index` and `.timeindex` against its `.log` (what kafka-dump-log.sh's
 * verification does, widened to accept older brokers' files): every offset entry points at a batch
 * boundary whose offsets include the entry's offset; every time entry's offset lies inside a batch
 * whose max timestamp is the entry's timestamp; entries strictly increase.
 */
import type { LogSegment } from './segment.js';
import { EntryScanner } from './file-records.js';

export interface IndexMismatch {
  file: string;
  /** Entry number (0-based). */
  entry: number;
  message: string;
}

export function verifySegmentIndexes(seg: LogSegment, kinds: readonly ('index' | 'timeindex')[] = ['index', 'timeindex']): IndexMismatch[] {
  const out: IndexMismatch[] = [];
  const batchAt = (position: number) => {
    if (position < 0 || position >= seg.size) return undefined;
    const s = new EntryScanner({ io: seg.io, path: seg.logPath, fd: seg.fd, startPosition: position, endPosition: seg.size });
    const r = s.entries().next();
    return r.done ? undefined : r.value;
  };
  if (kinds.includes('index')) {
    const idx = seg.offsetIndex;
    let prev = -1;
    let prevPos = -1;
    for (let i = 0; i < idx.entries; i++) {
      const e = idx.entry(i);
      const file = idx.path;
      if (e.offset <= prev) out.push({ file, entry: i, message: `offset ${e.offset} does not increase (previous ${prev})` });
      if (e.position <= prevPos) out.push({ file, entry: i, message: `position ${e.position} does not increase (previous ${prevPos})` });
      prev = e.offset;
      prevPos = e.position;
      const b = batchAt(e.position);
      if (!b) {
        out.push({ file, entry: i, message: `position ${e.position} is not the start of a batch in ${seg.logPath} (size ${seg.size})` });
        continue;
      }
      if (e.offset < b.baseOffset || e.offset > b.lastOffset) {
        out.push({ file, entry: i, message: `offset ${e.offset} is not in the batch at position ${e.position} (offsets ${b.baseOffset}..${b.lastOffset})` });
      }
    }
  }
  if (kinds.includes('timeindex')) {
    const idx = seg.timeIndex;
    let prevTs = -Infinity;
    let prevOff = -1;
    for (let i = 0; i < idx.entries; i++) {
      const e = idx.entry(i);
      const file = idx.path;
      if (e.timestamp <= prevTs && i > 0) {
        // Kafka appends the final (max) entry on close even when equal to the last one is impossible; equal means a duplicate.
        out.push({ file, entry: i, message: `timestamp ${e.timestamp} does not increase (previous ${prevTs})` });
      }
      if (e.offset < prevOff) out.push({ file, entry: i, message: `offset ${e.offset} decreases (previous ${prevOff})` });
      prevTs = e.timestamp;
      prevOff = e.offset;
      const t = seg.translateOffset(e.offset);
      if (!t || e.offset < t.entry.baseOffset) {
        out.push({ file, entry: i, message: `offset ${e.offset} is not found in ${seg.logPath}` });
        continue;
      }
      if (t.entry.maxTimestamp !== e.timestamp) {
        out.push({ file, entry: i, message: `timestamp ${e.timestamp} differs from the max timestamp ${t.entry.maxTimestamp} of the batch holding offset ${e.offset}` });
      }
    }
  }
  return out;
}
