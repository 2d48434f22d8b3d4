/**
 * `.timeindex`: 12-byte entries (timestamp int64, relativeOffset int32). An entry is appended only
 * when the timestamp strictly increases; the last slot is reserved for the entry written on roll
 * and close, so the index reports full one entry early (Kafka's TimeIndex).
 */
import { LogtoolError, assert } from '../errors.js';
import { readInt64, readTimestamp, writeInt64, type Timestamp } from '../format/record-batch.js';
import { AbstractIndex, type IndexOpenOptions } from './abstract-index.js';

export interface TimestampOffset {
  timestamp: number;
  offset: number;
}

export const TIME_INDEX_ENTRY_BYTES = 12;

export class TimeIndex extends AbstractIndex {
  readonly entrySize = TIME_INDEX_ENTRY_BYTES;
  private last: TimestampOffset;

  constructor(opts: IndexOpenOptions) {
    super(opts, TIME_INDEX_ENTRY_BYTES);
    this.init(opts.maxIndexBytes, TIME_INDEX_ENTRY_BYTES);
    this.last = this.entries > 0 ? this.entry(this.entries - 1) : { timestamp: -1, offset: this.baseOffset };
  }

  entry(i: number): TimestampOffset {
    const b = this.readEntry(i);
    return { timestamp: readInt64(b, 0), offset: this.baseOffset + b.readInt32BE(8) };
  }

  /** Entry i's timestamp exactly (entry() gives a double, rounded beyond ±2^53). */
  exactTimestamp(i: number): Timestamp {
    return readTimestamp(this.readEntry(i), 0);
  }

  /** Last entry, or (−1, baseOffset) when empty. */
  get lastEntry(): TimestampOffset {
    return this.last;
  }

  override get isFull(): boolean {
    return this.entries >= this.maxEntries - 1;
  }

  /**
   * Kafka's maybeAppend: writes only if timestamp > last timestamp. skipFullCheck is used for the
   * final entry on roll and close, which may take the reserved slot.
   */
  maybeAppend(timestamp: number, offset: number, skipFullCheck = false): void {
    if (!skipFullCheck && this.isFull) {
      throw new LogtoolError('io', `time index is full (${this.entries} entries)`, { file: this.path });
    }
    if (this.entries > 0 && offset < this.last.offset) {
      throw new LogtoolError('corrupt', `time index entry offset ${offset} is below the last entry ${this.last.offset}`, { file: this.path });
    }
    if (this.entries > 0 && timestamp < this.last.timestamp) {
      throw new LogtoolError('corrupt', `time index entry timestamp ${timestamp} is below the last entry ${this.last.timestamp}`, { file: this.path });
    }
    if (timestamp <= this.last.timestamp) return;
    if (this.entries >= this.maxEntries) return; // no slot at all (only when trimmed and re-opened read-only)
    if (!(offset >= this.baseOffset && offset - this.baseOffset <= 0x7fffffff)) assert(false, `time index entry offset ${offset} is outside segment ${this.baseOffset}`, { file: this.path });
    const b = this.scratch;
    writeInt64(b, 0, timestamp);
    b.writeInt32BE(offset - this.baseOffset, 8);
    this.writeEntry(b);
    this.last = { timestamp, offset };
  }

  /** Largest entry with timestamp ≤ target, else (−1, baseOffset). */
  lookup(targetTimestamp: number): TimestampOffset {
    const i = this.floorIndex(targetTimestamp, (k) => this.entry(k).timestamp);
    return i < 0 ? { timestamp: -1, offset: this.baseOffset } : this.entry(i);
  }

  /** Drops entries with offset ≥ target. */
  truncateTo(target: number): void {
    const i = this.floorIndex(target - 1, (k) => this.entry(k).offset);
    this.truncateToEntries(i + 1);
    this.last = this.entries > 0 ? this.entry(this.entries - 1) : { timestamp: -1, offset: this.baseOffset };
  }

  override reset(): void {
    super.reset();
    this.last = { timestamp: -1, offset: this.baseOffset };
  }

  *all(): Generator<TimestampOffset> {
    for (let i = 0; i < this.entries; i++) yield this.entry(i);
  }
}
