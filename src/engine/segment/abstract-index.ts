/**
 * Fixed-size-entry index files (Kafka's AbstractIndex): preallocated to `maxIndexBytes` rounded
 * down to a whole entry, entries written in place, trimmed to the valid entries on roll and close.
 * Entries are read with positional reads (binary search), so memory stays constant whatever the
 * index size. The descriptor comes from the descriptor cache (fd-cache.ts) on each use: an index
 * nobody reads holds none. Kafka maps the file, so adding an entry costs no syscall; here a
 * writable index keeps its newest entries pending in memory (at most PENDING_MAX_BYTES) and writes
 * them with one write(2) when they fill that, and before anything reads, syncs, resizes, truncates
 * or closes the file (writePending): at a flush, a roll (trimToValidSize), a close. An index file
 * shorter than its `.log` is a sparse index like any other (lookups scan on from the floor entry),
 * and a crash that loses pending entries loses them from the active segment only, which recovery
 * rebuilds (docs/durability.md).
 */
import type { FileIO } from '../io.js';
import { LogtoolError, assert } from '../errors.js';
import { CachedFile, FileDescriptorCache } from './fd-cache.js';
import { writeZeros } from './zero-bytes.js';

/** Pending entries are written out when they fill this many bytes (the buffer grows to it from 256). */
export const PENDING_MAX_BYTES = 4096;

export interface IndexOpenOptions {
  io: FileIO;
  path: string;
  baseOffset: number;
  /** segment.index.bytes: the preallocated size of a writable index. */
  maxIndexBytes: number;
  writable: boolean;
  /** The descriptor cache (default: a private one, holding this file until close). */
  files?: FileDescriptorCache;
}

export abstract class AbstractIndex {
  readonly path: string;
  readonly baseOffset: number;
  protected readonly io: FileIO;
  private readonly files: FileDescriptorCache;
  /** undefined: a read-only index whose file does not exist, or a closed one. */
  protected file: CachedFile | undefined;
  protected readonly writable: boolean;
  /** Number of valid entries. */
  entries = 0;
  /** Entries that fit in the file's current length. */
  maxEntries = 0;
  private fileLength = 0;
  protected readonly scratch: Buffer;
  /** Entries [pendingFrom, entries) are in `pending`, not yet in the file. */
  private pendingFrom = 0;
  private pending: Buffer | undefined;

  abstract readonly entrySize: number;

  protected constructor(opts: IndexOpenOptions, entrySize: number) {
    this.io = opts.io;
    this.path = opts.path;
    this.baseOffset = opts.baseOffset;
    this.writable = opts.writable;
    this.files = opts.files ?? new FileDescriptorCache(opts.io, 1);
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
      this.file = undefined;
      return;
    }
    this.file = new CachedFile(this.files, this.path, this.writable ? 'r+' : 'r', exists ? undefined : 'w+');
    this.fileLength = this.file.fstat().size;
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
    this.pendingFrom = this.entries;
  }

  get exists(): boolean {
    return this.file !== undefined;
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
    if (this.file === undefined) throw new LogtoolError('io', 'index is not open', { file: this.path });
    this.writePending();
    const n = this.file.read(this.scratch, 0, this.entrySize, i * this.entrySize);
    if (n < this.entrySize) this.scratch.fill(0, n);
    return this.scratch;
  }

  /** Reads entries [first, first + count) into `into` (a bounded block read; bytes past the file are zero). */
  protected readEntries(first: number, count: number, into: Buffer): void {
    if (this.file === undefined) throw new LogtoolError('io', 'index is not open', { file: this.path });
    this.writePending();
    const bytes = count * this.entrySize;
    if (bytes > into.length) assert(false, `read of ${count} index entries into ${into.length} bytes`, { file: this.path });
    const n = this.file.read(into, 0, bytes, first * this.entrySize);
    if (n < bytes) into.fill(0, Math.max(n, 0), bytes);
  }

  /** Adds an entry: pending in memory, written out once PENDING_MAX_BYTES of them are pending. */
  protected writeEntry(entry: Buffer): void {
    const at = this.reserveEntry();
    const pending = this.pending!;
    for (let k = 0; k < this.entrySize; k++) pending[at + k] = entry[k]!; // no Buffer.copy (a view and a native copy) for 8 or 12 bytes
    this.entries++;
  }

  /**
   * Room for the next entry in the pending bytes: its position in pendingBytes(), where the caller
   * stores it and then counts it (entries++). OffsetIndex.append stores its two int32s there
   * directly (one entry per batch of 4 KiB or more, so one per append of such a batch): through a
   * scratch entry and a Buffer.copy of 8 bytes an OffsetIndex.append took 53 ns, now 24 (issue 15).
   */
  protected reserveEntry(): number {
    if (this.file === undefined || !this.writable) throw new LogtoolError('io', 'index is not writable', { file: this.path });
    if (this.entries >= this.maxEntries) throw new LogtoolError('io', `index is full (${this.entries} entries)`, { file: this.path });
    let at = (this.entries - this.pendingFrom) * this.entrySize;
    if (at + this.entrySize > PENDING_MAX_BYTES) {
      this.writePending();
      at = 0;
    }
    if (this.pending === undefined || at + this.entrySize > this.pending.length) {
      const bigger = Buffer.allocUnsafe(Math.min(PENDING_MAX_BYTES, Math.max(256, 2 * (this.pending?.length ?? 0))));
      this.pending?.copy(bigger, 0, 0, at);
      this.pending = bigger;
    }
    return at;
  }

  /** The pending entries' bytes, with room for the one reserveEntry() just placed. */
  protected pendingBytes(): Buffer {
    return this.pending!;
  }

  /** Entries added and not yet written to the file. */
  get pendingEntries(): number {
    return Math.max(0, this.entries - this.pendingFrom);
  }

  /**
   * Writes the pending entries with one write(2), after the `.log` bytes they point at (an entry is
   * added only once its batch was written). On failure the file holds none of them (the index
   * forgets them: a sparse index without them is still right) and the error is thrown.
   */
  writePending(): void {
    const count = this.entries - this.pendingFrom;
    if (count <= 0) return; // none (a read-only index bounded by LazyIndex.snapshotEntries: fewer)
    const bytes = count * this.entrySize;
    const position = this.pendingFrom * this.entrySize;
    try {
      const n = this.file!.write(this.pending!, 0, bytes, position);
      if (n !== bytes) assert(false, `short write of ${n} of ${bytes} index bytes`, { file: this.path, position });
    } catch (e) {
      this.entries = this.pendingFrom;
      throw e;
    }
    this.pendingFrom = this.entries;
  }

  /** Sets the file length to a whole number of entries ≥ the valid entries (Kafka's resize). */
  resize(maxIndexBytes: number): void {
    if (this.file === undefined || !this.writable) return;
    this.writePending();
    const rounded = Math.floor(maxIndexBytes / this.entrySize) * this.entrySize;
    const length = Math.max(rounded, this.entries * this.entrySize);
    if (length !== this.fileLength) {
      this.file.truncate(length);
      this.fileLength = length;
    }
    this.maxEntries = Math.floor(length / this.entrySize);
  }

  /** Kafka's trimToValidSize: file length = entries × entrySize. */
  trimToValidSize(): void {
    if (this.file === undefined || !this.writable) return;
    this.writePending();
    const length = this.entries * this.entrySize;
    if (length !== this.fileLength) {
      this.file.truncate(length);
      this.fileLength = length;
    }
    this.maxEntries = this.entries;
  }

  /** Drops every entry from index n on (zeroing them, so the file stays self-describing). */
  truncateToEntries(n: number): void {
    if (n >= this.entries) return;
    // Pending entries at or above n are dropped unwritten; the ones below are written first.
    if (n < this.pendingFrom) {
      this.entries = this.pendingFrom;
      if (this.file !== undefined && this.writable) {
        writeZeros(this.file, n * this.entrySize, this.entries * this.entrySize);
      }
      this.pendingFrom = n;
    }
    this.entries = n;
  }

  reset(): void {
    this.truncateToEntries(0);
  }

  flush(): void {
    this.writePending();
    if (this.file !== undefined && this.writable) this.file.datasync();
  }

  /** flush without blocking the event loop (the append path). */
  async flushAsync(): Promise<void> {
    this.writePending();
    if (this.file !== undefined && this.writable) await this.file.datasyncAsync();
  }

  /**
   * Writes the pending entries and closes the file; `discardPending` (a crash-like close) drops
   * them instead, as a crash would.
   */
  close(discardPending = false): void {
    if (discardPending) this.entries = Math.min(this.entries, this.pendingFrom);
    if (this.file === undefined) return;
    try {
      this.writePending();
    } finally {
      // close(2) releases the descriptor even when it reports an error: never close it twice
      // (a second close fails with EBADF, or closes a descriptor reused meanwhile).
      const file = this.file;
      this.file = undefined;
      file.close();
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
