/**
 * `append`'s target and input checks, around Kafka's layout of one directory per partition
 * (`<log.dir>/<topic>-<partition>`, UnifiedLog): only the partition directory is ever created (a
 * missing log directory is a mistyped path, not something to create), a run that appended no record
 * leaves no directory it created, and a one-record append says so when stdin held data it did not read.
 */
import path from 'node:path';
import { LogtoolError, realIO } from '../api/format.js';
import { CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, removeQuietly, tpKey, readDirCheckpoint, updateDirCheckpoint, parseTopicPartition } from '../inspect/log.js';

/** How long a one-record append waits to see whether a pipe on stdin holds data. */
const STDIN_PEEK_MS = 100;

/** The log directory's files a partition's open and close write (Kafka's LogManager checkpoints and marker). */
const LOG_DIR_CHECKPOINTS = [RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT];

export interface AppendTarget {
  /** The partition directory existed before this run. */
  existed: boolean;
  /** Which of the log directory's checkpoints and marker existed before this run. */
  logDirFiles: Set<string>;
}

/** Checks the partition directory's parent exists; notes what existed before the run. */
export function checkAppendTarget(dir: string): AppendTarget {
  const resolved = path.resolve(dir);
  const parent = path.dirname(resolved);
  if (realIO.stat(resolved)) return { existed: true, logDirFiles: new Set() };
  if (!realIO.stat(parent)?.isDirectory) {
    throw new LogtoolError('not-found', 'no such directory: append creates the partition directory but not the log directory it goes in', { file: parent });
  }
  return { existed: false, logDirFiles: new Set([...LOG_DIR_CHECKPOINTS, CLEAN_SHUTDOWN_FILE].filter((n) => realIO.stat(path.join(parent, n)))) };
}

/**
 * Removes a partition directory this run created when no record went into it: every file in it
 * was created by the open (empty segment, indexes, lock, remembered config). Leaves it if any
 * `.log` holds bytes or it holds a directory, which this run did not make.
 */
export function removeUnusedNewDir(dir: string, target: AppendTarget): void {
  const resolved = path.resolve(dir);
  const names = realIO.readdir(resolved);
  for (const n of names) {
    const st = realIO.stat(path.join(resolved, n));
    if (!st || st.isDirectory || (n.endsWith('.log') && st.size > 0)) return;
  }
  for (const n of names) realIO.unlink(path.join(resolved, n));
  realIO.rmdir?.(resolved);
  // The close wrote this partition into the log directory's checkpoints: take it out again, and
  // remove a checkpoint or marker this run created once nothing else is in it.
  const logDir = path.dirname(resolved);
  const tp = parseTopicPartition(resolved);
  for (const name of LOG_DIR_CHECKPOINTS) {
    const file = path.join(logDir, name);
    if (!tp || !realIO.stat(file)) continue;
    updateDirCheckpoint(realIO, logDir, name, tpKey(tp.topic, tp.partition), undefined);
    if (!target.logDirFiles.has(name) && readDirCheckpoint(realIO, logDir, name).size === 0) removeQuietly(realIO, file);
  }
  if (!target.logDirFiles.has(CLEAN_SHUTDOWN_FILE)) removeQuietly(realIO, path.join(logDir, CLEAN_SHUTDOWN_FILE));
  realIO.syncDir(logDir);
}

/**
 * True when stdin holds data a one-record append leaves unread: a non-empty file, or a pipe with
 * bytes ready within STDIN_PEEK_MS (an empty or idle pipe, /dev/null and a terminal are not). Stdin
 * is closed afterwards.
 */
export async function stdinHasData(): Promise<boolean> {
  if (process.stdin.isTTY) return false;
  let st;
  try {
    st = realIO.fstat(0);
  } catch {
    return false;
  }
  if (st.isFile) return st.size > 0;
  if (st.isDirectory) return false;
  const stdin = process.stdin;
  return new Promise((resolve) => {
    const finish = (has: boolean) => {
      clearTimeout(timer);
      stdin.off('readable', onReadable);
      stdin.off('error', onError);
      stdin.destroy();
      resolve(has);
    };
    const onReadable = () => finish(stdin.read() !== null);
    const onError = () => finish(false);
    const timer = setTimeout(() => finish(false), STDIN_PEEK_MS);
    stdin.on('readable', onReadable);
    stdin.on('error', onError);
  });
}
