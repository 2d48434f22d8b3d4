/**
 * Base64 and hex text as bytes, strictly: what Node.js's Buffer.from(text, enc) decodes, for the
 * texts it decodes whole (RFC 4648 §4/§5 alphabets, whole 4-character groups or a last group of 2
 * or 3 characters, padded or not; hex pairs); undefined for any other text, which Buffer.from would
 * silently drop or truncate. One implementation for `append`'s NDJSON byte parser and decodeStrict.
 */
const EQUALS = 0x3d;

/** Each byte's value in base64 (standard and URL-safe alphabets, as Node.js decodes both), −1 for others. */
const BASE64_VALUES = (() => {
  const t = new Int8Array(256).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < 64; i++) t[alphabet.charCodeAt(i)] = i;
  t[0x2d] = 62; // '-'
  t[0x5f] = 63;
  return t;
})();

/**
 * base64 in line[start, end) decoded as Buffer.from(text, 'base64') decodes it, when the text is
 * whole 4-character groups, or a last group of 2 or 3 characters padded or not; undefined otherwise.
 */
export function decodeBase64(line: Buffer, start: number, end: number): Buffer | undefined {
  let n = end - start;
  if (n > 0 && line[end - 1] === EQUALS) {
    if (n % 4 !== 0) return undefined;
    n -= line[end - 2] === EQUALS ? 2 : 1;
  }
  const tail = n % 4;
  if (tail === 1) return undefined;
  const out = Buffer.allocUnsafe(((n - tail) / 4) * 3 + (tail === 0 ? 0 : tail - 1));
  const t = BASE64_VALUES;
  let p = start;
  let o = 0;
  for (const groupsEnd = start + n - tail; p < groupsEnd; p += 4) {
    const a = t[line[p]!]!;
    const b = t[line[p + 1]!]!;
    const c = t[line[p + 2]!]!;
    const d = t[line[p + 3]!]!;
    if ((a | b | c | d) < 0) return undefined;
    out[o++] = (a << 2) | (b >> 4);
    out[o++] = ((b & 15) << 4) | (c >> 2);
    out[o++] = ((c & 3) << 6) | d;
  }
  if (tail > 0) {
    const a = t[line[p]!]!;
    const b = t[line[p + 1]!]!;
    const c = tail === 3 ? t[line[p + 2]!]! : 0;
    if ((a | b | c) < 0) return undefined;
    out[o++] = (a << 2) | (b >> 4);
    if (tail === 3) out[o++] = ((b & 15) << 4) | (c >> 2);
  }
  return out;
}

/** Each byte's value as a hex digit, −1 for others. */
const HEX_VALUES = (() => {
  const t = new Int8Array(256).fill(-1);
  for (let i = 0; i < 16; i++) {
    t['0123456789abcdef'.charCodeAt(i)] = i;
    t['0123456789ABCDEF'.charCodeAt(i)] = i;
  }
  return t;
})();

/** Hex pairs in line[start, end) as bytes, undefined otherwise. */
export function decodeHex(line: Buffer, start: number, end: number): Buffer | undefined {
  if ((end - start) % 2 !== 0) return undefined;
  const out = Buffer.allocUnsafe((end - start) / 2);
  for (let p = start, o = 0; p < end; p += 2) {
    const hi = HEX_VALUES[line[p]!]!;
    const lo = HEX_VALUES[line[p + 1]!]!;
    if ((hi | lo) < 0) return undefined;
    out[o++] = (hi << 4) | lo;
  }
  return out;
}
