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
  /** bytes[start, end) (default: all of them), copied; valid UTF-8 wherever the text is cut. */
  writeBytes(bytes: Buffer, start?: number, end?: number): void;
  /**
   * bytes from `start` with each byte `escapes` marks written as its escape, up to the first byte
   * it marks STOP (not written); returns that byte's index, or bytes.length (writeEscapedRuns).
   */
  writeEscaped(bytes: Buffer, escapes: ByteEscapes, start?: number): number;
}

/** What writeEscaped does with a byte: copy it, write its escape, or stop before it. */
export const COPY = 0;
export const ESCAPE = 1;
export const STOP = 2;

/** A byte-to-escape table: each byte's action (COPY, ESCAPE, STOP) and, for ESCAPE, its ASCII text. */
export interface ByteEscapes {
  readonly actions: Uint8Array;
  readonly texts: readonly string[];
  /** The longest escape's length. */
  readonly maxChars: number;
}

/** A ByteEscapes from each byte's escape (a string), STOP, or undefined to copy it. */
export function byteEscapes(escapeOf: (b: number) => string | typeof STOP | undefined): ByteEscapes {
  const actions = new Uint8Array(256);
  const texts: string[] = new Array<string>(256).fill('');
  let maxChars = 1;
  for (let b = 0; b < 256; b++) {
    const e = escapeOf(b);
    if (e === STOP) actions[b] = STOP;
    else if (e !== undefined) {
      actions[b] = ESCAPE;
      texts[b] = e;
      maxChars = Math.max(maxChars, e.length);
    }
  }
  return { actions, texts, maxChars };
}

/** JsonSink.writeEscaped through write and writeBytes: the runs between escapes as bytes, each escape as text. */
export function writeEscapedRuns(sink: Pick<JsonSink, 'write' | 'writeBytes'>, bytes: Buffer, escapes: ByteEscapes, start = 0): number {
  const { actions, texts } = escapes;
  let run = start;
  let i = start;
  for (; i < bytes.length; i++) {
    const action = actions[bytes[i]!]!;
    if (action === COPY) continue;
    if (i > run) sink.writeBytes(bytes, run, i);
    if (action === STOP) return i;
    sink.write(texts[bytes[i]!]!);
    run = i + 1;
  }
  if (i > run) sink.writeBytes(bytes, run, i);
  return i;
}

/** Characters QuoteJSONString escapes: '"', '\', controls, and surrogates (lone ones are escaped; pairs take the exact path too). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify(s). */
export function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** What one pass over bytes found: ASCII with nothing JSON escapes, non-ASCII bytes, or a byte JSON escapes ('"', '\', a control). */
const PLAIN_ASCII = 0;
const NON_ASCII = 1;
const ESCAPED = 2;

/** One pass over `buf` (issue 15: a UTF-8 check is needed only when a byte is not ASCII). */
function scanJsonBytes(buf: Buffer): number {
  let found = PLAIN_ASCII;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i]!;
    if (b < 0x20 || b === 0x22 || b === 0x5c) return ESCAPED;
    if (b >= 0x80) found = NON_ASCII;
  }
  return found;
}

/**
 * Bytes as JSON text: a string in the chosen encoding. Under utf8, bytes that are not valid UTF-8
 * are never altered: they are written as {"base64":"…"}, which `append` reads back to the same bytes.
 */
export function writeBytesJson(sink: JsonSink, buf: Buffer | null, enc: 'utf8' | 'base64' | 'hex', stats?: { nonUtf8: number }): void {
  if (buf === null) return sink.write('null');
  if (enc !== 'utf8') return sink.write(`"${buf.toString(enc)}"`); // base64 and hex have nothing to escape
  const found = scanJsonBytes(buf);
  if (found === PLAIN_ASCII || isUtf8(buf)) {
    sink.write('"');
    // Valid UTF-8 encodes no surrogate: only '"', '\' and controls are escaped, byte by byte.
    if (found === ESCAPED) sink.writeEscaped(buf, JSON_ESCAPES);
    else sink.writeBytes(buf);
    return sink.write('"');
  }
  if (stats) stats.nonUtf8++;
  sink.write(`{"base64":"${buf.toString('base64')}"}`);
}

/** QuoteJSONString's escapes of the bytes below 0x20, '"' and '\' (lower-case hex, as JSON.stringify writes them). */
const SHORT_JSON_ESCAPES: Record<number, string> = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' };
const JSON_ESCAPES = byteEscapes((b) => SHORT_JSON_ESCAPES[b] ?? (b < 0x20 ? `\\u${b.toString(16).padStart(4, '0')}` : undefined));

/** JSON text that `write` writes to a sink, as one string. */
export function jsonText(write: (sink: JsonSink) => void): string {
  let text = '';
  write({
    write: (t) => void (text += t),
    writeBytes: (b, start, end) => void (text += b.toString('utf8', start, end)),
    writeEscaped(b, escapes, start) {
      return writeEscapedRuns(this, b, escapes, start);
    },
  });
  return text;
}

/** bytesJson as a string. */
export function bytesJsonText(buf: Buffer | null, enc: 'utf8' | 'base64' | 'hex', stats?: { nonUtf8: number }): string {
  return jsonText((sink) => writeBytesJson(sink, buf, enc, stats));
}
