/**
 * `leader-epoch-checkpoint` (kafka-format.md §12.3; Kafka's LeaderEpochCheckpointFile): the generic
 * checkpoint text format, version 0, entries `epoch startOffset`. Epoch E covers offsets from its
 * start offset up to the next entry's start offset.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { LogtoolError } from '../errors.js';
import { parseCheckpoint, readSmallFile } from '../checkpoint.js';

export const LEADER_EPOCH_CHECKPOINT = 'leader-epoch-checkpoint';

export interface LeaderEpochEntry {
  epoch: number;
  startOffset: number;
}

/** The entries of a leader-epoch-checkpoint's text; a malformed file is 'corrupt' naming it. */
export function parseLeaderEpochCheckpoint(text: string, file: string): LeaderEpochEntry[] {
  return parseCheckpoint(text, file, 2).map(([epoch, startOffset], i) => {
    const e = Number(epoch);
    const o = Number(startOffset);
    if (!/^-?\d+$/.test(epoch!) || !/^-?\d+$/.test(startOffset!) || !Number.isSafeInteger(e) || !Number.isSafeInteger(o) || e < -2147483648 || e > 2147483647)
      throw new LogtoolError('corrupt', `line ${i + 3}: malformed entry "${epoch} ${startOffset}"`, { file });
    return { epoch: e, startOffset: o };
  });
}

/** Reads the file through the I/O layer; a missing file has no entries (Kafka creates it empty). */
export function readLeaderEpochCheckpoint(io: FileIO, file: string): LeaderEpochEntry[] {
  const buf = readSmallFile(io, file);
  return buf ? parseLeaderEpochCheckpoint(buf.toString('utf8'), file) : [];
}

export interface LeaderEpochBounds {
  /** The partition's log start offset; undefined when not known (no lower bound checked). */
  logStart?: number;
  /** The partition's log end offset; undefined when not known (no upper bound checked). */
  logEnd?: number;
}

export interface LeaderEpochProblem {
  /** Index of the entry in the file's order. */
  index: number;
  entry: LeaderEpochEntry;
  message: string;
}

/**
 * What is wrong with a partition's epoch entries: epochs must strictly increase, start offsets
 * must not decrease, and start offsets must lie within [log start, log end]. One exception, as in
 * Kafka's LeaderEpochFileCache.truncateFromStart: the entry in effect at the log start (the last
 * entry starting at or below it) may start below it, because that epoch still covers the log
 * start; Kafka clamps it in memory only when the start advances, and the file may lag.
 */
export function checkLeaderEpochs(entries: readonly LeaderEpochEntry[], bounds: LeaderEpochBounds = {}): LeaderEpochProblem[] {
  const problems: LeaderEpochProblem[] = [];
  const { logStart, logEnd } = bounds;
  let inEffectAtStart = -1;
  if (logStart !== undefined) entries.forEach((e, i) => { if (e.startOffset <= logStart) inEffectAtStart = i; });
  entries.forEach((entry, index) => {
    const add = (message: string) => problems.push({ index, entry, message });
    if (entry.epoch < 0) add(`epoch ${entry.epoch} is negative`);
    if (entry.startOffset < 0) add(`start offset ${entry.startOffset} is negative`);
    const prev = entries[index - 1];
    if (prev && entry.epoch <= prev.epoch) add(`epoch ${entry.epoch} does not increase (previous entry has epoch ${prev.epoch})`);
    if (prev && entry.startOffset < prev.startOffset) add(`start offset ${entry.startOffset} of epoch ${entry.epoch} is below ${prev.startOffset}, the start of epoch ${prev.epoch}`);
    if (logStart !== undefined && entry.startOffset < logStart && index !== inEffectAtStart)
      add(`start offset ${entry.startOffset} of epoch ${entry.epoch} is below the log start offset ${logStart}`);
    if (logEnd !== undefined && entry.startOffset > logEnd) add(`start offset ${entry.startOffset} of epoch ${entry.epoch} is beyond the log end offset ${logEnd}`);
  });
  return problems;
}

/** The line of the file (1-based) holding entry `index`: the version and count lines come first. */
export const leaderEpochEntryLine = (index: number): number => index + 3;

/** A problem of a partition's leader-epoch-checkpoint, by file and line. */
export interface LeaderEpochFileProblem {
  file: string;
  line?: number;
  message: string;
  /** The file does not parse: Kafka's CheckpointFile refuses it and the broker cannot load the partition. */
  unreadable?: boolean;
}

/**
 * Reads and checks `<dir>/leader-epoch-checkpoint` (checkLeaderEpochs' rules, each problem naming
 * its line). A missing file has no entries and no problem; one that does not parse is one
 * `unreadable` problem. `verify` and `doctor` both check with this.
 */
export function checkLeaderEpochFile(io: FileIO, dir: string, bounds: LeaderEpochBounds): { file: string; entries: LeaderEpochEntry[]; problems: LeaderEpochFileProblem[] } {
  const file = path.join(dir, LEADER_EPOCH_CHECKPOINT);
  let entries: LeaderEpochEntry[];
  try {
    entries = readLeaderEpochCheckpoint(io, file);
  } catch (e) {
    if (!(e instanceof LogtoolError) || e.kind !== 'corrupt') throw e;
    const m = /^line (\d+): (.*)$/s.exec(e.message);
    return { file, entries: [], problems: [{ file, line: m ? Number(m[1]) : undefined, message: m ? m[2]! : e.message, unreadable: true }] };
  }
  const problems = checkLeaderEpochs(entries, bounds).map((p) => ({ file, line: leaderEpochEntryLine(p.index), message: p.message }));
  return { file, entries, problems };
}

/** What BatchEpochCheck needs of a batch. */
export interface EpochBatch {
  baseOffset: number;
  lastOffset: number;
  partitionLeaderEpoch: number;
  /** The `.log` file and byte position, for the message. */
  logFile: string;
  position: number;
}

/**
 * Each batch against the checkpoint, by Kafka's LeaderEpochFileCache.assign: appending a batch
 * assigns its partition leader epoch from its base offset and removes every entry with an epoch
 * at or above it, so an entry in effect at a batch's base offset never has an epoch above the
 * batch's. Batches without an epoch (-1, logtool's own appends; legacy formats) and batches below
 * the first entry (the cache starts later, or was cleared) are not checked.
 */
export class BatchEpochCheck {
  constructor(
    private readonly entries: readonly LeaderEpochEntry[],
    private readonly file: string,
  ) {}

  check(b: EpochBatch): LeaderEpochFileProblem | undefined {
    const entries = this.entries;
    if (b.partitionLeaderEpoch < 0 || entries.length === 0 || b.baseOffset < entries[0]!.startOffset) return undefined;
    let lo = 0;
    let hi = entries.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (entries[mid]!.startOffset <= b.baseOffset) lo = mid;
      else hi = mid - 1;
    }
    const e = entries[lo]!;
    if (b.partitionLeaderEpoch >= e.epoch) return undefined;
    return {
      file: this.file,
      line: leaderEpochEntryLine(lo),
      message: `epoch ${e.epoch} starts at offset ${e.startOffset}, but the batch at offsets ${b.baseOffset}..${b.lastOffset} (${path.basename(b.logFile)} at byte ${b.position}) has the lower partition leader epoch ${b.partitionLeaderEpoch}; appending it would have removed this entry`,
    };
  }
}

/** Which epoch covers which offsets: each entry up to the next one's start, the last up to the log end (exclusive). */
export function leaderEpochRanges(entries: readonly LeaderEpochEntry[], logEnd: number): { epoch: number; startOffset: number; endOffset: number }[] {
  return entries.map((e, i) => ({ epoch: e.epoch, startOffset: e.startOffset, endOffset: Math.max(e.startOffset, entries[i + 1]?.startOffset ?? logEnd) }));
}
