/**
 * Committed read positions of consumer groups for one partition: the offset of the next record
 * each group will read (Kafka's committed offset). Kept in the partition directory as
 * `consumer-offsets-checkpoint`, in Kafka's checkpoint text format:
 *
 *     0            <- version
 *     2            <- number of entries
 *     billing 1500 <- `<group> <offset>`
 *     audit 42
 *
 * Kafka ignores files in a partition directory that it does not know, so the partition stays
 * readable by Kafka. The file is replaced whole with writeFileAtomic (tmp + fsync + rename +
 * directory fsync): a crash leaves either the old or the new file, never a torn one.
 *
 * Locking. Commits are read-modify-write of a file shared by every group, possibly from several
 * processes (an embedded Channel in the writer and `logtool consume` next to it). They cannot lock
 * the partition directory: the log writer holds a non-blocking exclusive flock on it for as long as
 * it is open (lock.ts), and flock conflicts between open file descriptions even within one process,
 * so that would block forever. Nor can they lock the checkpoint file itself: rename replaces its
 * inode, so two committers could hold locks on different inodes. They take a short blocking flock
 * on a sibling file, `consumer-offsets-checkpoint.lock`, which is created once and never renamed
 * or removed (an empty file Kafka ignores like the checkpoint). The lock is held only for the
 * synchronous read + write, so waiting for it is bounded by one checkpoint write.
 * Reads take no lock: rename makes every read see a whole file.
 */
import path from 'node:path';
import { realIO, type FileIO } from '../io.js';
import type { Log } from '../log/log.js';
import { InvalidArgumentError, LogtoolError } from '../errors.js';
import { DirectoryLock } from '../log/lock.js';
import { formatCheckpoint, parseCheckpoint, readSmallFile, writeFileAtomic } from '../checkpoint.js';

export const CONSUMER_OFFSETS_CHECKPOINT = 'consumer-offsets-checkpoint';
export const CONSUMER_OFFSETS_LOCK = `${CONSUMER_OFFSETS_CHECKPOINT}.lock`;

/** Longest group name (Kafka's topic-name limit; group ids have none, but the file needs one). */
export const MAX_GROUP_NAME_CHARS = 249;
/** Group names: printable ASCII without spaces (the checkpoint format separates fields by spaces). */
const GROUP_RE = /^[\x21-\x7e]+$/;

export interface ConsumerPosition {
  group: string;
  /** Offset of the next record the group reads. */
  offset: number;
}

export interface ResumePosition {
  /** Offset of the next record the group reads. */
  offset: number;
  /** The committed position (undefined if the group never committed). */
  stored: number | undefined;
  /** Why `offset` differs from `stored`: below the log start offset, or beyond the log end offset. */
  moved?: 'below-start' | 'beyond-end';
}

export interface CommitPositionOptions {
  /** Allow moving the position backwards (re-reading). Default false: commits are monotonic. */
  force?: boolean;
}

/** Throws an invalid-argument error (naming `group`) unless `group` can be stored in the checkpoint. */
export function validateGroupName(group: string): void {
  if (typeof group !== 'string' || group.length === 0 || group.length > MAX_GROUP_NAME_CHARS || !GROUP_RE.test(group)) {
    throw new InvalidArgumentError(['group'], `consumer group name must be 1 to ${MAX_GROUP_NAME_CHARS} printable ASCII characters without spaces, not ${JSON.stringify(group)}`);
  }
}

/**
 * Positions of every consumer group of one partition. Bounds come from the Log given: a commit must
 * lie within [log start offset, log end offset], where the end is the committed end (what readers
 * can see; for a read-only open, the end when it was opened).
 */
export class ConsumerPositions {
  readonly file: string;
  readonly lockFile: string;
  private readonly log: Log;
  private readonly io: FileIO;

  constructor(log: Log) {
    this.log = log;
    this.io = log.io;
    this.file = path.join(log.dir, CONSUMER_OFFSETS_CHECKPOINT);
    this.lockFile = path.join(log.dir, CONSUMER_OFFSETS_LOCK);
  }

  /** The end a position may reach: the log's committed end offset (readable data). */
  logEndOffset(): number {
    return this.log.positions().committed.offset;
  }

  /** The group's committed position, or undefined if it never committed. */
  get(group: string): number | undefined {
    validateGroupName(group);
    return this.readAll().get(group);
  }

  /**
   * Where a group resumes reading: its committed position, or the log start offset if it never
   * committed. A position below the log start (retention deleted records) restarts at the start; one
   * beyond the log end (a lost tail was recovered) moves back to the end, so that records appended
   * later at those offsets reach the group. `moved` says which happened; nothing is committed here.
   */
  resumePosition(group: string): ResumePosition {
    const stored = this.get(group);
    const start = this.log.logStartOffset;
    const end = this.logEndOffset();
    if (stored === undefined) return { offset: start, stored };
    if (stored < start) return { offset: start, stored, moved: 'below-start' };
    if (stored > end) return { offset: end, stored, moved: 'beyond-end' };
    return { offset: stored, stored };
  }

  /** Every group with its position, sorted by group name. */
  list(): ConsumerPosition[] {
    return [...this.readAll().entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([group, offset]) => ({ group, offset }));
  }

  /**
   * Commits `offset` as the group's position, durably. Monotonic unless `force`: moving backwards
   * fails with an out-of-range error (another consumer of the same group may have moved ahead).
   * Fails with out-of-range if the offset is below the log start offset or beyond the log end.
   */
  commit(group: string, offset: number, options: CommitPositionOptions = {}): void {
    validateGroupName(group);
    if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError(['offset'], `position must be a non-negative integer, not ${offset}`);
    const start = this.log.logStartOffset;
    const end = this.logEndOffset();
    if (offset > end) throw new LogtoolError('out-of-range', `cannot commit position ${offset} for group ${group}: it is beyond the log end offset ${end}`, { file: this.log.dir });
    if (offset < start) throw new LogtoolError('out-of-range', `cannot commit position ${offset} for group ${group}: it is below the log start offset ${start} (earlier records were deleted)`, { file: this.log.dir });
    this.withCommitLock(() => {
      const all = this.readAll();
      const current = all.get(group);
      if (current === offset) return;
      if (current !== undefined && offset < current && !options.force) {
        throw new LogtoolError('out-of-range', `cannot move group ${group} back from ${current} to ${offset} without force (positions only advance)`, { file: this.file });
      }
      all.set(group, offset);
      const rows = [...all.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([g, o]) => [g, String(o)]);
      writeFileAtomic(this.io, this.file, formatCheckpoint(rows));
    });
  }

  private withCommitLock<T>(fn: () => T): T {
    // Created once (O_CREAT without truncation) and never removed: every committer locks one inode.
    // Locks live on the default layer (realIO), as DirectoryLock's flock does.
    realIO.close(realIO.open(this.lockFile, 'a'));
    return DirectoryLock.withLock(this.lockFile, fn);
  }

  private readAll(): Map<string, number> {
    const out = new Map<string, number>();
    const data = readSmallFile(this.io, this.file);
    if (!data) return out;
    for (const [group, offset] of parseCheckpoint(data.toString('utf8'), this.file, 2)) {
      if (!/^\d+$/.test(offset!) || !Number.isSafeInteger(Number(offset))) throw new LogtoolError('corrupt', `malformed position "${group} ${offset}"`, { file: this.file });
      out.set(group!, Number(offset));
    }
    return out;
  }
}
