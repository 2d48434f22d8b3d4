/**
 * `append`'s NDJSON lines in the shape `read --json` prints — {"offset","timestamp","key","value",
 * "headers"} (README, "NDJSON records"; JSON as RFC 8259 defines it) — parsed from their bytes
 * (issue 15, cli-append-ndjson-pipe): no string per line, no JSON.parse object, no regular
 * expression per value, base64 decoded from the line's bytes. Only what this parser is sure of is
 * taken: any other line (escapes in a string, {"base64": …} values, headers, a timestamp beyond 15
 * digits, unknown or repeated members, anything malformed) returns undefined and goes through
 * parseNdjson (JSON.parse), which gives the same record or the error it always gave.
 */
import { isUtf8 } from 'node:buffer';
import type { RecordInput } from '../api/format.js';
import type { Encoding } from './shared.js';
import { decodeBase64, decodeHex } from './text-bytes.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;

/** The members this parser takes, one bit each (a repeated member goes to JSON.parse, where the last wins). */
const KEY = 1;
const VALUE = 2;
const HEADERS = 4;
const TIMESTAMP = 8;
const OFFSET = 16;
/** Each member's name by its length (the five lengths differ). */
const MEMBER_BY_LENGTH: ReadonlyArray<readonly [string, number] | undefined> = (() => {
  const byLength: (readonly [string, number] | undefined)[] = [];
  for (const m of [['key', KEY], ['value', VALUE], ['headers', HEADERS], ['timestamp', TIMESTAMP], ['offset', OFFSET]] as const) byLength[m[0].length] = m;
  return byLength;
})();

/** Digits of an integer taken here: below 10^15, so always a safe integer (longer ones take JSON.parse's exact path). */
const MAX_DIGITS = 15;

/**
 * The record of one NDJSON line, or undefined when the line is not in the shape taken here (the
 * caller then parses it with parseNdjson). The line is line[start, end) (by default all of
 * `line`): nothing outside it decides the result. A utf8 key or value is a view of its bytes.
 */
export function parseNdjsonLine(line: Buffer, enc: Encoding, start = 0, end = line.length): RecordInput | undefined {
  // A leading space, a blank line or a byte-order mark: JSON.parse's path.
  if (start >= end || line[start] !== 0x7b) return undefined;
  let p = skipSpace(line, start + 1, end);
  let seen = 0;
  let key: Buffer | null = null;
  let value: Buffer | null = null;
  let timestamp: number | undefined;
  for (;;) {
    if (p >= end || line[p] !== QUOTE) return undefined;
    const nameEnd = line.indexOf(QUOTE, p + 1);
    const member = nameEnd < 0 || nameEnd >= end ? 0 : memberAt(line, p + 1, nameEnd);
    if (member === 0 || (seen & member) !== 0) return undefined;
    seen |= member;
    p = skipSpace(line, nameEnd + 1, end);
    if (p >= end || line[p] !== COLON) return undefined;
    p = skipSpace(line, p + 1, end);
    const c = p < end ? line[p] : undefined;
    if (c === 0x6e) {
      // null: no key, no value (a tombstone), no headers, no timestamp
      if (p + 4 > end || line[p + 1] !== 0x75 || line[p + 2] !== 0x6c || line[p + 3] !== 0x6c) return undefined;
      p += 4;
    } else if (c === QUOTE) {
      if (member !== KEY && member !== VALUE) return undefined;
      // base64 and hex check every character as they decode (a '\' or a control is neither):
      // the closing quote is all they need found.
      const close = enc === 'utf8' ? stringEnd(line, p + 1, end) : line.indexOf(QUOTE, p + 1);
      if (close < 0 || close >= end) return undefined;
      const bytes = decodeString(line, p + 1, close, enc);
      if (bytes === undefined) return undefined;
      if (member === KEY) key = bytes;
      else value = bytes;
      p = close + 1;
    } else if (c === 0x5b) {
      if (member !== HEADERS) return undefined;
      p = skipSpace(line, p + 1, end);
      if (p >= end || line[p] !== 0x5d) return undefined;
      p++;
    } else {
      if (member !== TIMESTAMP && member !== OFFSET) return undefined;
      const numberEnd = integerEnd(line, p, end);
      if (numberEnd < 0) return undefined;
      if (member === TIMESTAMP) timestamp = Number(line.toString('latin1', p, numberEnd));
      p = numberEnd;
    }
    p = skipSpace(line, p, end);
    if (p < end && line[p] === COMMA) {
      p = skipSpace(line, p + 1, end);
      continue;
    }
    if (p >= end || line[p] !== 0x7d || skipSpace(line, p + 1, end) !== end) return undefined;
    break;
  }
  if ((seen & VALUE) === 0) return undefined; // JSON.parse's path names the missing "value"
  return { key, value, headers: [], timestamp };
}

/** The position after JSON whitespace (a line holds no line feed) from p. */
function skipSpace(line: Buffer, p: number, end: number): number {
  while (p < end) {
    const b = line[p]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) break;
    p++;
  }
  return p;
}

/** The member whose name is line[start, end), or 0 for any other name. */
function memberAt(line: Buffer, start: number, end: number): number {
  const length = end - start;
  const member = length < MEMBER_BY_LENGTH.length ? MEMBER_BY_LENGTH[length] : undefined;
  if (member === undefined) return 0;
  const name = member[0];
  for (let i = 0; i < length; i++) if (line[start + i] !== name.charCodeAt(i)) return 0;
  return member[1];
}

/** The closing quote of a string starting at `start`, or −1 if it holds an escape or a control character (JSON.parse's path). */
function stringEnd(line: Buffer, start: number, end: number): number {
  for (let p = start; p < end; p++) {
    const b = line[p]!;
    if (b === QUOTE) return p;
    if (b < 0x20 || b === BACKSLASH) return -1;
  }
  return -1;
}

/**
 * The end of a JSON integer at p that is exact and canonical as a number (at most MAX_DIGITS
 * digits, no leading zero, not −0), or −1 for any other number or text.
 */
function integerEnd(line: Buffer, p: number, end: number): number {
  const negative = p < end && line[p] === MINUS;
  const first = negative ? p + 1 : p;
  let q = first;
  while (q < end && line[q]! >= ZERO && line[q]! <= 0x39) q++;
  const digits = q - first;
  if (digits === 0 || digits > MAX_DIGITS || (line[first] === ZERO && (digits > 1 || negative))) return -1;
  const next = q < end ? line[q] : undefined;
  if (next === 0x2e || next === 0x65 || next === 0x45) return -1; // a fraction or an exponent
  return q;
}

/** A key or value string's bytes in `enc`, or undefined when JSON.parse's path must decide (not valid UTF-8, base64 or hex). */
function decodeString(line: Buffer, start: number, end: number, enc: Encoding): Buffer | undefined {
  if (enc === 'base64') return decodeBase64(line, start, end);
  if (enc === 'hex') return decodeHex(line, start, end);
  const text = line.subarray(start, end);
  for (let p = start; p < end; p++) if (line[p]! >= 0x80) return isUtf8(text) ? text : undefined;
  return text;
}

