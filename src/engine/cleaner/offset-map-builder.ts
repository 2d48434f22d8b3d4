/**
 * The cleaner's offset map build (Kafka's Cleaner.buildOffsetMap / buildOffsetMapForSegment,
 * kafka-format.md §15.2): MD5(key) → latest offset over the dirty range, skipping control batches
 * and aborted transactions; when the map fills, the round ends at the last mapped offset.
 *
 * logtool refuses records without a key (Kafka's cleaner would drop them silently): the first
 * pass counts them over the whole dirty range, and checkKeys over the already-clean part, before
 * anything changes.
 */
import path from 'node:path';
import { LogtoolError } from '../errors.js';
import { Attr, readBatchHeader, type BatchHeader } from '../format/record-batch.js';
import type { LogSegment } from '../segment/segment.js';
import type { Batch } from './batch-reader.js';
import { controlType } from './batch-records.js';
import type { MapJobResults, MapReadAhead } from './map-read-ahead.js';
import { BATCH_WORDS, NO_CONTROL_TYPE, W_CONTROL_TYPE, W_COUNT, W_HEADER, W_POSITION, W_SIZE, type MapJobSegment } from './map-worker.js';
import type { OffsetMap } from './offset-map.js';
import type { CleanRun } from './scan.js';
import type { CleanedTxnTracker } from './types.js';

export class KeylessRecordsError extends LogtoolError {
  readonly count: number;
  readonly firstOffsets: number[];
  readonly files: string[];
  constructor(count: number, firstOffsets: number[], files: string[]) {
    super(
      'unsupported',
      `${count} record(s) without a key in the range to compact (first at offset${firstOffsets.length > 1 ? 's' : ''} ${firstOffsets.join(', ')}${count > firstOffsets.length ? ', …' : ''}; in ${files.map((f) => path.basename(f)).join(', ')}). ` +
        'Compaction keeps the latest record per key, so records without a key cannot be compacted (Kafka would drop them silently). Nothing was changed.',
      { file: files[0] },
    );
    this.count = count;
    this.firstOffsets = firstOffsets;
    this.files = files;
  }
}

/** Records without a key found so far (count, the first few offsets, their files). */
export class KeylessTally {
  count = 0;
  readonly firstOffsets: number[] = [];
  readonly files = new Set<string>();

  add(offset: number, file: string): void {
    this.count++;
    this.files.add(file);
    if (this.firstOffsets.length < 5) this.firstOffsets.push(offset);
  }

  throwIfAny(): void {
    if (this.count > 0) throw new KeylessRecordsError(this.count, [...this.firstOffsets].sort((a, b) => a - b), [...this.files]);
  }
}

/**
 * Counts records without a key in [from, to) outside aborted transactions and control batches
 * (the already-clean part of the log; the dirty part is checked while its map is built).
 */
export async function checkKeys(run: CleanRun, segments: LogSegment[], txn: CleanedTxnTracker, from: number, to: number, tally: KeylessTally): Promise<void> {
  const { scan, progress } = run;
  const refs = scan.refs;
  const inRange = segments.filter((s) => s.baseOffset < to);
  progress.start('scan', inRange.reduce((n, s) => n + s.size, 0));
  for (const seg of inRange) {
    for (const e of scan.entries(seg, 0)) {
      progress.add(e.size);
      const h = e.header;
      if (h.baseOffset >= to) break;
      if ((h.attributes & Attr.control) !== 0) {
        scan.walk(e, seg);
        txn.onControlBatchRead(h, controlType(refs));
        continue;
      }
      if (txn.onBatchRead(h) || h.recordsCount === 0) continue;
      scan.walk(e, seg);
      for (let i = 0; i < refs.count; i++) {
        if (refs.keyLen[i]! >= 0) continue;
        const offset = h.baseOffset + refs.offsetDelta[i]!;
        if (offset < from || offset >= to) continue;
        tally.add(offset, seg.logPath);
      }
      await progress.maybeYield();
    }
  }
}

/**
 * One batch's records as the map build takes them: offset deltas and key lengths at
 * [at, at + count) of their arrays, and either the keys' digests (4 words a record from
 * `digestAt`, computed by the read-ahead worker) or the keys themselves (refs, walked here).
 */
abstract class MapBatch {
  position = 0;
  size = 0;
  header!: BatchHeader;
  count = 0;
  offsetDelta!: Int32Array;
  offsetDeltaAt = 0;
  keyLen!: Int32Array;
  keyLenAt = 0;
  digests: Int32Array | undefined;
  digestAt = 0;
  /** Makes the record fields valid (the records are walked only for batches whose records count). */
  abstract walk(): void;
  abstract controlType(): number | undefined;
}

/** A batch this thread read (CleanerScan.entries), walked into the scan's refs on demand. */
class ScannedBatch extends MapBatch {
  private e!: Batch;
  private seg!: LogSegment;
  constructor(private readonly run: CleanRun) {
    super();
  }
  set(e: Batch, seg: LogSegment): this {
    this.e = e;
    this.seg = seg;
    this.position = e.position;
    this.size = e.size;
    this.header = e.header;
    return this;
  }
  walk(): void {
    const refs = this.run.scan.refs;
    this.run.scan.walk(this.e, this.seg);
    this.count = refs.count;
    this.offsetDelta = refs.offsetDelta;
    this.keyLen = refs.keyLen;
  }
  controlType(): number | undefined {
    return controlType(this.run.scan.refs);
  }
}

/** A batch the read-ahead worker read, checked, walked and digested (map-worker.ts's layout). */
class WorkerBatch extends MapBatch {
  private control = NO_CONTROL_TYPE;
  /** Sets the batch at word `w` of `words`; returns the word after it. */
  set(words: Int32Array, bytes: Buffer, w: number): number {
    const n = words[w + W_COUNT]!;
    this.position = words[w + W_POSITION]!;
    this.size = words[w + W_SIZE]!;
    this.header = readBatchHeader(bytes, 4 * (w + W_HEADER));
    this.control = words[w + W_CONTROL_TYPE]!;
    this.count = n;
    this.offsetDelta = this.keyLen = this.digests = words;
    this.offsetDeltaAt = w + BATCH_WORDS;
    this.keyLenAt = this.offsetDeltaAt + n;
    this.digestAt = this.keyLenAt + n;
    return this.digestAt + 4 * n;
  }
  walk(): void {}
  controlType(): number | undefined {
    return this.control === NO_CONTROL_TYPE ? undefined : this.control;
  }
}

const NEXT = 0;
const END_OF_SEGMENT = 1;
const DONE = 2;

/** Kafka's buildOffsetMapForSegment, batch by batch, whichever thread read the batches. */
class MapFill {
  /** The map is full: the round ends at the last mapped offset. */
  full = false;

  constructor(
    private readonly run: CleanRun,
    private readonly map: OffsetMap,
    private readonly txn: CleanedTxnTracker,
    private readonly start: number,
    private readonly end: number,
    private readonly keyless: KeylessTally | undefined,
  ) {}

  /** One batch of seg: NEXT, END_OF_SEGMENT (past the range's end) or DONE (full, nothing more to check). */
  batch(seg: LogSegment, b: MapBatch): number {
    const { progress, report, scan } = this.run;
    const { map, start, keyless } = this;
    const runs = scan.deadRuns;
    progress.add(b.size);
    report.bytesScanned += b.size;
    const h = b.header;
    if (h.baseOffset >= this.end) return END_OF_SEGMENT;
    const last = h.baseOffset + h.lastOffsetDelta;
    // Whether every record of this plain data batch went into the map (dead-runs.ts).
    let allMapped = false;
    if ((h.attributes & Attr.control) !== 0) {
      b.walk();
      this.txn.onControlBatchRead(h, b.controlType());
    } else if (!this.txn.onBatchRead(h) && h.recordsCount > 0) {
      b.walk();
      allMapped = !this.full && (h.attributes & Attr.transactional) === 0;
      const { count, offsetDelta, offsetDeltaAt, keyLen, keyLenAt, digests, digestAt } = b;
      const refs = scan.refs;
      for (let r = 0; r < count; r++) {
        const kl = keyLen[keyLenAt + r]!;
        const offset = h.baseOffset + offsetDelta[offsetDeltaAt + r]!;
        if (offset < start) {
          allMapped = false;
          continue;
        }
        if (kl < 0) {
          keyless?.add(offset, seg.logPath);
          allMapped = false;
          continue;
        }
        if (this.full) continue;
        if (!(digests ? map.putDigest(digests, digestAt + 4 * r, offset) : map.put(refs.data, refs.keyStart[r]!, refs.keyStart[r]! + kl, offset))) {
          // Full: the round ends at the last mapped offset.
          this.full = true;
          allMapped = false;
          if (!keyless) return DONE;
        }
      }
    }
    if (allMapped) runs?.add(seg, b.position, b.size, h.baseOffset, last, b.count);
    else runs?.close();
    if (!this.full && last >= start) map.updateLatestOffset(last);
    return NEXT;
  }
}

/**
 * Kafka's buildOffsetMap over [start, end). With a keyless tally (the first pass) it also counts
 * records without a key, and goes on scanning (without mapping) to the end of the dirty range
 * after the map fills, so that every record of the range is checked before anything changes.
 * With `readAhead`, a worker reads, checks and digests the batches (map-read-ahead.ts) while this
 * thread fills the map; from the first batch it could not deliver on, this thread reads itself.
 */
export async function buildOffsetMap(
  run: CleanRun,
  map: OffsetMap,
  segments: LogSegment[],
  txn: CleanedTxnTracker,
  range: { start: number; end: number; pass: number },
  keyless?: KeylessTally,
  readAhead?: MapReadAhead,
): Promise<void> {
  const { scan, progress } = run;
  const { start, end } = range;
  scan.deadRuns?.clear();
  const { dirty, startPositions, jobSegments } = mapSegments(run, segments, start, end);
  progress.start('map', dirty.reduce((n, s) => n + s.size, 0), range.pass);
  const fill = new MapFill(run, map, txn, start, end, keyless);
  const job = readAhead?.job(jobSegments, 0);
  try {
    let ahead = job;
    for (let i = 0; i < dirty.length; i++) {
      const seg = dirty[i]!;
      const nextStart = i + 1 < dirty.length ? dirty[i + 1]!.baseOffset : end;
      let from = startPositions[i]!;
      let step = NEXT;
      if (ahead) {
        const r = await mapFromWorker(run, fill, seg, i, from, ahead);
        step = r.step;
        from = r.resumeAt;
        if (r.failed) {
          readAhead!.cancel();
          ahead = undefined;
        }
      }
      if (!ahead && step === NEXT) step = await mapFromScan(run, fill, seg, startPositions[i]!, from);
      if (step === DONE) return;
      scan.deadRuns?.close();
      // Offsets gap at the end of a segment: fast-forward to just before the next one.
      if (!fill.full) map.updateLatestOffset(Math.min(nextStart, end) - 1);
    }
  } finally {
    if (job) readAhead!.cancel();
  }
}

/**
 * Kafka's logSegments(start, end): the segment holding start, through those below end; where
 * each one's scan starts, and what the read-ahead worker is given of them.
 */
export function mapSegments(run: CleanRun, segments: LogSegment[], start: number, end: number): { dirty: LogSegment[]; startPositions: number[]; jobSegments: MapJobSegment[] } {
  let first = 0;
  for (let i = 0; i < segments.length; i++) if (segments[i]!.baseOffset <= start) first = i;
  const dirty = segments.slice(first).filter((s) => s.baseOffset < end);
  const startPositions = dirty.map((seg) => {
    const p = seg.offsetIndex.lookup(start).position;
    return p <= seg.size ? p : 0;
  });
  const jobSegments = dirty.map((seg, i) => {
    const before = run.scan.verifiedBefore(seg) ?? { from: 0, to: 0 };
    return { path: seg.logPath, baseOffset: seg.baseOffset, size: seg.size, startPosition: startPositions[i]!, verifiedFrom: before.from, verifiedTo: before.to };
  });
  return { dirty, startPositions, jobSegments };
}

/** The batches of seg from startPosition on, read here; those before `from` were mapped already. */
async function mapFromScan(run: CleanRun, fill: MapFill, seg: LogSegment, startPosition: number, from: number): Promise<number> {
  const b = new ScannedBatch(run);
  for (const e of run.scan.entries(seg, startPosition)) {
    if (e.position < from) continue;
    const step = fill.batch(seg, b.set(e, seg));
    if (step !== NEXT) return step;
    await run.progress.maybeYield();
  }
  return NEXT;
}

/**
 * The batches of seg as the worker delivers them; `failed` when it could not deliver them all
 * (the caller reads on from `resumeAt`, the first batch not delivered).
 */
async function mapFromWorker(run: CleanRun, fill: MapFill, seg: LogSegment, index: number, startPosition: number, job: MapJobResults): Promise<{ step: number; resumeAt: number; failed: boolean }> {
  const { before, range } = run.scan.verifiedRange(seg, startPosition);
  const b = new WorkerBatch();
  let resumeAt = startPosition;
  for (;;) {
    const m = await job.next();
    try {
      if (m.failed && m.seg < 0) return { step: NEXT, resumeAt, failed: true }; // the worker is gone
      if (m.seg < index) continue; // the rest of a segment left at the range's end
      const words = new Int32Array(m.buf, 0, m.words);
      const bytes = Buffer.from(m.buf, 0, 4 * m.words);
      for (let k = 0, w = 0; k < m.batches; k++) {
        const next = b.set(words, bytes, w);
        // The CRC counts as this scan's when the reader here would have computed it (batch-reader.ts).
        const crcChecked = !before || b.position < before.from || b.position + b.size > before.to;
        run.scan.read(range, b.position, b.size, crcChecked);
        w = next;
        resumeAt = b.position + b.size;
        const step = fill.batch(seg, b);
        if (step !== NEXT) return { step, resumeAt, failed: false };
        await run.progress.maybeYield();
      }
      if (m.failed || m.end) return { step: NEXT, resumeAt, failed: m.failed };
    } finally {
      job.consumed(m);
    }
  }
}
