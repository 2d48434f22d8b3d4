/**
 * The 16 bytes the offset map (Kafka's SkimpyOffsetMap, kafka-format.md §15.2) keeps per key.
 *
 * Kafka stores the MD5 of every key. Two different keys then share a slot only if their MD5s
 * collide, and the probe positions are read off the digest's bytes. Here a key of at most
 * SHORT_KEY_MAX_BYTES bytes is stored exactly instead: its length + 1 and its bytes in 16 bytes
 * (zero-padded), passed through a bijective mix so that the probe windows are as scattered as an
 * MD5's. Distinct short keys therefore never share a digest; a short key's digest equals a long
 * key's MD5 only with MD5's own odds (2^-128); so the map keeps the same latest offset per key as
 * Kafka's, and compaction writes the same bytes, at about a fifth of the MD5's cost per key (63
 * against 325 ns for 9-byte keys here; a key is hashed once per record while the map is built).
 *
 * The mix is a Feistel-style network over the four 32-bit words: each step XORs a word with
 * murmur3's fmix32 of another, which is invertible whatever the function, so the whole is a
 * bijection. fmix32(0) = 0, so an all-zero input would give an all-zero digest (an empty slot);
 * the length + 1 in the first byte keeps every input nonzero.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { shortMd5, SHORT_MD5_MAX_BYTES } from './md5.js';

/** Bytes per digest. */
export const KEY_DIGEST_BYTES = 16;
/** Keys up to this length are stored exactly (one length byte + the key in 16 bytes). */
export const SHORT_KEY_MAX_BYTES = KEY_DIGEST_BYTES - 1;

const nativeHash = (crypto as unknown as { hash?: (alg: string, data: Uint8Array, enc: 'buffer') => Buffer }).hash;
const LITTLE_ENDIAN = os.endianness() === 'LE';

/** MD5 of buf[start, end) into the 16 bytes behind out (four little-endian words). */
export function md5Into(buf: Buffer, start: number, end: number, out: Int32Array): void {
  if (LITTLE_ENDIAN && end - start <= SHORT_MD5_MAX_BYTES) return shortMd5(buf, start, end, out);
  const view = buf.subarray(start, end);
  const digest = nativeHash ? nativeHash('md5', view, 'buffer') : crypto.createHash('md5').update(view).digest();
  digest.copy(Buffer.from(out.buffer, out.byteOffset, KEY_DIGEST_BYTES));
}

/** murmur3's 32-bit finalizer: a bijection of int32 with fmix32(0) = 0. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

const packed = new Uint8Array(KEY_DIGEST_BYTES);
const packedWords = new Int32Array(packed.buffer);

/** The length + 1 and bytes of a short key, as four words (before the mix). */
function pack(buf: Uint8Array, start: number, end: number): void {
  packedWords[0] = packedWords[1] = packedWords[2] = packedWords[3] = 0;
  packed[0] = end - start + 1;
  for (let i = start, j = 1; i < end; i++, j++) packed[j] = buf[i]!;
}

/** The mix of four words into out: two rounds of w(i+1) ^= fmix32(w(i)), each word in turn. */
function mixInto(w0: number, w1: number, w2: number, w3: number, out: Int32Array): void {
  for (let round = 0; round < 2; round++) {
    w1 ^= fmix32(w0);
    w2 ^= fmix32(w1);
    w3 ^= fmix32(w2);
    w0 ^= fmix32(w3);
  }
  out[0] = w0;
  out[1] = w1;
  out[2] = w2;
  out[3] = w3;
}

/**
 * The offset map's 16 bytes for the key buf[start, end) into out: the mixed exact key for keys
 * of up to SHORT_KEY_MAX_BYTES bytes, the MD5 for longer ones.
 */
export function keyDigestInto(buf: Buffer, start: number, end: number, out: Int32Array): void {
  if (end - start > SHORT_KEY_MAX_BYTES) return md5Into(buf, start, end, out);
  pack(buf, start, end);
  mixInto(packedWords[0]!, packedWords[1]!, packedWords[2]!, packedWords[3]!, out);
}
