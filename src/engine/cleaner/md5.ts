/**
 * MD5 (RFC 1321) of short keys, as the offset map hashes them (Kafka's SkimpyOffsetMap digests
 * each record key with MessageDigest "MD5", kafka-format.md §15.2). The 64 steps are unrolled over
 * local variables (V8 inlines no helper calls in a function this long, so the round functions are
 * written out too) and the padded key is assembled in a reused word array: hashing a key allocates
 * nothing and costs about a quarter of a looped implementation. The digest is the same
 * 16 bytes node:crypto produces (test/engine/cleaner/offset-map.test.ts proves it for every length).
 */

/** Keys up to this length fit one or two padded 64-byte blocks and are hashed here. */
export const SHORT_MD5_MAX_BYTES = 119;

/** Two blocks of message words; the byte view writes a key into them (little-endian words). */
const WORDS = new Int32Array(32);
const WORD_BYTES = new Uint8Array(WORDS.buffer);
/** The running state a, b, c, d. */
const STATE = new Int32Array(4);

/**
 * One 64-byte block, the words WORDS[o, o + 16), into STATE: RFC 1321's 64 steps written out
 * (step i: n = a + round function + word + K[i]; a = b + (n <<< s)), with the registers renamed
 * instead of rotated; rounds 1–2 and 3–4 are two functions (each under the size guide), passing
 * the registers through STATE.
 */
function block(o: number): void {
  const a = STATE[0]!;
  const b = STATE[1]!;
  const c = STATE[2]!;
  const d = STATE[3]!;
  rounds12(o);
  rounds34(o);
  STATE[0] = (STATE[0]! + a) | 0;
  STATE[1] = (STATE[1]! + b) | 0;
  STATE[2] = (STATE[2]! + c) | 0;
  STATE[3] = (STATE[3]! + d) | 0;
}

/** Steps 0–31 of a block: the registers in STATE, the words from WORDS[o]. */
function rounds12(o: number): void {
  const w = WORDS;
  const w0 = w[o]!, w1 = w[o + 1]!, w2 = w[o + 2]!, w3 = w[o + 3]!, w4 = w[o + 4]!, w5 = w[o + 5]!, w6 = w[o + 6]!, w7 = w[o + 7]!;
  const w8 = w[o + 8]!, w9 = w[o + 9]!, w10 = w[o + 10]!, w11 = w[o + 11]!, w12 = w[o + 12]!, w13 = w[o + 13]!, w14 = w[o + 14]!, w15 = w[o + 15]!;
  let a = STATE[0]!;
  let b = STATE[1]!;
  let c = STATE[2]!;
  let d = STATE[3]!;
  let n: number;
  // round 1: F(b, c, d) = (b & c) | (~b & d)
  n = (a + ((b & c) | (~b & d)) + w0 - 680876936) | 0; a = (((n << 7) | (n >>> 25)) + b) | 0;
  n = (d + ((a & b) | (~a & c)) + w1 - 389564586) | 0; d = (((n << 12) | (n >>> 20)) + a) | 0;
  n = (c + ((d & a) | (~d & b)) + w2 + 606105819) | 0; c = (((n << 17) | (n >>> 15)) + d) | 0;
  n = (b + ((c & d) | (~c & a)) + w3 - 1044525330) | 0; b = (((n << 22) | (n >>> 10)) + c) | 0;
  n = (a + ((b & c) | (~b & d)) + w4 - 176418897) | 0; a = (((n << 7) | (n >>> 25)) + b) | 0;
  n = (d + ((a & b) | (~a & c)) + w5 + 1200080426) | 0; d = (((n << 12) | (n >>> 20)) + a) | 0;
  n = (c + ((d & a) | (~d & b)) + w6 - 1473231341) | 0; c = (((n << 17) | (n >>> 15)) + d) | 0;
  n = (b + ((c & d) | (~c & a)) + w7 - 45705983) | 0; b = (((n << 22) | (n >>> 10)) + c) | 0;
  n = (a + ((b & c) | (~b & d)) + w8 + 1770035416) | 0; a = (((n << 7) | (n >>> 25)) + b) | 0;
  n = (d + ((a & b) | (~a & c)) + w9 - 1958414417) | 0; d = (((n << 12) | (n >>> 20)) + a) | 0;
  n = (c + ((d & a) | (~d & b)) + w10 - 42063) | 0; c = (((n << 17) | (n >>> 15)) + d) | 0;
  n = (b + ((c & d) | (~c & a)) + w11 - 1990404162) | 0; b = (((n << 22) | (n >>> 10)) + c) | 0;
  n = (a + ((b & c) | (~b & d)) + w12 + 1804603682) | 0; a = (((n << 7) | (n >>> 25)) + b) | 0;
  n = (d + ((a & b) | (~a & c)) + w13 - 40341101) | 0; d = (((n << 12) | (n >>> 20)) + a) | 0;
  n = (c + ((d & a) | (~d & b)) + w14 - 1502002290) | 0; c = (((n << 17) | (n >>> 15)) + d) | 0;
  n = (b + ((c & d) | (~c & a)) + w15 + 1236535329) | 0; b = (((n << 22) | (n >>> 10)) + c) | 0;
  // round 2: G(b, c, d) = (b & d) | (c & ~d)
  n = (a + ((b & d) | (c & ~d)) + w1 - 165796510) | 0; a = (((n << 5) | (n >>> 27)) + b) | 0;
  n = (d + ((a & c) | (b & ~c)) + w6 - 1069501632) | 0; d = (((n << 9) | (n >>> 23)) + a) | 0;
  n = (c + ((d & b) | (a & ~b)) + w11 + 643717713) | 0; c = (((n << 14) | (n >>> 18)) + d) | 0;
  n = (b + ((c & a) | (d & ~a)) + w0 - 373897302) | 0; b = (((n << 20) | (n >>> 12)) + c) | 0;
  n = (a + ((b & d) | (c & ~d)) + w5 - 701558691) | 0; a = (((n << 5) | (n >>> 27)) + b) | 0;
  n = (d + ((a & c) | (b & ~c)) + w10 + 38016083) | 0; d = (((n << 9) | (n >>> 23)) + a) | 0;
  n = (c + ((d & b) | (a & ~b)) + w15 - 660478335) | 0; c = (((n << 14) | (n >>> 18)) + d) | 0;
  n = (b + ((c & a) | (d & ~a)) + w4 - 405537848) | 0; b = (((n << 20) | (n >>> 12)) + c) | 0;
  n = (a + ((b & d) | (c & ~d)) + w9 + 568446438) | 0; a = (((n << 5) | (n >>> 27)) + b) | 0;
  n = (d + ((a & c) | (b & ~c)) + w14 - 1019803690) | 0; d = (((n << 9) | (n >>> 23)) + a) | 0;
  n = (c + ((d & b) | (a & ~b)) + w3 - 187363961) | 0; c = (((n << 14) | (n >>> 18)) + d) | 0;
  n = (b + ((c & a) | (d & ~a)) + w8 + 1163531501) | 0; b = (((n << 20) | (n >>> 12)) + c) | 0;
  n = (a + ((b & d) | (c & ~d)) + w13 - 1444681467) | 0; a = (((n << 5) | (n >>> 27)) + b) | 0;
  n = (d + ((a & c) | (b & ~c)) + w2 - 51403784) | 0; d = (((n << 9) | (n >>> 23)) + a) | 0;
  n = (c + ((d & b) | (a & ~b)) + w7 + 1735328473) | 0; c = (((n << 14) | (n >>> 18)) + d) | 0;
  n = (b + ((c & a) | (d & ~a)) + w12 - 1926607734) | 0; b = (((n << 20) | (n >>> 12)) + c) | 0;
  STATE[0] = a;
  STATE[1] = b;
  STATE[2] = c;
  STATE[3] = d;
}

/** Steps 32–63 of a block. */
function rounds34(o: number): void {
  const w = WORDS;
  const w0 = w[o]!, w1 = w[o + 1]!, w2 = w[o + 2]!, w3 = w[o + 3]!, w4 = w[o + 4]!, w5 = w[o + 5]!, w6 = w[o + 6]!, w7 = w[o + 7]!;
  const w8 = w[o + 8]!, w9 = w[o + 9]!, w10 = w[o + 10]!, w11 = w[o + 11]!, w12 = w[o + 12]!, w13 = w[o + 13]!, w14 = w[o + 14]!, w15 = w[o + 15]!;
  let a = STATE[0]!;
  let b = STATE[1]!;
  let c = STATE[2]!;
  let d = STATE[3]!;
  let n: number;
  // round 3: H(b, c, d) = b ^ c ^ d
  n = (a + (b ^ c ^ d) + w5 - 378558) | 0; a = (((n << 4) | (n >>> 28)) + b) | 0;
  n = (d + (a ^ b ^ c) + w8 - 2022574463) | 0; d = (((n << 11) | (n >>> 21)) + a) | 0;
  n = (c + (d ^ a ^ b) + w11 + 1839030562) | 0; c = (((n << 16) | (n >>> 16)) + d) | 0;
  n = (b + (c ^ d ^ a) + w14 - 35309556) | 0; b = (((n << 23) | (n >>> 9)) + c) | 0;
  n = (a + (b ^ c ^ d) + w1 - 1530992060) | 0; a = (((n << 4) | (n >>> 28)) + b) | 0;
  n = (d + (a ^ b ^ c) + w4 + 1272893353) | 0; d = (((n << 11) | (n >>> 21)) + a) | 0;
  n = (c + (d ^ a ^ b) + w7 - 155497632) | 0; c = (((n << 16) | (n >>> 16)) + d) | 0;
  n = (b + (c ^ d ^ a) + w10 - 1094730640) | 0; b = (((n << 23) | (n >>> 9)) + c) | 0;
  n = (a + (b ^ c ^ d) + w13 + 681279174) | 0; a = (((n << 4) | (n >>> 28)) + b) | 0;
  n = (d + (a ^ b ^ c) + w0 - 358537222) | 0; d = (((n << 11) | (n >>> 21)) + a) | 0;
  n = (c + (d ^ a ^ b) + w3 - 722521979) | 0; c = (((n << 16) | (n >>> 16)) + d) | 0;
  n = (b + (c ^ d ^ a) + w6 + 76029189) | 0; b = (((n << 23) | (n >>> 9)) + c) | 0;
  n = (a + (b ^ c ^ d) + w9 - 640364487) | 0; a = (((n << 4) | (n >>> 28)) + b) | 0;
  n = (d + (a ^ b ^ c) + w12 - 421815835) | 0; d = (((n << 11) | (n >>> 21)) + a) | 0;
  n = (c + (d ^ a ^ b) + w15 + 530742520) | 0; c = (((n << 16) | (n >>> 16)) + d) | 0;
  n = (b + (c ^ d ^ a) + w2 - 995338651) | 0; b = (((n << 23) | (n >>> 9)) + c) | 0;
  // round 4: I(b, c, d) = c ^ (b | ~d)
  n = (a + (c ^ (b | ~d)) + w0 - 198630844) | 0; a = (((n << 6) | (n >>> 26)) + b) | 0;
  n = (d + (b ^ (a | ~c)) + w7 + 1126891415) | 0; d = (((n << 10) | (n >>> 22)) + a) | 0;
  n = (c + (a ^ (d | ~b)) + w14 - 1416354905) | 0; c = (((n << 15) | (n >>> 17)) + d) | 0;
  n = (b + (d ^ (c | ~a)) + w5 - 57434055) | 0; b = (((n << 21) | (n >>> 11)) + c) | 0;
  n = (a + (c ^ (b | ~d)) + w12 + 1700485571) | 0; a = (((n << 6) | (n >>> 26)) + b) | 0;
  n = (d + (b ^ (a | ~c)) + w3 - 1894986606) | 0; d = (((n << 10) | (n >>> 22)) + a) | 0;
  n = (c + (a ^ (d | ~b)) + w10 - 1051523) | 0; c = (((n << 15) | (n >>> 17)) + d) | 0;
  n = (b + (d ^ (c | ~a)) + w1 - 2054922799) | 0; b = (((n << 21) | (n >>> 11)) + c) | 0;
  n = (a + (c ^ (b | ~d)) + w8 + 1873313359) | 0; a = (((n << 6) | (n >>> 26)) + b) | 0;
  n = (d + (b ^ (a | ~c)) + w15 - 30611744) | 0; d = (((n << 10) | (n >>> 22)) + a) | 0;
  n = (c + (a ^ (d | ~b)) + w6 - 1560198380) | 0; c = (((n << 15) | (n >>> 17)) + d) | 0;
  n = (b + (d ^ (c | ~a)) + w13 + 1309151649) | 0; b = (((n << 21) | (n >>> 11)) + c) | 0;
  n = (a + (c ^ (b | ~d)) + w4 - 145523070) | 0; a = (((n << 6) | (n >>> 26)) + b) | 0;
  n = (d + (b ^ (a | ~c)) + w11 - 1120210379) | 0; d = (((n << 10) | (n >>> 22)) + a) | 0;
  n = (c + (a ^ (d | ~b)) + w2 + 718787259) | 0; c = (((n << 15) | (n >>> 17)) + d) | 0;
  n = (b + (d ^ (c | ~a)) + w9 - 343485551) | 0; b = (((n << 21) | (n >>> 11)) + c) | 0;
  STATE[0] = a;
  STATE[1] = b;
  STATE[2] = c;
  STATE[3] = d;
}

/**
 * MD5 of buf[start, end) (at most SHORT_MD5_MAX_BYTES) into out as the digest's 16 bytes. The
 * key is laid into the words byte by byte, so this holds on little-endian machines only (md5Into
 * in offset-map.ts uses node:crypto elsewhere).
 */
export function shortMd5(buf: Uint8Array, start: number, end: number, out: Int32Array): void {
  const len = end - start;
  const total = len + 9 <= 64 ? 64 : 128;
  for (let i = total >> 2; i-- > 0; ) WORDS[i] = 0;
  const bytes = WORD_BYTES;
  for (let i = 0; i < len; i++) bytes[i] = buf[start + i]!;
  bytes[len] = 0x80;
  WORDS[(total >> 2) - 2] = len << 3; // the bit length, below 2^32 for a short key
  STATE[0] = 0x67452301;
  STATE[1] = 0xefcdab89 | 0;
  STATE[2] = 0x98badcfe | 0;
  STATE[3] = 0x10325476;
  block(0);
  if (total === 128) block(16);
  out[0] = STATE[0]!;
  out[1] = STATE[1]!;
  out[2] = STATE[2]!;
  out[3] = STATE[3]!;
}
