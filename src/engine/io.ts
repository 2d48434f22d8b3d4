/**
 * The one file-I/O layer. Every byte the engine writes, every fsync, truncate and rename goes
 * through a FileIO, so that tests can substitute a recording layer that produces crash states
 * (what survives a power loss) or a slow one that stalls fsync. Production uses `realIO`, which forwards to `nativeIO`
 * unless a test installed another layer (installIO).
 *
 * Reads and writes are synchronous on purpose: they hit the page cache and are cheaper than a
 * round trip through libuv's thread pool. fsync (of files and directories) is offered
 * asynchronously too, because group commit needs the event loop to keep accepting appends while
 * the disk works: the append path uses only the asynchronous forms; the synchronous ones serve
 * opening, closing, and commands that have no concurrent callers.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { assert, ioError, SymlinkError } from './errors.js';

const require = createRequire(import.meta.url);
type FsExt = {
  flockSync(fd: number, flags: 'ex' | 'exnb'): void;
  fcntl(fd: number, cmd: 'setlk', type: number, callback: (err: NodeJS.ErrnoException | null) => void): void;
};
let fsExtLib: FsExt | undefined;
/** fs-ext (a native add-on) is loaded on the first lock, not at start-up (issue 15). */
const fsExt = (): FsExt => (fsExtLib ??= require('fs-ext') as FsExt);

/** struct flock's l_type values (fcntl.h): Linux and most others, and macOS/BSD. */
const LOCK_TYPES = process.platform === 'darwin' || process.platform.endsWith('bsd') ? { shared: 1, unlock: 2 } : { shared: 0, unlock: 2 };

export interface FileStat {
  size: number;
  mtimeMs: number;
  isDirectory: boolean;
  isFile: boolean;
  /** True when the path itself is a symbolic link (the other fields describe its target). */
  isSymlink?: boolean;
  /** Inode number, when the layer knows it (a reopened path is checked to be the same file). */
  ino?: number;
}

export interface FileIO {
  /**
   * Opens a file; flags as node:fs ('r', 'r+', 'w+', 'a+' …). Opening for writing never follows a
   * symbolic link (O_NOFOLLOW): a SymlinkError instead.
   */
  open(path: string, flags: string): number;
  close(fd: number): void;
  read(fd: number, buf: Buffer, offset: number, length: number, position: number): number;
  write(fd: number, buf: Buffer, offset: number, length: number, position: number): number;
  truncate(fd: number, length: number): void;
  fstat(fd: number): FileStat;
  /** fdatasync: data and the metadata needed to read it back (file size). */
  datasync(fd: number): void;
  /** Asynchronous fdatasync for group commit. */
  datasyncAsync(fd: number): Promise<void>;
  /** Asynchronous read (the thread pool); position null reads on from the descriptor's offset (a pipe: whatever is there, waiting for some). */
  readAsync?(fd: number, buf: Buffer, offset: number, length: number, position: number | null): Promise<number>;
  rename(from: string, to: string): void;
  /** Hard link `to` → the file `from`; fails if `to` exists (callers copy when linking is refused: EXDEV, EPERM, ENOTSUP). */
  link(from: string, to: string): void;
  unlink(path: string): void;
  mkdirp(path: string): void;
  readdir(path: string): string[];
  /** undefined when the path does not exist. */
  stat(path: string): FileStat | undefined;
  /** fsync of a directory, so that creations and renames in it are durable. */
  syncDir(path: string): void;
  /** Asynchronous syncDir, for the append path (group commit, thorough flush). */
  syncDirAsync(path: string): Promise<void>;
  utimes(path: string, mtimeMs: number): void;
  /**
   * flock(2) on an open fd ('ex' blocks, 'exnb' fails with EAGAIN/EWOULDBLOCK when held). Optional:
   * a layer without it (an in-memory one) leaves locking to the default layer.
   */
  flock?(fd: number, mode: 'ex' | 'exnb'): void;
  /**
   * A POSIX record lock over the whole file (fcntl F_SETLK): 'shared' (F_RDLCK) or 'unlock'. Fails
   * at once with EAGAIN or EACCES when another process holds a conflicting one (Java's
   * FileChannel.tryLock takes such a lock, exclusive). flock and fcntl locks do not see each other
   * on Linux. Asynchronous: fs-ext's synchronous fcntl cannot pass struct flock. Optional as flock.
   */
  recordLock?(fd: number, mode: 'shared' | 'unlock'): Promise<void>;
  /** Creates a fresh directory `<prefix>XXXXXX` and returns its path. Optional as flock. */
  mkdtemp?(prefix: string): string;
  /** Removes an empty directory (missing is not an error). Optional as flock. */
  rmdir?(path: string): void;
}

function toStat(s: fs.Stats): FileStat {
  return { size: s.size, mtimeMs: s.mtimeMs, isDirectory: s.isDirectory(), isFile: s.isFile(), ino: s.ino };
}

/** Flags that open for writing, with O_NOFOLLOW: a write never goes through a symbolic link. */
const NOFOLLOW_WRITE_FLAGS: Record<string, number> = (() => {
  const c = fs.constants;
  const base: Record<string, number> = {
    'r+': c.O_RDWR,
    w: c.O_WRONLY | c.O_CREAT | c.O_TRUNC,
    'w+': c.O_RDWR | c.O_CREAT | c.O_TRUNC,
    wx: c.O_WRONLY | c.O_CREAT | c.O_TRUNC | c.O_EXCL,
    'wx+': c.O_RDWR | c.O_CREAT | c.O_TRUNC | c.O_EXCL,
    a: c.O_WRONLY | c.O_CREAT | c.O_APPEND,
    'a+': c.O_RDWR | c.O_CREAT | c.O_APPEND,
  };
  for (const k of Object.keys(base)) base[k]! |= c.O_NOFOLLOW;
  return base;
})();

/** fd → path, only for error messages. */
const pathsByFd = new Map<number, string>();
const pathOf = (fd: number): string => pathsByFd.get(fd) ?? `fd ${fd}`;

/** The operating system's file calls. */
export const nativeIO: Required<FileIO> = {
  open(path, flags) {
    const writeFlags = NOFOLLOW_WRITE_FLAGS[flags];
    try {
      const fd = fs.openSync(path, writeFlags ?? flags);
      pathsByFd.set(fd, path);
      return fd;
    } catch (e) {
      if (writeFlags !== undefined && (e as NodeJS.ErrnoException).code === 'ELOOP') throw new SymlinkError(path);
      throw ioError(e, path, 'open');
    }
  },
  close(fd) {
    pathsByFd.delete(fd);
    try {
      fs.closeSync(fd);
    } catch (e) {
      throw ioError(e, pathOf(fd), 'close');
    }
  },
  read(fd, buf, offset, length, position) {
    try {
      return fs.readSync(fd, buf, offset, length, position);
    } catch (e) {
      throw ioError(e, pathOf(fd), 'read');
    }
  },
  write(fd, buf, offset, length, position) {
    try {
      let done = 0;
      while (done < length) done += fs.writeSync(fd, buf, offset + done, length - done, position + done);
      return done;
    } catch (e) {
      throw ioError(e, pathOf(fd), 'write');
    }
  },
  truncate(fd, length) {
    try {
      fs.ftruncateSync(fd, length);
    } catch (e) {
      throw ioError(e, pathOf(fd), 'truncate');
    }
  },
  fstat(fd) {
    try {
      return toStat(fs.fstatSync(fd));
    } catch (e) {
      throw ioError(e, pathOf(fd), 'stat');
    }
  },
  datasync(fd) {
    try {
      fs.fdatasyncSync(fd);
    } catch (e) {
      throw ioError(e, pathOf(fd), 'fdatasync');
    }
  },
  datasyncAsync(fd) {
    return new Promise((resolve, reject) => {
      fs.fdatasync(fd, (err) => (err ? reject(ioError(err, pathOf(fd), 'fdatasync')) : resolve()));
    });
  },
  readAsync(fd, buf, offset, length, position) {
    return new Promise((resolve, reject) => {
      fs.read(fd, buf, offset, length, position, (err, n) => (err ? reject(ioError(err, pathOf(fd), 'read')) : resolve(n)));
    });
  },
  rename(from, to) {
    try {
      fs.renameSync(from, to);
    } catch (e) {
      throw ioError(e, from, `rename to ${to}`);
    }
  },
  link(from, to) {
    try {
      fs.linkSync(from, to);
    } catch (e) {
      throw ioError(e, to, `link to ${from}`);
    }
  },
  unlink(path) {
    try {
      fs.unlinkSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw ioError(e, path, 'unlink');
    }
  },
  mkdirp(path) {
    try {
      fs.mkdirSync(path, { recursive: true });
    } catch (e) {
      throw ioError(e, path, 'mkdir');
    }
  },
  readdir(path) {
    try {
      return fs.readdirSync(path);
    } catch (e) {
      throw ioError(e, path, 'readdir');
    }
  },
  stat(path) {
    try {
      const l = fs.lstatSync(path);
      return l.isSymbolicLink() ? { ...toStat(fs.statSync(path)), isSymlink: true } : toStat(l);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
      throw ioError(e, path, 'stat');
    }
  },
  syncDir(path) {
    let fd: number | undefined;
    try {
      fd = fs.openSync(path, 'r');
      fs.fsyncSync(fd);
    } catch (e) {
      throw ioError(e, path, 'fsync of directory');
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  },
  syncDirAsync(path) {
    return new Promise((resolve, reject) => {
      const fail = (e: unknown) => reject(ioError(e, path, 'fsync of directory'));
      fs.open(path, 'r', (err, fd) => {
        if (err) return fail(err);
        fs.fsync(fd, (syncErr) => fs.close(fd, (closeErr) => (syncErr || closeErr ? fail(syncErr ?? closeErr) : resolve())));
      });
    });
  },
  utimes(path, mtimeMs) {
    try {
      fs.utimesSync(path, mtimeMs / 1000, mtimeMs / 1000);
    } catch (e) {
      throw ioError(e, path, 'utimes');
    }
  },
  flock(fd, mode) {
    try {
      fsExt().flockSync(fd, mode);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK') throw e; // the caller reports a held lock
      throw ioError(e, pathOf(fd), 'flock');
    }
  },
  recordLock(fd, mode) {
    return new Promise((resolve, reject) => {
      fsExt().fcntl(fd, 'setlk', LOCK_TYPES[mode], (err) => {
        if (!err) return resolve();
        if (err.code === 'EAGAIN' || err.code === 'EACCES') return reject(err); // the caller reports a held lock
        reject(ioError(err, pathOf(fd), 'fcntl'));
      });
    });
  },
  mkdtemp(prefix) {
    try {
      return fs.mkdtempSync(prefix);
    } catch (e) {
      throw ioError(e, prefix, 'mkdtemp');
    }
  },
  rmdir(path) {
    try {
      fs.rmdirSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw ioError(e, path, 'rmdir');
    }
  },
};

/** Removes a directory tree of files and directories (a scratch directory), through `io`. */
export function removeTree(io: FileIO, dir: string): void {
  const st = io.stat(dir);
  if (!st) return;
  if (!st.isDirectory) return io.unlink(dir);
  for (const name of io.readdir(dir)) removeTree(io, `${dir}/${name}`);
  if (io.rmdir) io.rmdir(dir);
  else realIO.rmdir(dir);
}

let current: FileIO = nativeIO;

/**
 * The default layer everything uses unless given another: it forwards each call to the installed
 * layer, nativeIO in production. Tests install a fault-injecting layer to run commands in-process
 * (installIO/withIO); nothing in src installs one.
 */
export const realIO: Required<FileIO> = {
  open: (p, flags) => current.open(p, flags),
  close: (fd) => current.close(fd),
  read: (fd, buf, offset, length, position) => current.read(fd, buf, offset, length, position),
  write: (fd, buf, offset, length, position) => current.write(fd, buf, offset, length, position),
  truncate: (fd, length) => current.truncate(fd, length),
  fstat: (fd) => current.fstat(fd),
  datasync: (fd) => current.datasync(fd),
  datasyncAsync: (fd) => current.datasyncAsync(fd),
  rename: (from, to) => current.rename(from, to),
  unlink: (p) => current.unlink(p),
  mkdirp: (p) => current.mkdirp(p),
  readdir: (p) => current.readdir(p),
  stat: (p) => current.stat(p),
  link: (from, to) => current.link(from, to),
  syncDir: (p) => current.syncDir(p),
  syncDirAsync: (p) => current.syncDirAsync(p),
  utimes: (p, mtimeMs) => current.utimes(p, mtimeMs),
  flock: (fd, mode) => (current.flock ? current.flock(fd, mode) : nativeIO.flock(fd, mode)),
  recordLock: (fd, mode) => (current.recordLock ? current.recordLock(fd, mode) : nativeIO.recordLock(fd, mode)),
  mkdtemp: (prefix) => (current.mkdtemp ? current.mkdtemp(prefix) : nativeIO.mkdtemp(prefix)),
  rmdir: (p) => (current.rmdir ? current.rmdir(p) : nativeIO.rmdir(p)),
  readAsync: (fd, buf, offset, length, position) => (current.readAsync ? current.readAsync(fd, buf, offset, length, position) : nativeIO.readAsync(fd, buf, offset, length, position)),
};

/** Makes `io` the default layer until the returned function is called (tests only). */
export function installIO(io: FileIO): () => void {
  // One test layer at a time: overlapping installs (a timed-out test still running) would leave a
  // stale layer installed when they are undone out of order.
  assert(current === nativeIO, 'installIO: another file-I/O layer is installed');
  current = io;
  return () => {
    assert(current === io, 'installIO: the layer to remove is not the installed one');
    current = nativeIO;
  };
}

/** Runs `fn` (sync or async) with `io` as the default layer (tests only). */
export async function withIO<T>(io: FileIO, fn: () => T | Promise<T>): Promise<T> {
  const restore = installIO(io);
  try {
    return await fn();
  } finally {
    restore();
  }
}

/**
 * unlink(2) through libuv's thread pool when `io` is the production layer (nativeIO, or realIO
 * with no test layer installed), so that the caller's thread goes on while the file system frees
 * the blocks (a 64 MiB segment takes 70–100 ms on ext4 with `discard`); any other layer's own
 * unlink is called at once, synchronously, so test layers see every call in order. A missing file
 * is not an error.
 */
export function unlinkAsync(io: FileIO, path: string): Promise<void> {
  if (io === nativeIO || (io === realIO && current === nativeIO)) {
    return fs.promises.unlink(path).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw ioError(e, path, 'unlink');
    });
  }
  try {
    io.unlink(path);
    return Promise.resolve();
  } catch (e) {
    return Promise.reject(e);
  }
}
