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
import { Attr } from '../format/record-batch.js';
import type { LogSegment } from '../segment/segment.js';
import { controlType } from './batch-records.js';
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
 * Kafka's buildOffsetMap over [start, end). With a keyless tally (the first pass) it also counts
 * records without a key, and goes on scanning (without mapping) to the end of the dirty range
 * after the map fills, so that every record of the range is checked before anything changes.
 */
export async function buildOffsetMap(run: CleanRun, map: OffsetMap, segments: LogSegment[], txn: CleanedTxnTracker, range: { start: number; end: number; pass: number }, keyless?: KeylessTally): Promise<void> {
  const { scan, progress } = run;
  const { start, end } = range;
  const refs = scan.refs;
  const runs = scan.deadRuns;
  runs?.clear();
  // Kafka's logSegments(start, end): the segment holding start, through those below end.
  let first = 0;
  for (let i = 0; i < segments.length; i++) if (segments[i]!.baseOffset <= start) first = i;
  const dirty = segments.slice(first).filter((s) => s.baseOffset < end);
  progress.start('map', dirty.reduce((n, s) => n + s.size, 0), range.pass);
  let full = false;
  for (let i = 0; i < dirty.length; i++) {
    const seg = dirty[i]!;
    const nextStart = i + 1 < dirty.length ? dirty[i + 1]!.baseOffset : end;
    const startPos = seg.offsetIndex.lookup(start).position;
    for (const e of scan.entries(seg, startPos <= seg.size ? startPos : 0)) {
      progress.add(e.size);
      run.report.bytesScanned += e.size;
      const h = e.header;
      if (h.baseOffset >= end) break;
      const last = h.baseOffset + h.lastOffsetDelta;
      // Whether every record of this plain data batch went into the map (dead-runs.ts).
      let allMapped = false;
      if ((h.attributes & Attr.control) !== 0) {
        scan.walk(e, seg);
        txn.onControlBatchRead(h, controlType(refs));
      } else if (!txn.onBatchRead(h) && h.recordsCount > 0) {
        scan.walk(e, seg);
        allMapped = !full && (h.attributes & Attr.transactional) === 0;
        const data = refs.data;
        for (let r = 0; r < refs.count; r++) {
          const kl = refs.keyLen[r]!;
          const offset = h.baseOffset + refs.offsetDelta[r]!;
          if (offset < start) {
            allMapped = false;
            continue;
          }
          if (kl < 0) {
            keyless?.add(offset, seg.logPath);
            allMapped = false;
            continue;
          }
          if (full) continue;
          const ks = refs.keyStart[r]!;
          if (!map.put(data, ks, ks + kl, offset)) {
            // Full: the round ends at the last mapped offset.
            full = true;
            allMapped = false;
            if (!keyless) return;
          }
        }
      }
      if (allMapped) runs?.add(seg, e.position, e.size, h.baseOffset, last, refs.count);
      else runs?.close();
      if (!full && last >= start) map.updateLatestOffset(last);
      await progress.maybeYield();
    }
    runs?.close();
    // Offsets gap at the end of a segment: fast-forward to just before the next one.
    if (!full) map.updateLatestOffset(Math.min(nextStart, end) - 1);
  }
}
