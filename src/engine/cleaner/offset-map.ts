/**
 * Kafka's SkimpyOffsetMap (kafka-format.md §15.2): a fixed-size open-addressing table from the
 * MD5 of a record key (16 bytes) to the key's latest offset (8 bytes), 24 bytes per slot, filled
 * to at most `slots × loadFactor` (0.9). Memory is exactly `slots × 24` bytes, allocated once; when
 * the map is full the caller ends the cleaning round there (several passes over the log).
 *
 * Probing follows Kafka's `positionOf`: attempt i reads the 4 hash bytes at min(i, 12) as a
 * big-endian int, adds max(0, i − 12), and takes |probe| mod slots — so the first 13 probes are
 * independent windows of the hash (close to random probing) and only then linear.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { InvalidArgumentError } from '../errors.js';

export const OFFSET_MAP_HASH_BYTES = 16;
export const OFFSET_MAP_ENTRY_BYTES = OFFSET_MAP_HASH_BYTES + 8;
export const DEFAULT_LOAD_FACTOR = 0.9;

const nativeHash = (crypto as unknown as { hash?: (alg: string, data: Uint8Array, enc: 'buffer') => Buffer }).hash;
const LITTLE_ENDIAN = os.endianness() === 'LE';
/** Keys up to this length are hashed by the JavaScript MD5 below (no allocation, ~4× faster). */
const JS_MD5_MAX_KEY_BYTES = 119;

// RFC 1321 MD5 for short inputs (one or two 64-byte blocks), writing the digest as four
// little-endian words — the same 16 bytes node:crypto produces (test/engine/cleaner proves it).
const S = Int8Array.from([7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21]);
const K = new Int32Array(64).map((_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 4294967296) | 0);
const G = new Int8Array(64).map((_, i) => (i < 16 ? i : i < 32 ? (5 * i + 1) & 15 : i < 48 ? (3 * i + 5) & 15 : (7 * i) & 15));
const W = new Int32Array(16);
const TAIL = Buffer.alloc(128);
const ST = new Int32Array(4);

function md5Block(w: Int32Array): void {
  let a = ST[0]!;
  let b = ST[1]!;
  let c = ST[2]!;
  let d = ST[3]!;
  for (let i = 0; i < 64; i++) {
    const f = i < 16 ? (b & c) | (~b & d) : i < 32 ? (d & b) | (~d & c) : i < 48 ? b ^ c ^ d : c ^ (b | ~d);
    const t = d;
    d = c;
    c = b;
    const x = (a + f + K[i]! + w[G[i]!]!) | 0;
    const s = S[i]!;
    b = (b + ((x << s) | (x >>> (32 - s)))) | 0;
    a = t;
  }
  ST[0] = (ST[0]! + a) | 0;
  ST[1] = (ST[1]! + b) | 0;
  ST[2] = (ST[2]! + c) | 0;
  ST[3] = (ST[3]! + d) | 0;
}

function loadWords(src: Uint8Array, p: number): void {
  for (let j = 0; j < 16; j++, p += 4) W[j] = src[p]! | (src[p + 1]! << 8) | (src[p + 2]! << 16) | (src[p + 3]! << 24);
}

function jsMd5(buf: Buffer, start: number, end: number, out: Int32Array): void {
  ST[0] = 0x67452301;
  ST[1] = 0xefcdab89 | 0;
  ST[2] = 0x98badcfe | 0;
  ST[3] = 0x10325476;
  const len = end - start;
  let p = start;
  for (; end - p >= 64; p += 64) {
    loadWords(buf, p);
    md5Block(W);
  }
  const rem = end - p;
  TAIL.fill(0);
  buf.copy(TAIL, 0, p, end);
  TAIL[rem] = 0x80;
  const total = rem + 9 <= 64 ? 64 : 128;
  TAIL.writeUInt32LE((len * 8) >>> 0, total - 8);
  TAIL.writeUInt32LE(Math.floor(len / 0x20000000), total - 4);
  for (let o = 0; o < total; o += 64) {
    loadWords(TAIL, o);
    md5Block(W);
  }
  out[0] = ST[0]!;
  out[1] = ST[1]!;
  out[2] = ST[2]!;
  out[3] = ST[3]!;
}

/** MD5 of buf[start, end) into the 16 bytes behind out (four little-endian words). */
export function md5Into(buf: Buffer, start: number, end: number, out: Int32Array): void {
  if (LITTLE_ENDIAN && end - start <= JS_MD5_MAX_KEY_BYTES) return jsMd5(buf, start, end, out);
  const view = buf.subarray(start, end);
  const digest = nativeHash ? nativeHash('md5', view, 'buffer') : crypto.createHash('md5').update(view).digest();
  digest.copy(Buffer.from(out.buffer, out.byteOffset, OFFSET_MAP_HASH_BYTES));
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

  constructor(memoryBytes: number, loadFactor = DEFAULT_LOAD_FACTOR) {
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
  }

  /** Bytes held by the table. */
  get memoryBytes(): number {
    return this.bytes.length;
  }

  get isFull(): boolean {
    return this.size >= this.maxEntries;
  }

  /** Fraction of slots in use. */
  get utilization(): number {
    return this.size / this.slots;
  }

  clear(): void {
    this.bytes.fill(0);
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
    const probe = (h.readInt32BE(at) + Math.max(0, attempt - OFFSET_MAP_HASH_BYTES + 4)) | 0;
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
    md5Into(buf, start, end, this.hashInts);
    this.lookups++;
    let attempt = 0;
    let slot = this.slotOf(attempt);
    while (!this.isEmpty(slot)) {
      if (this.matches(slot)) {
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
    this.size++;
    this.updateLatestOffset(offset);
    return true;
  }

  /** Latest offset recorded for the key buf[start, end), or −1 if the key is not in the map. */
  get(buf: Buffer, start: number, end: number): number {
    md5Into(buf, start, end, this.hashInts);
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
}
