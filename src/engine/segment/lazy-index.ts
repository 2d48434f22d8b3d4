/**
 * A segment's `.index` or `.timeindex`, opened on first use (Kafka's LazyIndex): a segment nobody
 * looks up holds no descriptor and has read nothing of its index. Besides Kafka's close and rename,
 * a read-only index can be released (closed, reopened by the next use) and bounded to the entries
 * counted when it was first opened (the active segment of a live writer, see `snapshotEntries`).
 */
import type { OffsetIndex } from './offset-index.js';
import type { TimeIndex } from './time-index.js';

export class LazyIndex<T extends OffsetIndex | TimeIndex> {
  private index: T | undefined;
  private filePath: string;
  /** Entries counted by snapshotEntries: later entries are never read. */
  private entryLimit: number | undefined;
  private readonly load: (path: string) => T;

  constructor(path: string, load: (path: string) => T) {
    this.filePath = path;
    this.load = load;
  }

  get path(): string {
    return this.filePath;
  }

  /** The index, opened now if it is not open. */
  get(): T {
    if (this.index === undefined) {
      const index = this.load(this.filePath);
      if (this.entryLimit !== undefined && index.entries > this.entryLimit) index.entries = this.entryLimit;
      this.index = index;
    }
    return this.index;
  }

  /**
   * Counts the entries now and never reads past them, however many a writer appends later (it
   * appends a batch to the `.log` before the entries that point at it).
   */
  snapshotEntries(): void {
    this.entryLimit = this.get().entries;
  }

  /** Closes the file if open; the next get() opens it again. */
  release(): void {
    this.index?.close();
    this.index = undefined;
  }

  /**
   * Closes the file if open (Kafka's LazyIndex.close): the index object stays, unusable. Pending
   * entries are written first, or dropped with `discardPending` (a crash-like close).
   */
  close(discardPending = false): void {
    this.index?.close(discardPending);
  }

  /** After the file was renamed `<path><suffix>`: later uses open the renamed file. */
  renamed(suffix: string): void {
    this.release();
    this.filePath += suffix;
  }
}
