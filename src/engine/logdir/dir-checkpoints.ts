/**
 * The offset checkpoint files of a log directory, shared by all its partitions (Kafka's LogManager:
 * recovery-point-offset-checkpoint, log-start-offset-checkpoint; LogCleanerManager:
 * cleaner-offset-checkpoint; file format in kafka-format.md §12 and checkpoint.ts).
 *
 * Kafka rewrites each file whole from the state of every log it holds. A logtool writer holds one
 * partition, so it changes its own entry by a read-modify-write under the directory's flock
 * (DirectoryLock.withLock), one at a time per file in this process (rewriteFileAsync), and only
 * when the entry changes. A file that exists but cannot be read, or does not parse, stops the
 * writer with an error naming the file (and the line): taking it as empty and rewriting it would
 * erase every other partition's entry. Readers (ls, verify, read-only opens) report it instead.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { LogtoolError } from '../errors.js';
import { DirectoryLock } from '../log/lock.js';
import {
  LOG_START_OFFSET_CHECKPOINT,
  RECOVERY_POINT_CHECKPOINT,
  formatOffsetCheckpoint,
  parseOffsetCheckpoint,
  readOffsetCheckpoint,
  rewriteFileAsync,
  setOffsetEntry,
  writeOffsetCheckpoint,
  type OffsetCheckpoint,
} from '../checkpoint.js';

/** The checkpoints every writer of a partition updates (the cleaner's is checked when it runs). */
export const WRITER_CHECKPOINTS: readonly string[] = [RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT];

/** Turns a parse or read failure into the error a writer stops with (the file and line kept). */
function refuse(e: unknown, file: string): never {
  if (e instanceof LogtoolError) {
    const hint = 'logtool does not rewrite a checkpoint file it cannot read (that would erase the other partitions\' entries); fix or remove it';
    throw new LogtoolError(e.kind, `${e.message}; ${hint}`, { file: e.file ?? file, position: e.position }, { cause: e });
  }
  throw e;
}

/** The entries of `<logDir>/<name>` (missing: none); unreadable or malformed is an error. */
export function readDirCheckpoint(io: FileIO, logDir: string, name: string): OffsetCheckpoint {
  const file = path.join(logDir, name);
  try {
    return readOffsetCheckpoint(io, file);
  } catch (e) {
    return refuse(e, file);
  }
}

/**
 * Checks before a writer changes anything that the shared checkpoints it will update can be
 * read, so a malformed one stops it with every file as it was.
 */
export function requireWritableCheckpoints(io: FileIO, logDir: string): void {
  for (const name of WRITER_CHECKPOINTS) readDirCheckpoint(io, logDir, name);
}

/**
 * Sets (or with undefined removes) one entry of `<logDir>/<name>` under the directory's lock;
 * rewrites the file only when the entry changes. Returns whether it did.
 */
export function updateDirCheckpoint(io: FileIO, logDir: string, name: string, key: string, offset: number | undefined): boolean {
  return DirectoryLock.withLock(logDir, () => {
    const cp = readDirCheckpoint(io, logDir, name);
    if (!setOffsetEntry(cp, key, offset)) return false;
    writeOffsetCheckpoint(io, path.join(logDir, name), cp);
    return true;
  });
}

/** updateDirCheckpoint without blocking the event loop (rewriteFileAsync: no lock held across an await). */
export function updateDirCheckpointAsync(io: FileIO, logDir: string, name: string, key: string, offset: number | undefined): Promise<boolean> {
  return updateDirCheckpointEntriesAsync(io, logDir, name, () => new Map([[key, offset]]));
}

/**
 * Sets (undefined: removes) several entries of `<logDir>/<name>` in one rewrite, as Kafka's
 * LogManager checkpoints a directory's logs together; `entries` is called under the directory's
 * lock, so it sees the logs as they are when the file is read. Rewrites the file only when an
 * entry changes; returns whether it did.
 */
export function updateDirCheckpointEntriesAsync(io: FileIO, logDir: string, name: string, entries: () => ReadonlyMap<string, number | undefined>): Promise<boolean> {
  const file = path.join(logDir, name);
  return rewriteFileAsync(io, file, (current) => {
    let cp: OffsetCheckpoint;
    try {
      cp = parseOffsetCheckpoint(current, file);
    } catch (e) {
      return refuse(e, file);
    }
    let changed = false;
    for (const [key, offset] of entries()) changed = setOffsetEntry(cp, key, offset) || changed;
    return changed ? formatOffsetCheckpoint(cp) : undefined;
  });
}
