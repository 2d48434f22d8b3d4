/**
 * `.index`: 8-byte entries (relativeOffset int32, position int32). Keyed on the last offset of the
 * indexed batch (Kafka ≥ 2.0); lookups are floor-then-scan, which also works for pre-2.0 files.
 */
import { LogtoolError, assert } from '../errors.js';
import { AbstractIndex, type IndexOpenOptions } from './abstract-index.js';

export interface OffsetPosition {
  offset: number;
  position: number;
}

export const OFFSET_INDEX_ENTRY_BYTES = 8;

export class OffsetIndex extends AbstractIndex {
  readonly entrySize = OFFSET_INDEX_ENTRY_BYTES;
  private lastOffsetCache: number;

  constructor(opts: IndexOpenOptions) {
    super(opts, OFFSET_INDEX_ENTRY_BYTES);
    this.init(opts.maxIndexBytes, OFFSET_INDEX_ENTRY_BYTES);
    this.lastOffsetCache = this.entries > 0 ? this.entry(this.entries - 1).offset : this.baseOffset;
  }

  entry(i: number): OffsetPosition {
    const b = this.readEntry(i);
    return { offset: this.baseOffset + b.readInt32BE(0), position: b.readInt32BE(4) };
  }

  /** Last indexed offset, or the base offset when empty. */
  get lastOffset(): number {
    return this.lastOffsetCache;
  }

  append(offset: number, position: number): void {
    const relative = offset - this.baseOffset;
    if (relative < 0 || relative > 0x7fffffff) {
      throw new LogtoolError('out-of-range', `offset ${offset} does not fit the index of segment ${this.baseOffset}`, { file: this.path });
    }
    if (this.entries > 0 && offset <= this.lastOffsetCache) {
      throw new LogtoolError('corrupt', `index entry offset ${offset} is not above the last entry ${this.lastOffsetCache}`, { file: this.path });
    }
    assert(Number.isSafeInteger(position) && position >= 0 && position <= 0x7fffffff, `index entry position ${position} is not a 32-bit file position`, { file: this.path });
    const b = this.scratch;
    b.writeInt32BE(relative, 0);
    b.writeInt32BE(position, 4);
    this.writeEntry(b);
    this.lastOffsetCache = offset;
  }

  /** Largest entry with offset ≤ target, else (baseOffset, 0). */
  lookup(target: number): OffsetPosition {
    const i = this.floorIndex(target, (k) => this.entry(k).offset);
    return i < 0 ? { offset: this.baseOffset, position: 0 } : this.entry(i);
  }

  /** Drops entries with offset ≥ target (Kafka's truncateTo). */
  truncateTo(target: number): void {
    const i = this.floorIndex(target - 1, (k) => this.entry(k).offset);
    this.truncateToEntries(i + 1);
    this.lastOffsetCache = this.entries > 0 ? this.entry(this.entries - 1).offset : this.baseOffset;
  }

  override reset(): void {
    super.reset();
    this.lastOffsetCache = this.baseOffset;
  }

  *all(): Generator<OffsetPosition> {
    for (let i = 0; i < this.entries; i++) yield this.entry(i);
  }
}
