/**
 * JSON text built directly as strings, byte for byte what JSON.stringify writes for the same value
 * (ECMA-262 JSON.stringify / QuoteJSONString), without building an object per record first: `read
 * --json` prints one line per record, and the objects and JSON.stringify's pass over them were
 * most of its time (issue 15).
 */
import { isUtf8 } from 'node:buffer';

/** Characters QuoteJSONString escapes: '"', '\', controls, and surrogates (lone ones are escaped; pairs take the exact path too). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify(s). */
export function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/**
 * Bytes as JSON text: a string in the chosen encoding. Under utf8, bytes that are not valid UTF-8
 * are never altered: they are written as {"base64":"…"}, which `append` reads back to the same bytes.
 */
export function bytesJsonText(buf: Buffer | null, enc: 'utf8' | 'base64' | 'hex', stats?: { nonUtf8: number }): string {
  if (buf === null) return 'null';
  if (enc !== 'utf8') return `"${buf.toString(enc)}"`; // base64 and hex have nothing to escape
  if (isUtf8(buf)) return jsonString(buf.toString('utf8'));
  if (stats) stats.nonUtf8++;
  return `{"base64":"${buf.toString('base64')}"}`;
}
