/**
 * One writer per partition: an exclusive, non-blocking flock(2) on the partition directory itself.
 * The kernel drops it when the holder dies (even by SIGKILL), so there is never a stale lock, and
 * no lock file is left in the directory to confuse Kafka. Readers take no lock. The open, flock and
 * close go through the default file-I/O layer (realIO), so that fault-injection tests reach them.
 */
import { LogtoolError } from '../errors.js';
import { realIO } from '../io.js';

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
  readonly dir: string;

  private constructor(dir: string, fd: number) {
    this.dir = dir;
    this.fd = fd;
  }

  /** Takes the lock or throws a `lock` error at once. */
  static acquire(dir: string, purpose = 'write to'): DirectoryLock {
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

  /** True if another process holds the lock (probe without keeping it). */
  static isHeld(dir: string): boolean {
    try {
      const lock = DirectoryLock.acquire(dir);
      lock.release();
      return false;
    } catch (e) {
      return e instanceof LogtoolError && e.kind === 'lock';
    }
  }

  /** Blocking variant for short critical sections (checkpoint read-modify-write). */
  static withLock<T>(dir: string, fn: () => T): T {
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
      realIO.close(fd);
    }
  }
}
