/**
 * `.index`: 8-byte entries (relativeOffset int32, position int32). Keyed on the last offset of the
 * indexed batch (Kafka ≥ 2.0); lookups are floor-then-scan, which also works for pre-2.0 files.
 */
import { LogtoolError, assert } from '../errors.js';
import { putInt32 } from '../format/batch-header.js';
import { AbstractIndex, type IndexOpenOptions } from './abstract-index.js';

export interface OffsetPosition {
  offset: number;
  position: number;
}

/**
 * What a lookup needs of the index (lookupSpan): the floor entry, where the batches that may hold
 * the offset end, and — a guess, to be checked against the batch's header — the file range
 * [position, end) starting with the batch holding it.
 */
export interface OffsetSpan {
  floor: OffsetPosition;
  endPosition: number | undefined;
  batch: { position: number; end: number } | undefined;
}

export const OFFSET_INDEX_ENTRY_BYTES = 8;
/** Entries per block of lookup's cache (4 KiB), and the blocks kept per index (256 KiB at most). */
const LOOKUP_BLOCK_ENTRIES = 512;
const MAX_CACHED_BLOCKS = 64;

export class OffsetIndex extends AbstractIndex {
  readonly entrySize = OFFSET_INDEX_ENTRY_BYTES;
  private lastOffsetCache: number;
  /** lookup's cache: blocks of entries read, with how many of each were valid when read. */
  private readonly blocks = new Map<number, { buf: Buffer; valid: number }>();
  /** How often lookupSpan's `batch` guess held the offset, and how often not. */
  private batchGuessHits = 0;
  private batchGuessMisses = 0;

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
    if (!(Number.isSafeInteger(position) && position >= 0 && position <= 0x7fffffff)) assert(false, `index entry position ${position} is not a 32-bit file position`, { file: this.path });
    const at = this.reserveEntry();
    const b = this.pendingBytes();
    putInt32(b, at, relative); // both checked above to be within [0, 2^31)
    putInt32(b, at + 4, position);
    this.entries++;
    this.lastOffsetCache = offset;
  }

  /**
   * Largest entry with offset ≤ target, else (baseOffset, 0). The binary search reads the index in
   * blocks of LOOKUP_BLOCK_ENTRIES kept in a bounded cache (Kafka maps the index into memory; the
   * searches' upper levels stay cached here), so a lookup costs at most a read or two, not one per
   * probe. Entries below `entries` never change but by truncation, which drops the cache.
   */
  lookup(target: number): OffsetPosition {
    const i = this.floorIndex(target, (k) => this.cachedOffset(k));
    return i < 0 ? { offset: this.baseOffset, position: 0 } : this.cachedEntry(i);
  }

  /**
   * lookup(target), and where the batches that may hold `target` end: an entry's offset is the last
   * of the batch at its position, so `target` lies before the batch after the next entry's, whose
   * position this is (undefined when there is none: the segment's end). A lookup reads up to it.
   */
  lookupSpan(target: number): OffsetSpan {
    const i = this.floorIndex(target, (k) => this.cachedOffset(k));
    const floor = i < 0 ? { offset: this.baseOffset, position: 0 } : this.cachedEntry(i);
    const endPosition = i + 2 < this.entries ? this.cachedEntry(i + 2).position : undefined;
    // Kafka ≥ 2.0 keys an entry on the last offset of the batch at its position: the batch holding
    // `target` is the floor entry's when it ends there, else the next entry's unless smaller
    // batches lie between (then this guess misses). Guessed only while it hits at least as often
    // as it misses: an index keyed on first offsets (Kafka < 2.0) or small batches stop it soon.
    let batch: OffsetSpan['batch'];
    if (i >= 0 && this.batchGuessMisses <= this.batchGuessHits) {
      const at = floor.offset === target ? i : i + 1;
      if (at + 1 < this.entries) batch = { position: at === i ? floor.position : this.cachedEntry(at).position, end: this.cachedEntry(at + 1).position };
    }
    return { floor, endPosition, batch };
  }

  /** Whether lookupSpan's `batch` was the batch holding the offset (it stops guessing after more misses than hits). */
  batchGuessed(hit: boolean): void {
    if (hit) this.batchGuessHits++;
    else this.batchGuessMisses++;
  }

  /** The cached block holding entry k (read, or read again for entries added since it was read). */
  private cachedBlock(k: number): Buffer {
    const blockIndex = Math.floor(k / LOOKUP_BLOCK_ENTRIES);
    const first = blockIndex * LOOKUP_BLOCK_ENTRIES;
    let block = this.blocks.get(blockIndex);
    if (!block || k - first >= block.valid) {
      // A block read while the index had fewer entries is read again for the later ones.
      if (!block && this.blocks.size >= MAX_CACHED_BLOCKS) this.blocks.clear();
      const valid = Math.min(LOOKUP_BLOCK_ENTRIES, this.entries - first);
      const buf = block?.buf ?? Buffer.allocUnsafe(LOOKUP_BLOCK_ENTRIES * OFFSET_INDEX_ENTRY_BYTES);
      this.readEntries(first, valid, buf);
      block = { buf, valid };
      this.blocks.set(blockIndex, block);
    }
    return block.buf;
  }

  /** Entry k's offset alone: the binary search's probes allocate no entry object. */
  private cachedOffset(k: number): number {
    return this.baseOffset + this.cachedBlock(k).readInt32BE((k % LOOKUP_BLOCK_ENTRIES) * OFFSET_INDEX_ENTRY_BYTES);
  }

  private cachedEntry(k: number): OffsetPosition {
    const buf = this.cachedBlock(k);
    const at = (k % LOOKUP_BLOCK_ENTRIES) * OFFSET_INDEX_ENTRY_BYTES;
    return { offset: this.baseOffset + buf.readInt32BE(at), position: buf.readInt32BE(at + 4) };
  }

  override truncateToEntries(n: number): void {
    this.blocks.clear();
    super.truncateToEntries(n);
  }

  override close(discardPending = false): void {
    this.blocks.clear();
    super.close(discardPending);
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
