/**
 * xxHash32 (Yann Collet's XXH32), the checksum of LZ4 frame headers and blocks. Kept in JS: it
 * runs over 2–15 header bytes per batch, and over blocks only when a writer asked for block
 * checksums, so a native call would cost more than it saves.
 */

const PRIME1 = 0x9e3779b1;
const PRIME2 = 0x85ebca77;
const PRIME3 = 0xc2b2ae3d;
const PRIME4 = 0x27d4eb2f;
const PRIME5 = 0x165667b1;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function readU32LE(buf: Uint8Array, p: number): number {
  return buf[p]! | (buf[p + 1]! << 8) | (buf[p + 2]! << 16) | (buf[p + 3]! << 24);
}

function round(acc: number, lane: number): number {
  return Math.imul(rotl((acc + Math.imul(lane, PRIME2)) | 0, 13), PRIME1);
}

/** XXH32 of buf[start, end) with the given seed, as an unsigned 32-bit number. */
export function xxh32(buf: Uint8Array, start = 0, end = buf.length, seed = 0): number {
  let p = start;
  const length = end - start;
  let h: number;
  if (length >= 16) {
    let v1 = (seed + PRIME1 + PRIME2) | 0;
    let v2 = (seed + PRIME2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - PRIME1) | 0;
    const limit = end - 16;
    while (p <= limit) {
      v1 = round(v1, readU32LE(buf, p));
      v2 = round(v2, readU32LE(buf, p + 4));
      v3 = round(v3, readU32LE(buf, p + 8));
      v4 = round(v4, readU32LE(buf, p + 12));
      p += 16;
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = (seed + PRIME5) | 0;
  }
  // The length is mixed in modulo 2^32, as the reference implementation does.
  h = (h + length) | 0;
  while (p + 4 <= end) {
    h = Math.imul(rotl((h + Math.imul(readU32LE(buf, p), PRIME3)) | 0, 17), PRIME4);
    p += 4;
  }
  while (p < end) {
    h = Math.imul(rotl((h + Math.imul(buf[p]!, PRIME5)) | 0, 11), PRIME1);
    p++;
  }
  h ^= h >>> 15;
  h = Math.imul(h, PRIME2);
  h ^= h >>> 13;
  h = Math.imul(h, PRIME3);
  h ^= h >>> 16;
  return h >>> 0;
}
