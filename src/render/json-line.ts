/**
 * JSON text written piece by piece, byte for byte what JSON.stringify writes for the same value
 * (ECMA-262 JSON.stringify / QuoteJSONString), without building an object per record first: `read
 * --json` prints one line per record, and the objects and JSON.stringify's pass over them were
 * most of its time (issue 15). UTF-8 bytes that need no escape go to the sink as bytes, never
 * becoming a string.
 */
import { isUtf8 } from 'node:buffer';

/** Where JSON text goes: Output (src/render/output.ts), or a string (jsonText). */
export interface JsonSink {
  write(text: string): void;
  writeBytes(bytes: Buffer): void;
}

/** Characters QuoteJSONString escapes: '"', '\', controls, and surrogates (lone ones are escaped; pairs take the exact path too). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify(s). */
export function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** True if valid UTF-8 `buf` holds a byte JSON escapes ('"', '\', a control); valid UTF-8 encodes no surrogate. */
function hasEscapedByte(buf: Buffer): boolean {
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i]!;
    if (b < 0x20 || b === 0x22 || b === 0x5c) return true;
  }
  return false;
}

/**
 * Bytes as JSON text: a string in the chosen encoding. Under utf8, bytes that are not valid UTF-8
 * are never altered: they are written as {"base64":"…"}, which `append` reads back to the same bytes.
 */
export function writeBytesJson(sink: JsonSink, buf: Buffer | null, enc: 'utf8' | 'base64' | 'hex', stats?: { nonUtf8: number }): void {
  if (buf === null) return sink.write('null');
  if (enc !== 'utf8') return sink.write(`"${buf.toString(enc)}"`); // base64 and hex have nothing to escape
  if (isUtf8(buf)) {
    if (hasEscapedByte(buf)) return sink.write(JSON.stringify(buf.toString('utf8')));
    sink.write('"');
    sink.writeBytes(buf);
    return sink.write('"');
  }
  if (stats) stats.nonUtf8++;
  sink.write(`{"base64":"${buf.toString('base64')}"}`);
}

/** JSON text that `write` writes to a sink, as one string. */
export function jsonText(write: (sink: JsonSink) => void): string {
  let text = '';
  write({
    write: (t) => void (text += t),
    writeBytes: (b) => void (text += b.toString('utf8')),
  });
  return text;
}

/** bytesJson as a string. */
export function bytesJsonText(buf: Buffer | null, enc: 'utf8' | 'base64' | 'hex', stats?: { nonUtf8: number }): string {
  return jsonText((sink) => writeBytesJson(sink, buf, enc, stats));
}
