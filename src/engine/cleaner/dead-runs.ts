/**
 * Runs of batches the recopy need not read (Kafka's Cleaner.cleanInto reads every batch and
 * MemoryRecords.filterTo drops a batch none of whose records is retained — the same batches are
 * dropped here, only without reading their bytes a second time).
 *
 * While the offset map is built, every plain data batch (not control, not transactional) whose
 * records all went into the map, at offsets the map's LatestMarks cover, joins a run of such
 * batches lying next to each other in its segment. When the map is complete, a run is dead when no
 * offset in it is still its key's latest (offset-map.ts `anyLatest`), no active producer's last
 * data batch lies in it (Kafka's lastRecordsOfActiveProducers: kept, emptied) and it does not end
 * at the round's upper bound (kept, emptied): the filter would have dropped each of its batches
 * (checkBatchRetention DELETE_EMPTY, no record retained), and the map pass already checked their
 * CRCs and walked their records. The recopy skips dead runs of at least MIN_SKIP_BYTES (a shorter
 * one is not worth a separate read).
 *
 * Memory: 6 numbers (48 bytes) per run, at most `maxRuns` runs (sized from what the memory bound
 * has left, memory.ts); a run grows up to RUN_TARGET_BYTES, so a run's fate is decided for at most
 * that many bytes at once. Batches met when the runs are used up are simply read.
 */
import type { LogSegment } from '../segment/segment.js';
import type { OffsetMap } from './offset-map.js';

/** A run is closed once it holds this many bytes (the granularity of skipping). */
export const RUN_TARGET_BYTES = 64 * 1024;
/** Dead runs next to each other shorter than this together are read rather than skipped. */
export const MIN_SKIP_BYTES = 32 * 1024;
export const DEAD_RUN_BYTES = 48;

/** File positions [from, to) of whole batches the recopy drops without reading them. */
export interface SkipRange {
  from: number;
  to: number;
  /** Last offset of the range's last batch. */
  lastOffset: number;
  batches: number;
  records: number;
}

const FROM = 0;
const TO = 1;
const BASE = 2;
const LAST = 3;
const BATCHES = 4;
const RECORDS = 5;
const FIELDS = 6;

export class DeadRuns {
  readonly maxRuns: number;
  private data = new Float64Array(0);
  private count = 0;
  /** Runs of each segment: [first, end) indexes. */
  private readonly bySegment = new Map<LogSegment, { first: number; end: number }>();
  private open = false;

  constructor(maxRuns: number) {
    this.maxRuns = Math.max(0, Math.floor(maxRuns));
  }

  get memoryBytes(): number {
    return this.data.byteLength;
  }

  clear(): void {
    this.count = 0;
    this.bySegment.clear();
    this.open = false;
  }

  /** A batch that cannot be skipped (or the end of a segment) ends the current run. */
  close(): void {
    this.open = false;
  }

  /** A batch whose records all went into the map, unless the runs are used up. */
  add(seg: LogSegment, position: number, size: number, baseOffset: number, lastOffset: number, records: number): void {
    let segRuns = this.bySegment.get(seg);
    const d = this.data;
    if (this.open && segRuns && segRuns.end === this.count) {
      const r = (this.count - 1) * FIELDS;
      if (d[r + TO] === position && d[r + TO]! - d[r + FROM]! < RUN_TARGET_BYTES) {
        d[r + TO] = position + size;
        d[r + LAST] = lastOffset;
        d[r + BATCHES]!++;
        d[r + RECORDS]! += records;
        return;
      }
    }
    if (this.count >= this.maxRuns) return void (this.open = false);
    if (!segRuns) {
      segRuns = { first: this.count, end: this.count };
      this.bySegment.set(seg, segRuns);
    } else if (segRuns.end !== this.count) return void (this.open = false); // a segment's runs stay contiguous
    this.grow();
    const r = this.count * FIELDS;
    const w = this.data;
    w[r + FROM] = position;
    w[r + TO] = position + size;
    w[r + BASE] = baseOffset;
    w[r + LAST] = lastOffset;
    w[r + BATCHES] = 1;
    w[r + RECORDS] = records;
    this.count++;
    segRuns.end = this.count;
    this.open = true;
  }

  private grow(): void {
    if ((this.count + 1) * FIELDS <= this.data.length) return;
    const runs = Math.min(this.maxRuns, Math.max(64, this.count * 2));
    const bigger = new Float64Array(runs * FIELDS);
    bigger.set(this.data);
    this.data = bigger;
  }

  /**
   * The dead runs of `seg`, adjacent ones joined, those of at least MIN_SKIP_BYTES; `lastData` is
   * the sorted last data offsets of the active producers, `upperBound` the round's.
   */
  deadRanges(seg: LogSegment, map: OffsetMap, lastData: Float64Array, upperBound: number): SkipRange[] {
    const segRuns = this.bySegment.get(seg);
    const out: SkipRange[] = [];
    if (!segRuns) return out;
    const d = this.data;
    let cur: SkipRange | undefined;
    for (let i = segRuns.first; i < segRuns.end; i++) {
      const r = i * FIELDS;
      const base = d[r + BASE]!;
      const last = d[r + LAST]!;
      const dead = last + 1 < upperBound && !containsAny(lastData, base, last) && map.anyLatest(base, last) === false;
      if (!dead) {
        cur = undefined;
        continue;
      }
      if (cur && cur.to === d[r + FROM]) {
        cur.to = d[r + TO]!;
        cur.lastOffset = last;
        cur.batches += d[r + BATCHES]!;
        cur.records += d[r + RECORDS]!;
      } else {
        cur = { from: d[r + FROM]!, to: d[r + TO]!, lastOffset: last, batches: d[r + BATCHES]!, records: d[r + RECORDS]! };
        out.push(cur);
      }
    }
    return out.filter((s) => s.to - s.from >= MIN_SKIP_BYTES);
  }
}

/** Whether the sorted `values` hold one in [from, to]. */
function containsAny(values: Float64Array, from: number, to: number): boolean {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  return lo < values.length && values[lo]! <= to;
}
