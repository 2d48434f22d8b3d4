/**
 * One writer per partition: an exclusive, non-blocking flock(2) on the partition directory itself.
 * The kernel drops it when the holder dies (even by SIGKILL), so there is never a stale lock, and
 * no lock file is left in the directory to confuse Kafka. Readers take no lock. The open, flock and
 * close go through the default file-I/O layer (realIO), so that fault-injection tests reach them.
 *
 * A LogManager writes every partition of its log directories, and one descriptor per partition
 * would not fit `ulimit -n` (issue 12: 1,000 partitions; at most one descriptor per log directory
 * may keep writers apart). So a manager holds an exclusive flock on the log directory itself
 * (`holdLogDir`, one descriptor) for its whole run, and takes each partition's lock only while it
 * loads the partition, which fails while another writer holds it. A writer of one partition takes
 * the partition's lock, then checks that no manager holds the log directory. Either order of the
 * two finds the other. The log directory's flock is also the short lock of checkpoint
 * read-modify-writes (withLock): a manager's process runs those under its own hold, and the
 * check waits out such short holds before it reports a manager (`logDirHeld`).
 */
import path from 'node:path';
import { LogtoolError, assert } from '../errors.js';
import { realIO } from '../io.js';

/** Log directories this process holds (a LogManager), by resolved path: the flock's descriptor. */
const heldLogDirs = new Map<string, number>();

/** How long a check waits for a log directory's flock before it counts as a manager's: checkpoint writes hold it for milliseconds. */
const LOG_DIR_PROBE_MS = 1000;

/** Closing is best effort on paths that already failed: the first error is the one reported. */
function closeQuietly(fd: number): void {
  try {
    realIO.close(fd);
  } catch {
    // the fd is gone either way
  }
}

/** Runs fn on the open lock fd, then closes it (dropping the flock); the first error is the one reported. */
function runLocked<T>(fd: number, fn: () => T): T {
  let result: T;
  try {
    result = fn();
  } catch (e) {
    closeQuietly(fd);
    throw e;
  }
  realIO.close(fd);
  return result;
}

export class DirectoryLock {
  private fd: number | undefined;
  private onRelease: (() => void) | undefined;
  readonly dir: string;

  private constructor(dir: string, fd: number) {
    this.dir = dir;
    this.fd = fd;
  }

  /**
   * Takes the lock or throws a `lock` error at once (also when a LogManager holds the log directory,
   * unless `underLogDir`: the manager of this process loading its own partition).
   */
  static acquire(dir: string, purpose = 'write to', opts: { underLogDir?: boolean | 'main-thread' } = {}): DirectoryLock {
    const lock = DirectoryLock.flockDir(dir, purpose);
    const logDir = path.dirname(path.resolve(dir));
    let free: boolean;
    try {
      // 'main-thread': a LogManager's worker thread (logdir/partition-worker.ts), whose main thread
      // holds the log directory (this thread's module state cannot tell).
      if (opts.underLogDir === true) assert(heldLogDirs.has(logDir), 'a partition opened under a log-directory lock this process does not hold', { file: dir });
      free = opts.underLogDir !== undefined && opts.underLogDir !== false ? true : !DirectoryLock.logDirHeld(logDir);
    } catch (e) {
      closeQuietly(lock.fd!);
      throw e;
    }
    if (free) return lock;
    lock.release();
    throw new LogtoolError('lock', `a LogManager holds the log directory ${logDir}; cannot ${purpose} this partition now`, { file: dir });
  }

  /** The exclusive, non-blocking flock of one directory, as a DirectoryLock. */
  private static flockDir(dir: string, purpose: string): DirectoryLock {
    let fd: number;
    try {
      fd = realIO.open(dir, 'r');
    } catch (e) {
      if (e instanceof LogtoolError && e.kind !== 'not-found') throw e;
      throw new LogtoolError('not-found', 'cannot open directory: ENOENT', { file: dir });
    }
    try {
      realIO.flock(fd, 'exnb');
    } catch (e) {
      closeQuietly(fd);
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
        throw new LogtoolError('lock', `another process holds the lock on this directory; cannot ${purpose} it now`, { file: dir });
      }
      throw e;
    }
    return new DirectoryLock(dir, fd);
  }

  /**
   * True if another writer holds the partition: its lock, or a LogManager of another process its
   * log directory (probe without keeping either; this process's own manager does not count).
   */
  static isHeld(dir: string): boolean {
    try {
      DirectoryLock.flockDir(dir, 'write to').release();
    } catch (e) {
      return e instanceof LogtoolError && e.kind === 'lock';
    }
    const logDir = path.dirname(path.resolve(dir));
    return !heldLogDirs.has(logDir) && DirectoryLock.logDirHeld(logDir);
  }

  /**
   * A LogManager's hold on a whole log directory (see the file comment): fails with a `lock` error
   * when another manager (or this process's) holds it.
   */
  static holdLogDir(logDir: string): DirectoryLock {
    const resolved = path.resolve(logDir);
    if (heldLogDirs.has(resolved) || DirectoryLock.logDirHeld(resolved)) {
      throw new LogtoolError('lock', 'another LogManager holds this log directory', { file: logDir });
    }
    const lock = DirectoryLock.flockDir(resolved, 'hold');
    heldLogDirs.set(resolved, lock.fd!);
    lock.onRelease = () => heldLogDirs.delete(resolved);
    return lock;
  }

  /**
   * Whether a LogManager holds the log directory: this process's, or another's whose flock stays
   * taken for LOG_DIR_PROBE_MS (a checkpoint write holds it for milliseconds only).
   */
  static logDirHeld(logDir: string): boolean {
    const resolved = path.resolve(logDir);
    if (heldLogDirs.has(resolved)) return true;
    const deadline = Date.now() + LOG_DIR_PROBE_MS;
    for (;;) {
      let fd: number;
      try {
        fd = realIO.open(resolved, 'r');
      } catch (e) {
        if (e instanceof LogtoolError && e.kind === 'not-found') return false; // no directory, no manager
        throw e;
      }
      try {
        realIO.flock(fd, 'exnb');
        return false;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'EAGAIN' && code !== 'EWOULDBLOCK') throw e;
      } finally {
        realIO.close(fd);
      }
      if (Date.now() >= deadline) return true;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5); // sleeps 5 ms
    }
  }

  /** Blocking variant for short critical sections (checkpoint read-modify-write). */
  static withLock<T>(dir: string, fn: () => T): T {
    // This process's LogManager holds the directory: nothing else can take it, and fn is synchronous.
    if (heldLogDirs.has(path.resolve(dir))) return fn();
    const fd = realIO.open(dir, 'r');
    return runLocked(fd, () => {
      realIO.flock(fd, 'ex');
      return fn();
    });
  }

  /**
   * withLock without blocking the event loop: tries the lock and, while another holder has it,
   * retries every pollMs on a timer. fn is synchronous, so the lock is never held across an await
   * (a blocking withLock elsewhere in this process can never wait for this one).
   */
  static async withLockAsync<T>(dir: string, fn: () => T, pollMs = 2): Promise<T> {
    if (heldLogDirs.has(path.resolve(dir))) return fn();
    for (;;) {
      const fd = realIO.open(dir, 'r');
      try {
        realIO.flock(fd, 'exnb');
      } catch (e) {
        closeQuietly(fd);
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'EAGAIN' && code !== 'EWOULDBLOCK') throw e;
        await new Promise((r) => setTimeout(r, pollMs));
        continue;
      }
      return runLocked(fd, fn);
    }
  }

  release(): void {
    if (this.fd !== undefined) {
      const fd = this.fd;
      this.fd = undefined;
      this.onRelease?.();
      realIO.close(fd);
    }
  }
}
