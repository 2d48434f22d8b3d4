/**
 * One least-recently-used cache of open file descriptors for segment files (issue 12). Kafka keeps
 * a FileChannel open per segment file (LogSegment, AbstractIndex) and asks operators for a high
 * `ulimit -n`; logtool bounds them instead: a partition of 10,000 segments, or a LogManager of
 * 1,000 partitions, opens and appends under the usual limit of 1,024.
 *
 * - Entries are keyed by (path, mode); at most `maxOpenFiles` are open. Opening one more closes the
 *   least recently used unpinned entry first (through the I/O layer, so fault injection sees it).
 *   When every entry is pinned the limit is exceeded rather than failing: pins are few (an
 *   fdatasync in flight).
 * - Reads and writes are synchronous, so a descriptor is only ever used inside one call and cannot
 *   be evicted under it; a pin holds one across an await (asynchronous fdatasync). The active
 *   segment is not pinned: a LogManager of 1,000 partitions has 3,000 active files, more than the
 *   limit; being appended to keeps them the most recently used anyway.
 * - A file that is renamed, deleted or replaced must be invalidated first (`CachedFile.close` or
 *   `renamed`): the next use opens the path again, never a descriptor of the old file. A pinned entry
 *   that is invalidated leaves the cache at once and is closed by its last unpin.
 * - A read-only handle (a view of a partition another process may be writing) remembers the inode it
 *   first opened; reopening the path after an eviction and finding another file (a compaction swap or
 *   a deletion since the view was taken) is an error naming the file, never a mix of old and new.
 *
 * One cache per LogManager, shared by its logs; a Log opened alone has its own; a segment or index
 * opened alone (commands that read one file) gets a private one that holds its files until closed.
 */
import type { FileIO, FileStat } from '../io.js';
import { LogtoolError, assert } from '../errors.js';

/** Default `maxOpenFiles`: half the usual `ulimit -n` of 1,024, leaving room for everything else. */
export const DEFAULT_MAX_OPEN_FILES = 512;

/** How a cached descriptor was opened: 'r' read-only, 'r+' read-write (never creating or truncating). */
export type CachedMode = 'r' | 'r+';

interface Entry {
  readonly key: string;
  readonly fd: number;
  pins: number;
}

export class FileDescriptorCache {
  readonly io: FileIO;
  readonly maxOpenFiles: number;
  /** Insertion order is recency: the first entry is the least recently used. */
  private readonly entries = new Map<string, Entry>();
  /** Pinned entries that left the map (invalidated), by descriptor: closed by their last unpin. */
  private readonly doomedEntries = new Map<number, Entry>();
  private doomedOpen = 0;
  /** The entry last made most recent (the map's last), whose lookup need not reorder the map. */
  private newest: Entry | undefined;

  constructor(io: FileIO, maxOpenFiles: number = DEFAULT_MAX_OPEN_FILES) {
    if (!Number.isSafeInteger(maxOpenFiles) || maxOpenFiles <= 0) {
      throw new LogtoolError('invalid-argument', `maxOpenFiles must be a positive integer, not ${maxOpenFiles}`);
    }
    this.io = io;
    this.maxOpenFiles = maxOpenFiles;
  }

  /** Descriptors this cache holds open now. */
  get openFiles(): number {
    return this.entries.size + this.doomedOpen;
  }

  /**
   * The map key of (path, mode). A CachedFile keeps its own and passes it in: building the string
   * for every call (and hashing it anew) cost about a microsecond per write and per fdatasync.
   */
  static key(path: string, mode: CachedMode): string {
    return `${mode}\0${path}`;
  }

  /** The entry of (path, mode), opened now (by `open`) when not cached, and made most recent. */
  entry(path: string, mode: CachedMode, open: () => number = () => this.io.open(path, mode), key = FileDescriptorCache.key(path, mode)): { fd: number; opened: boolean } {
    const hit = this.entries.get(key);
    if (hit) {
      if (hit !== this.newest) {
        this.entries.delete(key);
        this.entries.set(key, hit);
        this.newest = hit;
      }
      return { fd: hit.fd, opened: false };
    }
    this.evictFor(1);
    const fd = open();
    assert(Number.isSafeInteger(fd) && fd >= 0, `open of ${path} returned descriptor ${fd}`, { file: path });
    this.newest = { key, fd, pins: 0 };
    this.entries.set(key, this.newest);
    return { fd, opened: true };
  }

  /** Removes an entry from the map (not closing it). */
  private remove(e: Entry): void {
    this.entries.delete(e.key);
    if (e === this.newest) this.newest = undefined;
  }

  /** Closes least recently used unpinned entries until `more` fit under maxOpenFiles. */
  private evictFor(more: number): void {
    if (this.openFiles + more <= this.maxOpenFiles) return;
    for (const e of this.entries.values()) {
      if (this.openFiles + more <= this.maxOpenFiles) return;
      if (e.pins > 0) continue;
      this.remove(e);
      this.io.close(e.fd); // close(2) releases the descriptor even when it fails: never retried
    }
  }

  /** Pins (path, mode), opening it if needed: it is not evicted until unpin. */
  pin(path: string, mode: CachedMode, open?: () => number, key = FileDescriptorCache.key(path, mode)): number {
    const { fd } = this.entry(path, mode, open, key);
    this.entries.get(key)!.pins++;
    return fd;
  }

  /** Drops one pin taken on the descriptor `fd` of (path, mode). */
  unpin(path: string, mode: CachedMode, fd: number, key = FileDescriptorCache.key(path, mode)): void {
    const e = this.entries.get(key);
    if (e && e.fd === fd) {
      assert(e.pins > 0, `unpin of ${path}, which is not pinned`, { file: path });
      e.pins--;
      if (e.pins === 0) this.evictFor(0);
      return;
    }
    const doomed = this.doomedEntries.get(fd);
    assert(doomed !== undefined && doomed.pins > 0, `unpin of ${path}, which is not pinned`, { file: path });
    if (--doomed.pins > 0) return;
    this.doomedEntries.delete(fd);
    this.doomedOpen--;
    this.io.close(fd);
  }

  /**
   * Before (path, mode) is renamed, deleted or replaced: its descriptor is closed (or, when pinned,
   * closed by the last unpin) and the next use opens the path again.
   */
  invalidate(path: string, mode: CachedMode): void {
    const key = FileDescriptorCache.key(path, mode);
    const e = this.entries.get(key);
    if (!e) return;
    this.remove(e);
    if (e.pins > 0) {
      this.doomedEntries.set(e.fd, e);
      this.doomedOpen++;
      return;
    }
    this.io.close(e.fd);
  }

  /** Closes every unpinned descriptor (a Log or LogManager closing); the first close failure is thrown after all. */
  closeAll(): void {
    let first: unknown;
    for (const e of [...this.entries.values()]) {
      if (e.pins > 0) continue;
      this.remove(e);
      try {
        this.io.close(e.fd);
      } catch (err) {
        first ??= err;
      }
    }
    if (first !== undefined) throw first;
  }
}

/**
 * One file of a segment, read and written through the cache: each call takes the descriptor from
 * the cache (reopening the path when it was evicted) and uses it synchronously.
 */
export class CachedFile {
  private currentPath: string;
  /** FileDescriptorCache.key of currentPath and mode. */
  private key: string;
  private closed = false;
  /** Read-only handles: the inode first opened (see the file comment). */
  private ino: number | undefined;

  constructor(
    readonly cache: FileDescriptorCache,
    path: string,
    readonly mode: CachedMode,
    /** Opens the file for its first use with these flags instead ('w+', 'wx+': creating it). */
    createFlags?: string,
  ) {
    this.currentPath = path;
    this.key = FileDescriptorCache.key(path, mode);
    if (createFlags !== undefined) {
      cache.invalidate(path, mode); // a descriptor of a file the creation replaces must not be used
      cache.entry(path, mode, () => cache.io.open(path, createFlags));
    }
  }

  get path(): string {
    return this.currentPath;
  }

  private get io(): FileIO {
    return this.cache.io;
  }

  /** The descriptor for one synchronous call. */
  private fd(): number {
    if (this.closed) throw new LogtoolError('closed', 'file is closed', { file: this.currentPath });
    const { fd, opened } = this.cache.entry(this.currentPath, this.mode, undefined, this.key);
    if (opened && this.mode === 'r') this.checkIdentity(this.io.fstat(fd));
    return fd;
  }

  private checkIdentity(st: FileStat): void {
    if (st.ino === undefined) return;
    if (this.ino === undefined) this.ino = st.ino;
    else if (this.ino !== st.ino) {
      this.cache.invalidate(this.currentPath, this.mode);
      throw new LogtoolError('io', 'the file was replaced since this read began (a writer compacted or deleted the segment); read again', { file: this.currentPath });
    }
  }

  read(buf: Buffer, offset: number, length: number, position: number): number {
    try {
      return this.io.read(this.fd(), buf, offset, length, position);
    } catch (e) {
      // A file deleted since the view was taken: as replaced.
      if (e instanceof LogtoolError && e.kind === 'not-found' && this.mode === 'r') {
        throw new LogtoolError('io', 'the file was deleted since this read began (a writer compacted or deleted the segment); read again', { file: this.currentPath });
      }
      throw e;
    }
  }

  write(buf: Buffer, offset: number, length: number, position: number): number {
    return this.io.write(this.fd(), buf, offset, length, position);
  }

  truncate(length: number): void {
    this.io.truncate(this.fd(), length);
  }

  fstat(): FileStat {
    const st = this.io.fstat(this.fd());
    if (this.mode === 'r') this.checkIdentity(st);
    return st;
  }

  datasync(): void {
    this.io.datasync(this.fd());
  }

  /**
   * fdatasync without blocking the event loop; the descriptor stays pinned until it completes. One
   * reaction on the I/O layer's promise, no async frames: a sync append waits on this chain.
   */
  datasyncAsync(): Promise<void> {
    const { currentPath: path, key } = this;
    let fd: number;
    let syncing: Promise<void>;
    try {
      if (this.closed) throw new LogtoolError('closed', 'file is closed', { file: path });
      fd = this.cache.pin(path, this.mode, undefined, key);
    } catch (e) {
      return Promise.reject(e);
    }
    const unpin = (): void => this.cache.unpin(path, this.mode, fd, key);
    try {
      syncing = this.io.datasyncAsync(fd);
    } catch (e) {
      unpin();
      return Promise.reject(e);
    }
    return syncing.then(unpin, (e: unknown) => {
      unpin();
      throw e;
    });
  }

  /** The file is about to be renamed (or was) to `to`: its descriptor leaves the cache, later calls open `to`. */
  renamed(to: string): void {
    this.cache.invalidate(this.currentPath, this.mode);
    this.currentPath = to;
    this.key = FileDescriptorCache.key(to, this.mode);
  }

  /** Closes the descriptor (or, while an fdatasync has it pinned, lets that close it) and refuses later calls. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cache.invalidate(this.currentPath, this.mode);
  }
}
