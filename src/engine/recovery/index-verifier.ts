/**
 * Checks a segment's `.index` and `.timeindex` against its `.log` (what kafka-dump-log.sh's
 * verification does, widened to accept older brokers' files): every offset entry points at a batch
 * boundary whose offsets include the entry's offset; every time entry's offset lies inside a batch
 * whose max timestamp is the entry's timestamp; entries strictly increase.
 *
 * "The batch's offsets" is [baseOffset, lastOffset] for a v2 batch, so both the last offset
 * (Kafka ≥ 2.0) and the first offset (pre-2.0 brokers) are accepted as an offset-index key. A legacy
 * v0/v1 entry's header only tells its last offset (a compressed wrapper's offset is that of its
 * last inner message), so its range is taken as (previous entry's last offset, last offset]: the
 * offsets a Kafka lookup would resolve to it. For the segment's first entry the previous last
 * offset is the segment base − 1.
 */
import type { LogSegment } from '../segment/segment.js';
import { EntryScanner, type LogEntry } from '../segment/file-records.js';

export interface IndexMismatch {
  file: string;
  /** Entry number (0-based). */
  entry: number;
  message: string;
}

/** What the checks need of one log entry (copied: the scanner's buffer is reused). */
interface EntryRange {
  position: number;
  /** Smallest offset the entry may hold (v2: baseOffset; legacy: previous last offset + 1). */
  firstOffset: number;
  lastOffset: number;
  maxTimestamp: number;
  legacy: boolean;
}

/** After this many restarts (an index far out of order), probe entries one by one instead. */
const MAX_RESTARTS = 8;

function rangeOf(e: LogEntry, prevLast: number): EntryRange {
  return {
    position: e.position,
    firstOffset: e.header ? e.baseOffset : prevLast + 1,
    lastOffset: e.lastOffset,
    maxTimestamp: e.maxTimestamp,
    legacy: !e.header,
  };
}

/**
 * Walks the `.log` forward once, remembering the previous entry's last offset; index entries are
 * visited in increasing position/offset order, so each index costs one pass. A request behind the
 * walker (a non-increasing index, already reported) restarts it from the start of the file; after
 * MAX_RESTARTS it probes single entries instead, where a legacy entry's previous last offset is
 * unknown and only its upper bound is checked.
 */
class EntryWalker {
  private it: Iterator<LogEntry> | undefined;
  private current: EntryRange | undefined;
  private prevLast: number;
  /** File position just after the last entry read. */
  private endCursor = 0;
  private restarts = 0;

  constructor(private readonly seg: LogSegment) {
    this.prevLast = seg.baseOffset - 1;
  }

  private scanner(startPosition = 0): EntryScanner {
    return this.seg.scanner({ startPosition, headersOnly: true, reuseBuffer: true });
  }

  private restart(): void {
    this.restarts++;
    this.it = this.scanner().entries();
    this.current = undefined;
    this.prevLast = this.seg.baseOffset - 1;
    this.endCursor = 0;
    this.advance();
  }

  private advance(): void {
    if (this.current) this.prevLast = this.current.lastOffset;
    const r = this.it!.next();
    if (r.done) {
      this.current = undefined;
      return;
    }
    this.current = rangeOf(r.value, this.prevLast);
    this.endCursor = r.value.position + r.value.size;
  }

  private get cursor(): number {
    return this.current ? this.current.position : this.endCursor;
  }

  /** The entry starting exactly at `position`, or undefined if none does. */
  at(position: number): EntryRange | undefined {
    if (this.it && position < this.cursor && this.restarts >= MAX_RESTARTS) {
      const r = this.scanner(position).entries().next();
      return r.done ? undefined : rangeOf(r.value, r.value.header ? NaN : -Infinity);
    }
    if (!this.it || position < this.cursor) this.restart();
    while (this.current && this.current.position < position) this.advance();
    return this.current && this.current.position === position ? this.current : undefined;
  }

  /** The first entry whose last offset is ≥ offset (Kafka's lookup rule), or undefined. */
  holding(offset: number): EntryRange | undefined {
    const behind = this.it !== undefined && offset <= this.prevLast;
    if (behind && this.restarts >= MAX_RESTARTS) {
      const t = this.seg.translateOffset(offset);
      return t ? rangeOf(t.entry, t.entry.header ? NaN : -Infinity) : undefined;
    }
    if (!this.it || behind) this.restart();
    while (this.current && this.current.lastOffset < offset) this.advance();
    return this.current;
  }
}

export function verifySegmentIndexes(seg: LogSegment, kinds: readonly ('index' | 'timeindex')[] = ['index', 'timeindex']): IndexMismatch[] {
  const out: IndexMismatch[] = [];
  const describe = (b: EntryRange) => (b.legacy ? `legacy entry, offsets (${b.firstOffset - 1}, ${b.lastOffset}]` : `offsets ${b.firstOffset}..${b.lastOffset}`);
  if (kinds.includes('index')) {
    const idx = seg.offsetIndex;
    const walker = new EntryWalker(seg);
    let prev = -1;
    let prevPos = -1;
    for (let i = 0; i < idx.entries; i++) {
      const e = idx.entry(i);
      const file = idx.path;
      if (e.offset <= prev) out.push({ file, entry: i, message: `offset ${e.offset} does not increase (previous ${prev})` });
      if (e.position <= prevPos) out.push({ file, entry: i, message: `position ${e.position} does not increase (previous ${prevPos})` });
      prev = e.offset;
      prevPos = e.position;
      const b = e.position >= 0 && e.position < seg.size ? walker.at(e.position) : undefined;
      if (!b) {
        out.push({ file, entry: i, message: `position ${e.position} is not the start of a batch in ${seg.logPath} (size ${seg.size})` });
        continue;
      }
      if (e.offset < b.firstOffset || e.offset > b.lastOffset) {
        out.push({ file, entry: i, message: `offset ${e.offset} is not in the batch at position ${e.position} (${describe(b)})` });
      }
    }
  }
  if (kinds.includes('timeindex')) {
    const idx = seg.timeIndex;
    const walker = new EntryWalker(seg);
    let prevTs = -Infinity;
    let prevOff = -1;
    for (let i = 0; i < idx.entries; i++) {
      const e = idx.entry(i);
      const file = idx.path;
      if (e.timestamp <= prevTs && i > 0) {
        // Kafka appends the final (max) entry on close only when it is larger; equal means a duplicate.
        out.push({ file, entry: i, message: `timestamp ${e.timestamp} does not increase (previous ${prevTs})` });
      }
      if (e.offset < prevOff) out.push({ file, entry: i, message: `offset ${e.offset} decreases (previous ${prevOff})` });
      prevTs = e.timestamp;
      prevOff = e.offset;
      const b = walker.holding(e.offset);
      if (!b || e.offset < b.firstOffset) {
        out.push({ file, entry: i, message: `offset ${e.offset} is not found in ${seg.logPath}` });
        continue;
      }
      if (b.maxTimestamp !== e.timestamp) {
        out.push({ file, entry: i, message: `timestamp ${e.timestamp} differs from the max timestamp ${b.maxTimestamp} of the batch holding offset ${e.offset}` });
      }
    }
  }
  return out;
}
