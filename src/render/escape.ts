/**
 * Bytes from the data (keys, values, header keys and values) as text a terminal and a script can
 * trust: one record stays one line, and nothing in the data reaches the terminal as a control.
 *
 *  - `\n` `\t` `\r` `\0` `\\` for line feed, tab, carriage return, NUL and the backslash itself;
 *  - `\xNN` for every other C0 control (ESC included), DEL, the C1 controls U+0080–U+009F (their
 *    two UTF-8 bytes, `\xc2\x9b` for CSI) and every byte that is not part of valid UTF-8;
 *  - every other character of valid UTF-8 as itself.
 *
 * A `\xNN` is always one byte of the data, so the escaped text names the bytes exactly. Only text
 * output is escaped: JSON encodes strings exactly on its own.
 */
import { byteEscapes, jsonText, STOP, type JsonSink } from './json-line.js';

const SHORT: Record<number, string> = { 0x00: '\\0', 0x09: '\\t', 0x0a: '\\n', 0x0d: '\\r', 0x5c: '\\\\' };

/** Anything in a decoded string that must be escaped: C0, backslash, DEL, C1. */
const NEEDS_ESCAPE = /[\x00-\x1f\\\x7f-\x9f]/;

const hex = (b: number): string => `\\x${b.toString(16).padStart(2, '0')}`;

/** escapeBytes' escapes of ASCII bytes; a byte beyond ASCII stops the pass (it may start a character, a C1 control or no character). */
const ASCII_ESCAPES = byteEscapes((b) => (b >= 0x80 ? STOP : b < 0x20 || b === 0x5c || b === 0x7f ? escapeAscii(b) : undefined));

/** One ASCII control or backslash as its escape. */
function escapeAscii(b: number): string {
  return SHORT[b] ?? hex(b);
}

/**
 * Length of the valid UTF-8 sequence starting at buf[i] (WHATWG / RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 if buf[i] does not start one.
 */
function utf8SequenceLength(buf: Uint8Array, i: number): number {
  const b = buf[i]!;
  const cont = (j: number, lo = 0x80, hi = 0xbf): boolean => j < buf.length && buf[j]! >= lo && buf[j]! <= hi;
  if (b >= 0xc2 && b <= 0xdf) return cont(i + 1) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    const [lo, hi] = b === 0xe0 ? [0xa0, 0xbf] : b === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    const [lo, hi] = b === 0xf0 ? [0x90, 0xbf] : b === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

/** Bytes as escaped text (see the file comment). `valid`: the caller already knows they are UTF-8. */
export function escapeBytes(buf: Buffer, valid?: boolean): string {
  if (valid) {
    // The common case: decode once and return it if nothing needs escaping.
    const s = buf.toString('utf8');
    if (!NEEDS_ESCAPE.test(s)) return s;
  }
  return jsonText((sink) => writeEscapedBytes(sink, buf));
}

/**
 * escapeBytes written to a sink: the runs of printable characters as their bytes, each escape as
 * text (issue 15: `read` writes a record's text with no string made of its bytes). True when the
 * bytes are valid UTF-8, false when some byte was escaped as not being part of it.
 */
export function writeEscapedBytes(sink: JsonSink, buf: Buffer): boolean {
  // ASCII in one pass (the sink's table); from the first byte beyond ASCII on, the loop below.
  let i = sink.writeEscaped(buf, ASCII_ESCAPES);
  let valid = true;
  let run = i; // start of the bytes not yet written, all printable
  while (i < buf.length) {
    const b = buf[i]!;
    if (b >= 0x20 && b < 0x7f && b !== 0x5c) {
      i++;
      continue;
    }
    const n = b < 0x80 ? 1 : utf8SequenceLength(buf, i);
    const c1 = n === 2 && b === 0xc2 && buf[i + 1]! <= 0x9f;
    if (n > 1 && !c1) {
      i += n; // a printable character beyond ASCII
      continue;
    }
    if (i > run) sink.writeBytes(buf, run, i);
    if (c1) sink.write(hex(0xc2) + hex(buf[i + 1]!));
    else if (b < 0x80) sink.write(escapeAscii(b));
    else {
      valid = false;
      sink.write(hex(b));
    }
    i += c1 ? 2 : 1;
    run = i;
  }
  if (i > run) sink.writeBytes(buf, run, i);
  return valid;
}

/** A string from the data (a header key) escaped as its UTF-8 bytes. */
export function escapeString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? escapeBytes(Buffer.from(s, 'utf8'), true) : s;
}
