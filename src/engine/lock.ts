/**
 * One writer per partition: an exclusive, non-blocking flock(2) on the partition directory itself.
 * The kernel drops it when the holder dies (even by SIGKILL), so there is never a stale lock, and
 * no lock file is left in the directory to confuse Kafka. Readers take no lock.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { LogtoolError } from './errors.js';

const require = createRequire(import.meta.url);
const fsExt: { flockSync(fd: number, flags: 'ex' | 'exnb' | 'sh' | 'shnb' | 'un'): void } = require('fs-ext');

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
      fd = fs.openSync(dir, 'r');
    } catch (e) {
      throw new LogtoolError('not-found', `cannot open directory: ${(e as NodeJS.ErrnoException).code}`, { file: dir });
    }
    try {
      fsExt.flockSync(fd, 'exnb');
    } catch (e) {
      fs.closeSync(fd);
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
        throw new LogtoolError('lock', `another process holds the lock on this directory; cannot ${purpose} it now`, { file: dir });
      }
      throw new LogtoolError('io', `flock failed: ${code}`, { file: dir });
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
    const fd = fs.openSync(dir, 'r');
    try {
      fsExt.flockSync(fd, 'ex');
      return fn();
    } finally {
      fs.closeSync(fd); // closing drops the flock
    }
  }

  /**
   * withLock without blocking the event loop: tries the lock and, while another holder has it,
   * retries every pollMs on a timer. fn is synchronous, so the lock is never held across an await
   * (a blocking withLock elsewhere in this process can never wait for this one).
   */
  static async withLockAsync<T>(dir: string, fn: () => T, pollMs = 2): Promise<T> {
    for (;;) {
      const fd = fs.openSync(dir, 'r');
      try {
        fsExt.flockSync(fd, 'exnb');
      } catch (e) {
        fs.closeSync(fd);
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'EAGAIN' && code !== 'EWOULDBLOCK') throw new LogtoolError('io', `flock failed: ${code}`, { file: dir });
        await new Promise((r) => setTimeout(r, pollMs));
        continue;
      }
      try {
        return fn();
      } finally {
        fs.closeSync(fd); // closing drops the flock
      }
    }
  }

  release(): void {
    if (this.fd !== undefined) {
      fs.closeSync(this.fd);
      this.fd = undefined;
    }
  }
}
