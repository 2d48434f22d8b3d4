/**
 * Fixed-size-entry index files (Kafka's AbstractIndex): preallocated to `maxIndexBytes` rounded
 * down to a whole entry, entries written in place, trimmed to the valid entries on roll and close.
 * Entries are read with positional reads (binary search), so memory stays constant whatever the
 * index size.
 */
import type { FileIO } from '../io.js';
import { LogtoolError, assert } from '../errors.js';

export interface IndexOpenOptions {
  io: FileIO;
  path: string;
  baseOffset: number;
  /** segment.index.bytes: the preallocated size of a writable index. */
  maxIndexBytes: number;
  writable: boolean;
}

export abstract class AbstractIndex {
  readonly path: string;
  readonly baseOffset: number;
  protected readonly io: FileIO;
  protected fd: number | undefined;
  protected readonly writable: boolean;
  /** Number of valid entries. */
  entries = 0;
  /** Entries that fit in the file's current length. */
  maxEntries = 0;
  private fileLength = 0;
  protected readonly scratch: Buffer;

  abstract readonly entrySize: number;

  protected constructor(opts: IndexOpenOptions, entrySize: number) {
    this.io = opts.io;
    this.path = opts.path;
    this.baseOffset = opts.baseOffset;
    this.writable = opts.writable;
    this.scratch = Buffer.alloc(entrySize);
  }

  /**
   * Opens or creates the file. A new writable index is preallocated (sparse) to the max size. An
   * existing one keeps its length; its valid entries end at the first all-zero entry (the zero
   * padding of a preallocated index that was never trimmed), found by binary search.
   */
  protected init(maxIndexBytes: number, entrySize: number): void {
    const exists = this.io.stat(this.path);
    if (!exists && !this.writable) {
      this.fd = undefined;
      return;
    }
    this.fd = this.io.open(this.path, this.writable ? (exists ? 'r+' : 'w+') : 'r');
    this.fileLength = this.io.fstat(this.fd).size;
    if (!exists || this.fileLength === 0) {
      this.entries = 0;
      // Only a newly created file is preallocated (Kafka's AbstractIndex). An existing empty
      // file is the trimmed index of a sealed segment and must stay empty; the active segment
      // is re-extended explicitly (LogSegment.resizeIndexes / recover).
      if (this.writable && !exists) this.resize(maxIndexBytes);
      return;
    }
    this.maxEntries = Math.floor(this.fileLength / entrySize);
    this.entries = this.countValidEntries();
  }

  get exists(): boolean {
    return this.fd !== undefined;
  }

  get sizeInBytes(): number {
    return this.entries * this.entrySize;
  }

  get isFull(): boolean {
    return this.entries >= this.maxEntries;
  }

  /** True when entry i is all zeros (padding). Entry 0 may legitimately be zero only if it is the sole state of an empty preallocated index. */
  private isPadding(i: number): boolean {
    this.readEntry(i);
    for (let k = 0; k < this.entrySize; k++) if (this.scratch[k] !== 0) return false;
    return true;
  }

  private countValidEntries(): number {
    // Padding is a suffix of zero entries; valid entries never are all zero, because the first
    // batch of a segment never gets an index entry (so relative offset 0 at position 0 is padding).
    let lo = 0;
    let hi = this.maxEntries;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.isPadding(mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  protected readEntry(i: number): Buffer {
    if (this.fd === undefined) throw new LogtoolError('io', 'index is not open', { file: this.path });
    const n = this.io.read(this.fd, this.scratch, 0, this.entrySize, i * this.entrySize);
    if (n < this.entrySize) this.scratch.fill(0, n);
    return this.scratch;
  }

  /** Reads entries [first, first + count) into `into` (a bounded block read; bytes past the file are zero). */
  protected readEntries(first: number, count: number, into: Buffer): void {
    if (this.fd === undefined) throw new LogtoolError('io', 'index is not open', { file: this.path });
    const bytes = count * this.entrySize;
    assert(bytes <= into.length, `read of ${count} index entries into ${into.length} bytes`, { file: this.path });
    const n = this.io.read(this.fd, into, 0, bytes, first * this.entrySize);
    if (n < bytes) into.fill(0, Math.max(n, 0), bytes);
  }

  protected writeEntry(entry: Buffer): void {
    if (this.fd === undefined || !this.writable) throw new LogtoolError('io', 'index is not writable', { file: this.path });
    if (this.entries >= this.maxEntries) throw new LogtoolError('io', `index is full (${this.entries} entries)`, { file: this.path });
    this.io.write(this.fd, entry, 0, this.entrySize, this.entries * this.entrySize);
    this.entries++;
  }

  /** Sets the file length to a whole number of entries ≥ the valid entries (Kafka's resize). */
  resize(maxIndexBytes: number): void {
    if (this.fd === undefined || !this.writable) return;
    const rounded = Math.floor(maxIndexBytes / this.entrySize) * this.entrySize;
    const length = Math.max(rounded, this.entries * this.entrySize);
    if (length !== this.fileLength) {
      this.io.truncate(this.fd, length);
      this.fileLength = length;
    }
    this.maxEntries = Math.floor(length / this.entrySize);
  }

  /** Kafka's trimToValidSize: file length = entries × entrySize. */
  trimToValidSize(): void {
    if (this.fd === undefined || !this.writable) return;
    const length = this.entries * this.entrySize;
    if (length !== this.fileLength) {
      this.io.truncate(this.fd, length);
      this.fileLength = length;
    }
    this.maxEntries = this.entries;
  }

  /** Drops every entry from index n on (zeroing them, so the file stays self-describing). */
  truncateToEntries(n: number): void {
    if (n >= this.entries) return;
    if (this.fd !== undefined && this.writable) {
      const zeros = Buffer.alloc((this.entries - n) * this.entrySize);
      this.io.write(this.fd, zeros, 0, zeros.length, n * this.entrySize);
    }
    this.entries = n;
  }

  reset(): void {
    this.truncateToEntries(0);
  }

  flush(): void {
    if (this.fd !== undefined && this.writable) this.io.datasync(this.fd);
  }

  /** flush without blocking the event loop (the append path). */
  async flushAsync(): Promise<void> {
    if (this.fd !== undefined && this.writable) await this.io.datasyncAsync(this.fd);
  }

  close(): void {
    if (this.fd !== undefined) {
      // close(2) releases the descriptor even when it reports an error: never close it twice
      // (a second close fails with EBADF, or closes a descriptor reused meanwhile).
      const fd = this.fd;
      this.fd = undefined;
      this.io.close(fd);
    }
  }

  /** Binary search: the largest i whose key ≤ target, or -1. */
  protected floorIndex(target: number, keyOf: (i: number) => number): number {
    let lo = 0;
    let hi = this.entries - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (keyOf(mid) <= target) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }
}
