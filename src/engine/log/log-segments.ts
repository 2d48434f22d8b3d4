/**
 * The segment list of one partition (Kafka's LogSegments): segments ascending by base offset, the
 * last one active; floor lookup by offset. Removals and swaps install a new array, so an in-process
 * reader iterating the old one keeps a consistent view; a roll appends in place.
 */
import { assert } from '../errors.js';
import type { LogSegment } from '../segment/segment.js';

export class LogSegments {
  private list: LogSegment[];

  constructor(segments: LogSegment[]) {
    this.list = segments;
  }

  /** Ascending by base offset; the last one is active. Replaced, never changed in place. */
  get all(): LogSegment[] {
    return this.list;
  }

  get size(): number {
    return this.list.length;
  }

  get first(): LogSegment | undefined {
    return this.list[0];
  }

  /** The last segment, if any (a reader of an empty directory has none). */
  get last(): LogSegment | undefined {
    return this.list[this.list.length - 1];
  }

  get active(): LogSegment {
    const s = this.last;
    assert(s, 'a log always has at least one segment');
    return s;
  }

  /** The segment holding offset (floor by base offset), or undefined below the first. */
  floor(offset: number): LogSegment | undefined {
    let lo = 0;
    let hi = this.list.length - 1;
    let found: LogSegment | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.list[mid]!;
      if (s.baseOffset <= offset) {
        found = s;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /** The segment whose base offset is exactly baseOffset. */
  at(baseOffset: number): LogSegment | undefined {
    return this.list.find((s) => s.baseOffset === baseOffset);
  }

  /**
   * Appends a new active segment (in place, as a roll always did: a reader iterating the list
   * reaches it); its base must lie above the current active one's.
   */
  add(seg: LogSegment): void {
    const last = this.last;
    assert(!last || seg.baseOffset > last.baseOffset, `segment ${seg.baseOffset} added after segment ${last?.baseOffset}: base offsets must increase`);
    this.list.push(seg);
  }

  /** Drops the given segments from the list. */
  remove(doomed: readonly LogSegment[]): void {
    this.list = this.list.filter((s) => !doomed.includes(s));
  }

  /** Puts seg in the place of old (a swap): it goes where its base offset sorts. */
  replace(old: readonly LogSegment[], seg: LogSegment): void {
    const next = this.list.filter((s) => !old.includes(s));
    let at = next.findIndex((s) => s.baseOffset > seg.baseOffset);
    if (at < 0) at = next.length;
    next.splice(at, 0, seg);
    this.list = next;
  }
}
