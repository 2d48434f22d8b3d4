/**
 * Zig-zag varints as Kafka's v2 records use them: every length, delta and count is signed.
 * Values are JS numbers: varlongs beyond ±2^53 lose precision but never throw, which is enough
 * for timestamp and offset deltas; malformed encodings (too many bytes) are CorruptDataError.
 */
import { CorruptDataError } from '../errors.js';

/** Cursor-based reader result: the value and the position after it. Reused to avoid allocation. */
export interface VarintCursor {
  pos: number;
}

export function readVarint(buf: Buffer, cur: VarintCursor, end: number): number {
  const pos = cur.pos;
  if (pos < end) {
    // One or two bytes (the deltas, counts and lengths of records up to 8 KiB): no loop, and small
    // enough for the JIT to inline into the record decoder.
    const b = buf[pos]!;
    if (b < 0x80) {
      cur.pos = pos + 1;
      return (b >>> 1) ^ -(b & 1);
    }
    const b1 = pos + 1 < end ? buf[pos + 1]! : 0x80;
    if (b1 < 0x80) {
      const raw = (b & 0x7f) | (b1 << 7);
      cur.pos = pos + 2;
      return (raw >>> 1) ^ -(raw & 1);
    }
  }
  return readLongerVarint(buf, cur, end);
}

function readLongerVarint(buf: Buffer, cur: VarintCursor, end: number): number {
  let pos = cur.pos;
  let raw = 0;
  let shift = 0;
  for (let i = 0; ; i++) {
    if (pos >= end) throw new CorruptDataError('varint runs past the end of the data', pos);
    const b = buf[pos++]!;
    if (i === 4) {
      if (b & 0x80) throw new CorruptDataError('varint longer than 5 bytes', pos - 1);
      raw |= b << 28;
      break;
    }
    raw |= (b & 0x7f) << shift;
    if (!(b & 0x80)) break;
    shift += 7;
  }
  cur.pos = pos;
  return (raw >>> 1) ^ -(raw & 1);
}

export function readVarlong(buf: Buffer, cur: VarintCursor, end: number): number {
  const pos = cur.pos;
  // One byte (the timestamp delta of records appended within 64 ms of their batch's first): inlined.
  if (pos < end && buf[pos]! < 0x80) {
    const b = buf[pos]!;
    cur.pos = pos + 1;
    return (b >>> 1) ^ -(b & 1);
  }
  return readLongerVarlong(buf, cur, end);
}

function readLongerVarlong(buf: Buffer, cur: VarintCursor, end: number): number {
  let pos = cur.pos;
  // Zig-zag puts the sign in bit 0 of the first byte; accumulate the remaining bits (the
  // magnitude) separately so that the sign survives values beyond 2^53, where doubles lose
  // the low bit.
  if (pos >= end) throw new CorruptDataError('varlong runs past the end of the data', pos);
  const b0 = buf[pos++]!;
  let half = (b0 & 0x7f) >>> 1;
  if (b0 & 0x80) {
    let mul = 64;
    for (let i = 1; ; i++) {
      if (pos >= end) throw new CorruptDataError('varlong runs past the end of the data', pos);
      if (i === 10) throw new CorruptDataError('varlong longer than 10 bytes', pos);
      const b = buf[pos++]!;
      half += (b & 0x7f) * mul;
      if (!(b & 0x80)) break;
      mul *= 128;
    }
  }
  cur.pos = pos;
  return b0 & 1 ? -half - 1 : half;
}

/** Bytes needed to encode n (int32) as a zig-zag varint. */
export function sizeOfVarint(n: number): number {
  let v = ((n << 1) ^ (n >> 31)) >>> 0;
  let size = 1;
  while (v >= 0x80) {
    v >>>= 7;
    size++;
  }
  return size;
}

function zigzagLong(n: number): number {
  return n >= 0 ? n * 2 : -n * 2 - 1;
}

/** Zig-zag of n split as (magnitude, sign bit) so that no intermediate exceeds |n|: zz = 2·h + sign. */
function zigzagHalf(n: number): number {
  return n >= 0 ? n : -n - 1;
}

export function sizeOfVarlong(n: number): number {
  // zz has 1 + bits(h) bits; the first byte holds the sign bit and 6 bits of h, later bytes 7.
  let h = Math.floor(zigzagHalf(n) / 64);
  let size = 1;
  while (h > 0) {
    h = Math.floor(h / 128);
    size++;
  }
  return size;
}

/** Writes n as a zig-zag varint at pos; returns the position after it. */
export function writeVarint(buf: Buffer, pos: number, n: number): number {
  let v = ((n << 1) ^ (n >> 31)) >>> 0;
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

export function writeVarlong(buf: Buffer, pos: number, n: number): number {
  const v = zigzagLong(n);
  if (v < 0x80000000) {
    let u = v >>> 0;
    while (u >= 0x80) {
      buf[pos++] = (u & 0x7f) | 0x80;
      u >>>= 7;
    }
    buf[pos++] = u;
    return pos;
  }
  // Large values: 2·|n| may not be exact in a double, so emit the sign bit and the magnitude
  // separately (first byte: 6 bits of the magnitude above the sign bit).
  let h = zigzagHalf(n);
  const first = ((h % 64) * 2) | (n < 0 ? 1 : 0);
  h = Math.floor(h / 64);
  buf[pos++] = first | 0x80; // v ≥ 2^31, so more bytes always follow
  while (h >= 128) {
    buf[pos++] = (h % 128) | 0x80;
    h = Math.floor(h / 128);
  }
  buf[pos++] = h;
  return pos;
}

// Exact 64-bit varlongs for timestamps beyond ±2^53 (record-batch.ts's exact path; never the hot path).

const zigzagBig = (n: bigint): bigint => BigInt.asUintN(64, (BigInt.asIntN(64, n) << 1n) ^ (BigInt.asIntN(64, n) >> 63n));

/** Bytes needed to encode the int64 n (taken modulo 2^64) as a zig-zag varlong. */
export function sizeOfVarlongBig(n: bigint): number {
  let v = zigzagBig(n);
  let size = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    size++;
  }
  return size;
}

/** Writes the int64 n (taken modulo 2^64) as a zig-zag varlong at pos; returns the position after it. */
export function writeVarlongBig(buf: Buffer, pos: number, n: bigint): number {
  let v = zigzagBig(n);
  while (v >= 0x80n) {
    buf[pos++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  buf[pos++] = Number(v);
  return pos;
}

/** Reads the zig-zag varlong at pos exactly (the caller already read it once with readVarlong, so it is well formed). */
export function readVarlongBig(buf: Buffer, pos: number, end: number): bigint {
  let raw = 0n;
  let shift = 0n;
  for (let i = 0; i < 10 && pos < end; i++) {
    const b = buf[pos++]!;
    raw |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
    shift += 7n;
  }
  return BigInt.asIntN(64, (raw >> 1n) ^ -(raw & 1n));
}
