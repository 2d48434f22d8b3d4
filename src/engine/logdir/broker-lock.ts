/**
 * Coexisting with a Kafka broker: Kafka's LogManager locks each log directory with
 * `FileLock(new File(dir, ".lock")).tryLock()` — Java's FileChannel.tryLock, an exclusive POSIX
 * record lock (fcntl F_SETLK, F_WRLCK) over the whole file — and holds it while it runs.
 *
 * A logtool writer holds a shared record lock (F_RDLCK) on the same file for its whole run: if a
 * broker holds the directory, taking it fails at once (exit 1, "a Kafka broker holds DIR"), and a
 * broker starting meanwhile fails to take its lock instead of writing beside logtool. logtool
 * writers share it with each other (they exclude each other per partition with flock, lock.ts),
 * and the kernel drops it when the process dies.
 *
 * POSIX record locks belong to the process and are all dropped when any descriptor of the file is
 * closed, so this process keeps exactly one descriptor per `.lock`, shared by every holder
 * (reference counted) and closed with the last release.
 *
 * `.lock` is opened read-only and never created in a directory that lacks it: Kafka creates it at
 * startup and never removes it, so a directory without one has never been a broker's, and a
 * command that changes no record writes no file. Only a directory logtool creates itself (a new
 * log directory of a LogManager) gets one (`create`), so that a broker started there later waits.
 */
import path from 'node:path';
import { realIO, type FileIO } from '../io.js';
import { LogtoolError, assert } from '../errors.js';
import { LOCK_FILE } from './entries.js';

interface Held {
  /** undefined: the directory has no `.lock` (never a broker's), so there is nothing to hold. */
  fd: number | undefined;
  holders: number;
}

const heldByFile = new Map<string, Promise<Held>>();

export class BrokerLock {
  private released = false;

  private constructor(
    readonly logDir: string,
    private readonly file: string,
    private readonly io: FileIO,
  ) {}

  /**
   * Takes (or shares this process's) shared lock on `<logDir>/.lock`. Fails with a `lock` error
   * (exit 1) when a broker holds the directory.
   */
  static async acquire(logDir: string, io: FileIO = realIO, opts: { create?: boolean } = {}): Promise<BrokerLock> {
    const dir = path.resolve(logDir);
    const file = path.join(dir, LOCK_FILE);
    let pending = heldByFile.get(file);
    if (!pending) {
      pending = takeLock(io, dir, file, opts.create ?? false);
      heldByFile.set(file, pending);
      pending.catch(() => heldByFile.get(file) === pending && heldByFile.delete(file));
    }
    const held = await pending;
    held.holders++;
    return new BrokerLock(dir, file, io);
  }

  /** True while this process holds the lock of `logDir` (for a writer opened without a manager). */
  static heldByProcess(logDir: string): boolean {
    return heldByFile.has(path.join(path.resolve(logDir), LOCK_FILE));
  }

  /** Drops this holder; the last one closes the descriptor, which releases the lock. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    const pending = heldByFile.get(this.file);
    assert(pending, `broker lock of ${this.logDir} released but not held`);
    const held = await pending;
    held.holders--;
    if (held.holders > 0) return;
    heldByFile.delete(this.file);
    if (held.fd !== undefined) this.io.close(held.fd);
  }
}

async function takeLock(io: FileIO, dir: string, file: string, create: boolean): Promise<Held> {
  const st = io.stat(dir);
  if (!st?.isDirectory) throw new LogtoolError('not-found', 'no such log directory', { file: dir });
  const exists = io.stat(file) !== undefined;
  if (!exists && !create) return { fd: undefined, holders: 0 };
  const fd = io.open(file, exists ? 'r' : 'a+');
  try {
    await (io.recordLock ?? realIO.recordLock)(fd, 'shared');
  } catch (e) {
    try {
      io.close(fd);
    } catch {
      // the error that matters is e
    }
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EAGAIN' || code === 'EACCES') {
      throw new LogtoolError('lock', `a Kafka broker holds ${dir} (its .lock is locked); stop the broker or use a read-only command`, { file: dir });
    }
    throw e;
  }
  return { fd, holders: 0 };
}
