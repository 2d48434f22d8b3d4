/**
 * Kafka's SkimpyOffsetMap (kafka-format.md §15.2): a fixed-size open-addressing table from a
 * record key's 16-byte digest (the MD5, or for a short key the key itself, mixed: key-digest.ts)
 * to the key's latest offset (8 bytes), 24 bytes per slot, filled
 * to at most `slots × loadFactor` (0.9). Memory is exactly `slots × 24` bytes, allocated once; when
 * the map is full the caller ends the cleaning round there (several passes over the log).
 *
 * Probing follows Kafka's `positionOf`: attempt i reads the 4 hash bytes at min(i, 12) as a
 * big-endian int, adds max(0, i − 12), and takes |probe| mod slots — so the first 13 probes are
 * independent windows of the hash (close to random probing) and only then linear.
 */
import { InvalidArgumentError } from '../errors.js';
import { KEY_DIGEST_BYTES, keyDigestInto } from './key-digest.js';

export const OFFSET_MAP_HASH_BYTES = KEY_DIGEST_BYTES;
export const OFFSET_MAP_ENTRY_BYTES = OFFSET_MAP_HASH_BYTES + 8;
export const DEFAULT_LOAD_FACTOR = 0.9;

/**
 * Which offsets of a round's dirty range the map holds as their key's latest: two bits per offset
 * (mapped; still the latest), set as the map is built, so the recopy can tell a dirty record's
 * fate without hashing its key a second time. Offsets outside [base, base + capacity) are not
 * marked (the recopy looks their keys up).
 */
class LatestMarks {
  readonly capacity: number;
  private base = 0;
  private readonly mapped: Int32Array;
  private readonly latest: Int32Array;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.mapped = new Int32Array(Math.ceil(capacity / 32));
    this.latest = new Int32Array(this.mapped.length);
  }

  get memoryBytes(): number {
    return this.mapped.byteLength + this.latest.byteLength;
  }

  reset(base: number): void {
    this.base = base;
    this.mapped.fill(0);
    this.latest.fill(0);
  }

  /** `offset` is now its key's latest, in place of `replaced` (−1 for a key new to the map). */
  mark(offset: number, replaced: number): void {
    const i = offset - this.base;
    if (i >= 0 && i < this.capacity) {
      this.mapped[i >>> 5]! |= 1 << (i & 31);
      this.latest[i >>> 5]! |= 1 << (i & 31);
    }
    const r = replaced - this.base;
    if (replaced >= 0 && r >= 0 && r < this.capacity) this.latest[r >>> 5]! &= ~(1 << (r & 31));
  }

  /** 1: mapped and still its key's latest; 0: mapped and replaced since; −1: not marked. */
  state(offset: number): number {
    const i = offset - this.base;
    if (i < 0 || i >= this.capacity || (this.mapped[i >>> 5]! & (1 << (i & 31))) === 0) return -1;
    return (this.latest[i >>> 5]! >>> (i & 31)) & 1;
  }

  /** Whether an offset in [from, to] is still its key's latest; undefined when not all are covered. */
  anyLatest(from: number, to: number): boolean | undefined {
    const a = from - this.base;
    const b = to - this.base;
    if (a < 0 || b >= this.capacity || b < a) return undefined;
    const wa = a >>> 5;
    const wb = b >>> 5;
    const lo = ~0 << (a & 31);
    const hi = ~0 >>> (31 - (b & 31));
    if (wa === wb) return (this.latest[wa]! & lo & hi) !== 0;
    if ((this.latest[wa]! & lo) !== 0 || (this.latest[wb]! & hi) !== 0) return true;
    for (let w = wa + 1; w < wb; w++) if (this.latest[w] !== 0) return true;
    return false;
  }
}

/** Most offsets a map can mark (bit indexes stay 31-bit). */
export const MAX_MARKED_OFFSETS = 0x7fffffff;

/** Bytes of the marks for `offsets` offsets (two bits each, in 32-bit words). */
export function markBytesFor(offsets: number): number {
  return 8 * Math.ceil(offsets / 32);
}

export class OffsetMap {
  /** Number of slots (memoryBytes / 24). */
  readonly slots: number;
  readonly loadFactor: number;
  /** Entries the map accepts before it reports full: floor(slots × loadFactor). */
  readonly maxEntries: number;
  /** Distinct keys stored. */
  size = 0;
  /** Highest offset the map covers (Kafka's latestOffset); −1 when nothing was mapped. */
  latestOffset = -1;
  lookups = 0;
  probes = 0;
  private readonly bytes: Buffer;
  /** Hash words (4 per slot, native order) and offsets (1 per slot) over the same memory. */
  private readonly words: Uint32Array;
  private readonly offsets: Float64Array;
  /** The current key's digest: as words (compare, store) and as bytes (probe positions). */
  private readonly hashInts = new Int32Array(4);
  private readonly hashWords = new Uint32Array(this.hashInts.buffer);
  private readonly hash = Buffer.from(this.hashInts.buffer);
  private readonly marks: LatestMarks | undefined;

  /**
   * `markOffsets` > 0 also keeps LatestMarks for that many offsets from the base given to clear()
   * (markBytesFor(markOffsets) more bytes): isLatest then answers for them without hashing.
   */
  constructor(memoryBytes: number, loadFactor = DEFAULT_LOAD_FACTOR, markOffsets = 0) {
    const slots = Math.floor(memoryBytes / OFFSET_MAP_ENTRY_BYTES);
    if (!Number.isSafeInteger(slots) || slots < 2 || slots > 0x7fffffff) {
      throw new InvalidArgumentError(['memoryBytes'], `the offset map needs between 48 bytes and ${0x7fffffff * OFFSET_MAP_ENTRY_BYTES} bytes, not ${memoryBytes}`);
    }
    this.slots = slots;
    this.loadFactor = loadFactor;
    // At least one slot always stays empty, so every probe sequence ends.
    this.maxEntries = Math.max(1, Math.min(slots - 1, Math.floor(slots * loadFactor)));
    // One zero-filled allocation; typed-array views share it (24-byte stride keeps offsets 8-aligned).
    const ab = new ArrayBuffer(slots * OFFSET_MAP_ENTRY_BYTES);
    this.bytes = Buffer.from(ab);
    this.words = new Uint32Array(ab);
    this.offsets = new Float64Array(ab);
    if (markOffsets > 0) this.marks = new LatestMarks(Math.min(markOffsets, MAX_MARKED_OFFSETS));
  }

  /** Bytes held by the table. */
  get memoryBytes(): number {
    return this.bytes.length;
  }

  /** Bytes held by the marks (0 without). */
  get markBytes(): number {
    return this.marks?.memoryBytes ?? 0;
  }

  get isFull(): boolean {
    return this.size >= this.maxEntries;
  }

  /** Fraction of slots in use. */
  get utilization(): number {
    return this.size / this.slots;
  }

  /** Empties the map; the marks, if any, cover offsets from `markBase` on. */
  clear(markBase = 0): void {
    this.bytes.fill(0);
    this.marks?.reset(markBase);
    this.size = 0;
    this.latestOffset = -1;
    this.lookups = 0;
    this.probes = 0;
  }

  updateLatestOffset(offset: number): void {
    if (offset > this.latestOffset) this.latestOffset = offset;
  }

  private slotOf(attempt: number): number {
    const h = this.hash;
    const at = Math.min(attempt, OFFSET_MAP_HASH_BYTES - 4);
    // The 4 hash bytes at `at` as a big-endian int (plain loads: Buffer.readInt32BE re-checks bounds).
    const window = (h[at]! << 24) | (h[at + 1]! << 16) | (h[at + 2]! << 8) | h[at + 3]!;
    const probe = (window + Math.max(0, attempt - OFFSET_MAP_HASH_BYTES + 4)) | 0;
    this.probes++;
    return Math.abs(probe) % this.slots;
  }

  private isEmpty(slot: number): boolean {
    const w = slot * 6;
    const ws = this.words;
    return ws[w] === 0 && ws[w + 1] === 0 && ws[w + 2] === 0 && ws[w + 3] === 0 && ws[w + 4] === 0 && ws[w + 5] === 0;
  }

  private matches(slot: number): boolean {
    const w = slot * 6;
    const ws = this.words;
    const hw = this.hashWords;
    return ws[w] === hw[0] && ws[w + 1] === hw[1] && ws[w + 2] === hw[2] && ws[w + 3] === hw[3];
  }

  /**
   * Records offset as the latest for the key buf[start, end). Returns false, changing nothing,
   * when the map is full (Kafka stops mapping there; even an existing key is not updated).
   */
  put(buf: Buffer, start: number, end: number, offset: number): boolean {
    if (this.size >= this.maxEntries) return false;
    keyDigestInto(buf, start, end, this.hashInts);
    this.lookups++;
    let attempt = 0;
    let slot = this.slotOf(attempt);
    while (!this.isEmpty(slot)) {
      if (this.matches(slot)) {
        this.marks?.mark(offset, this.offsets[slot * 3 + 2]!);
        this.offsets[slot * 3 + 2] = offset;
        this.updateLatestOffset(offset);
        return true;
      }
      slot = this.slotOf(++attempt);
    }
    const w = slot * 6;
    const hw = this.hashWords;
    this.words[w] = hw[0]!;
    this.words[w + 1] = hw[1]!;
    this.words[w + 2] = hw[2]!;
    this.words[w + 3] = hw[3]!;
    this.offsets[slot * 3 + 2] = offset;
    this.marks?.mark(offset, -1);
    this.size++;
    this.updateLatestOffset(offset);
    return true;
  }

  /** Latest offset recorded for the key buf[start, end), or −1 if the key is not in the map. */
  get(buf: Buffer, start: number, end: number): number {
    keyDigestInto(buf, start, end, this.hashInts);
    this.lookups++;
    let attempt = 0;
    let slot = this.slotOf(attempt);
    // The map is never completely full (load factor < 1), so an empty slot always ends the probe.
    while (!this.isEmpty(slot)) {
      if (this.matches(slot)) return this.offsets[slot * 3 + 2]!;
      slot = this.slotOf(++attempt);
    }
    return -1;
  }

  /**
   * Whether no later offset than `offset` is mapped for its key buf[start, end) — what the
   * recopy keeps (Kafka's `offset >= map.get(key)`, an absent key included). An offset marked
   * when it was mapped is answered from the marks, without hashing the key again.
   */
  isLatest(offset: number, buf: Buffer, start: number, end: number): boolean {
    const marked = this.marks ? this.marks.state(offset) : -1;
    if (marked >= 0) return marked === 1;
    return offset >= this.get(buf, start, end);
  }

  /**
   * Whether an offset in [from, to] is marked as its key's latest: false only when every offset
   * of the range lies in the marks and none is (undefined without marks or outside them).
   */
  anyLatest(from: number, to: number): boolean | undefined {
    return this.marks?.anyLatest(from, to);
  }
}
