/**
 * `leader-epoch-checkpoint` (kafka-format.md §12.3; Kafka's LeaderEpochCheckpointFile): the generic
 * checkpoint text format, version 0, entries `epoch startOffset`. Epoch E covers offsets from its
 * start offset up to the next entry's start offset.
 */
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
