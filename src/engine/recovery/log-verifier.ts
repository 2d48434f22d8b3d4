/**
 * A read-only check of a whole partition directory, for operators and CI: every entry's size,
 * magic and CRC, offsets increasing within and across segments, every index entry against the
 * `.log`, and (deep) every record decoded — decompression and Kafka's record-level validation;
 * the leader-epoch checkpoint, and every batch's partition leader epoch against it.
 * It changes nothing and takes no lock, so it runs beside a writer or a broker; what it reports
 * is what `recover` would repair or what Kafka would reject.
 */
import path from 'node:path';
import type { Log } from '../log/log.js';
import { LogtoolError } from '../errors.js';
import { verifySegmentIndexes } from './index-verifier.js';
import { entryRecordCount } from '../format/entry-records.js';
import { indexFileProblems } from './index-sanity.js';
import { lookAgainBesideWriter } from './live-writer.js';
import { TXN_INDEX_SUFFIX, segmentFileName, type LogSegment } from '../segment/segment.js';
import { BatchEpochCheck, checkLeaderEpochFile } from '../partition-state/leader-epochs.js';

export interface VerifyProblem {
  file: string;
  /** Byte position in the file, or the index entry number for index files, or the line of a text file. */
  position?: number;
  entry?: number;
  line?: number;
  /** A text file that does not parse at all (leader-epoch-checkpoint). */
  unreadable?: boolean;
  message: string;
}

export interface VerifyReport {
  dir: string;
  segments: number;
  batches: number;
  bytes: number;
  /** Records decoded (deep only). */
  records: number;
  indexEntries: number;
  problems: VerifyProblem[];
  logStartOffset: number;
  logEndOffset: number;
}

export interface VerifyOptions {
  /** Decode every record (decompression included), not only batch headers and CRCs. */
  deep?: boolean;
  /** Skip the index checks. */
  skipIndexes?: boolean;
  /** Stop collecting after this many problems (the report says so). */
  maxProblems?: number;
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
}

/**
 * Missing or insane index files of a segment, by the rules recover (the loader) applies — unless a
 * writer retired the segment since this reader opened it (its .log is gone by name too) — then its
 * entries against the log. False once `add` says the report is full.
 */
function verifyIndexFiles(seg: LogSegment, isLast: boolean, report: VerifyReport, add: (p: VerifyProblem) => boolean): boolean {
  const txnIndex = path.join(path.dirname(seg.logPath), segmentFileName(seg.baseOffset, TXN_INDEX_SUFFIX));
  const check = () => (seg.io.stat(seg.logPath) ? indexFileProblems(seg.io, { index: seg.indexPath, timeIndex: seg.timeIndexPath, txnIndex }, seg.baseOffset) : []);
  // A writer rolling creates the new `.log` first and its index files just after: a missing index
  // of the last segment while a writer holds the partition is looked for again before reporting.
  const problems = isLast ? lookAgainBesideWriter(path.dirname(seg.logPath), MISSING_INDEX_LOOKS, check, (p) => p.length > 0) : check();
  for (const p of problems) if (!add({ file: p.file, position: p.position, message: p.reason })) return false;
  report.indexEntries += seg.offsetIndex.entries + seg.timeIndex.entries;
  for (const m of verifySegmentIndexes(seg)) if (!add({ file: m.file, entry: m.entry, message: m.message })) return false;
  seg.releaseIndexes();
  return true;
}

/** Looks (1 ms apart, up to 50 ms) for a live writer's just-rolled segment's index files before reporting them missing. */
const MISSING_INDEX_LOOKS = 50;

export function verifyLog(log: Log, opts: VerifyOptions = {}): VerifyReport {
  const maxProblems = opts.maxProblems ?? 1000;
  const report: VerifyReport = {
    dir: log.dir,
    segments: log.segments.length,
    batches: 0,
    bytes: 0,
    records: 0,
    indexEntries: 0,
    problems: [],
    logStartOffset: log.logStartOffset,
    logEndOffset: log.nextOffset,
  };
  const add = (p: VerifyProblem): boolean => {
    if (report.problems.length < maxProblems) report.problems.push(p);
    return report.problems.length < maxProblems;
  };
  // leader-epoch-checkpoint: its entries, then (below) every batch against them.
  const epochs = checkLeaderEpochFile(log.io, log.dir, { logStart: log.logStartOffset, logEnd: log.nextOffset });
  for (const p of epochs.problems) if (!add(p)) return report;
  const epochCheck = new BatchEpochCheck(epochs.entries, epochs.file);
  const total = log.segments.reduce((n, s) => n + s.size, 0);
  let done = 0;
  let prevLast = -1;
  let prevFile: string | undefined;
  for (const seg of log.segments) {
    // Nothing of an entry is kept past the next (the deep decode counts): one read buffer.
    const scanner = seg.scanner({ verifyCrc: true, validateOffsets: true, reuseBuffer: true });
    let first = true;
    for (const e of scanner.entries()) {
      if (first && e.baseOffset <= prevLast && prevFile) {
        add({ file: seg.logPath, position: e.position, message: `first offset ${e.baseOffset} does not follow the last offset ${prevLast} of ${path.basename(prevFile)}` });
      }
      first = false;
      report.batches++;
      report.bytes += e.size;
      prevLast = e.lastOffset;
      const epochProblem = e.header && epochCheck.check({ baseOffset: e.baseOffset, lastOffset: e.lastOffset, partitionLeaderEpoch: e.header.partitionLeaderEpoch, logFile: seg.logPath, position: e.position });
      if (epochProblem && !add(epochProblem)) return report;
      if (opts.deep) {
        try {
          // Every record checked, none built: a batch of millions of records is counted, never held.
          report.records += entryRecordCount(e, { file: seg.logPath });
        } catch (err) {
          if (!(err instanceof LogtoolError)) throw err;
          if (!add({ file: seg.logPath, position: e.position, message: err.message })) return report;
        }
      }
      if ((report.batches & 1023) === 0) opts.onProgress?.(done + e.position, total);
    }
    if (scanner.end.kind !== 'end') {
      const what = scanner.end.kind === 'partial' ? 'torn tail' : 'invalid data';
      if (!add({ file: seg.logPath, position: scanner.end.position, message: `${what}: ${scanner.end.reason}` })) return report;
    }
    if (!opts.skipIndexes && !verifyIndexFiles(seg, seg === log.segments[log.segments.length - 1], report, add)) return report;
    prevFile = seg.logPath;
    done += seg.size;
    opts.onProgress?.(done, total);
  }
  return report;
}
