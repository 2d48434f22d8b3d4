/**
 * `.txnindex` files rebuilt from the markers, as Kafka's recovery writes them (LogLoader
 * .recoverSegment rebuilds the producer state up to the segment's base offset, then
 * LogSegment.recover: txnIndex.reset(), and for every batch the producer state's update; each
 * completed aborted transaction is appended with producerStateManager.lastStableOffset(txn);
 * kafka-format.md §6.3, §10.3). The producer state runs on from one segment to the next, so
 * recovering segments in order reads each of them once.
 *
 * A file is written only when its bytes change: a correct `.txnindex` is left untouched, and a
 * segment with no aborted transaction gets none (Kafka creates the file on the first append; an
 * existing one is emptied, as reset() truncates it).
 */
import type { FileIO } from '../io.js';
import path from 'node:path';
import { LogSegment } from '../segment/segment.js';
import { LOG_SUFFIX, TXN_INDEX_SUFFIX, parseBaseOffset, segmentFileName } from '../segment/segment-files.js';
import type { ProducerStateManager } from './producer-state.js';
import { entryControlMarker, loadProducerState, replayBatches, type ProducerStateSource } from './producer-state-load.js';
import type { LogEntry } from '../segment/file-records.js';
import { encodeTxnIndex, writeTxnIndex, type AbortedTxn } from './transaction-index.js';

/** Whether `file` holds exactly `bytes` (a missing file holds none). */
function holds(io: FileIO, file: string, bytes: Buffer): boolean {
  const st = io.stat(file);
  if (!st) return bytes.length === 0;
  if (st.size !== bytes.length) return false;
  const buf = Buffer.alloc(bytes.length);
  const fd = io.open(file, 'r');
  try {
    let at = 0;
    while (at < buf.length) {
      const n = io.read(fd, buf, at, buf.length - at, at);
      if (n <= 0) return false;
      at += n;
    }
  } finally {
    io.close(fd);
  }
  return buf.equals(bytes);
}

/** A segment's batches being fed to the state by the caller's own scan (TxnIndexRebuilder.feeder). */
interface Feed {
  seg: LogSegment;
  /** The next segment's base offset when the feed began: replay stops before it. */
  end: number;
  /** Aborted transactions known before the segment. */
  before: number;
  /** Set when a batch reached `end`: fed state is exact only while `end` stays (a truncation dropping later segments moves it). */
  reachedEnd: boolean;
}

export class TxnIndexRebuilder {
  private state: ProducerStateManager | undefined;
  /** The offset `state` stands at. */
  private at = -1;
  private feed: Feed | undefined;

  /**
   * `segments`: the log's segments (the list may lose later ones meanwhile). `maxSnapshotOffset`:
   * the newest producer snapshot the starting state may come from (the recovery point).
   */
  constructor(
    private readonly source: ProducerStateSource,
    private readonly maxSnapshotOffset: number,
  ) {}

  private endOf(seg: LogSegment): number {
    const segments = this.source.segments;
    return segments[segments.indexOf(seg) + 1]?.baseOffset ?? Infinity;
  }

  /** The state at `seg`'s base offset (carried on from the previous segment, or loaded). */
  private stateAt(seg: LogSegment): ProducerStateManager {
    if (!this.state || this.at !== seg.baseOffset) {
      this.state = loadProducerState(this.source, { maxSnapshotOffset: Math.min(this.maxSnapshotOffset, seg.baseOffset), upTo: seg.baseOffset }).state;
      this.at = seg.baseOffset;
    }
    return this.state;
  }

  /**
   * A callback for the caller's validating scan of `seg` (recovery's LogSegment.recover), fed every
   * valid batch in order: the state replays them there, and the segment is not read a second time.
   * The next entriesFor/rebuild of `seg` uses what was fed, as replayBatches would have read it.
   */
  feeder(seg: LogSegment): (entry: LogEntry) => void {
    const state = this.stateAt(seg);
    const feed: Feed = { seg, end: this.endOf(seg), before: state.aborted.length, reachedEnd: false };
    this.feed = feed;
    this.at = -1; // mid-segment until entriesFor takes the feed
    return (entry) => {
      if (feed.reachedEnd) return;
      if (entry.lastOffset >= feed.end) feed.reachedEnd = true;
      else if (entry.header && entry.lastOffset >= seg.baseOffset) state.update(entry.header, () => entryControlMarker(entry));
    };
  }

  /** The aborted transactions whose markers lie in `seg`, with Kafka's lastStableOffset. */
  entriesFor(seg: LogSegment): AbortedTxn[] {
    const end = this.endOf(seg);
    const feed = this.feed;
    this.feed = undefined;
    if (feed?.seg === seg && (!feed.reachedEnd || feed.end === end) && this.state) {
      this.at = end;
      return this.state.aborted.slice(feed.before);
    }
    this.state = this.stateAt(seg);
    const before = this.state.aborted.length;
    replayBatches(this.state, [seg], seg.baseOffset, end);
    this.at = end;
    return this.state.aborted.slice(before);
  }

  /**
   * Rebuilds `file` (the segment's `.txnindex`) unless it already holds those entries. Returns
   * whether it was (or, in a dry run, would be) written.
   */
  rebuild(seg: LogSegment, file: string, dryRun = false): boolean {
    const entries = this.entriesFor(seg);
    if (holds(this.source.io, file, encodeTxnIndex(entries))) return false;
    if (!dryRun) writeTxnIndex(this.source.io, file, entries);
    return true;
  }
}

/**
 * `rebuild-index`: the `.txnindex` of each segment `bases` names in `dir`, rebuilt from the markers
 * with the producer state replayed from the log start (no snapshot: an explicit repair trusts only
 * the log). Returns the base offsets whose file was (or, with `dryRun`, would be) written.
 */
export function rebuildTxnIndexes(io: FileIO, dir: string, bases: readonly number[], indexIntervalBytes: number, dryRun = false): number[] {
  const all = io
    .readdir(dir)
    .map((n) => ({ n, b: parseBaseOffset(n) }))
    .filter((x) => x.b !== undefined && x.n === segmentFileName(x.b, LOG_SUFFIX))
    .map((x) => x.b!)
    .sort((a, b) => a - b);
  const segments = all.map((baseOffset) => new LogSegment({ io, dir, baseOffset, indexIntervalBytes, maxIndexBytes: 0, writable: false }));
  try {
    const rebuilder = new TxnIndexRebuilder({ io, dir, segments }, -1);
    const wanted = new Set(bases);
    return segments.filter((seg) => wanted.has(seg.baseOffset) && rebuilder.rebuild(seg, path.join(dir, segmentFileName(seg.baseOffset, TXN_INDEX_SUFFIX)), dryRun)).map((s) => s.baseOffset);
  } finally {
    for (const s of segments) s.closeQuietly();
  }
}
