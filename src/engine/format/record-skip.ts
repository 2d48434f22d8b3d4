/**
 * Passing over the records of a v2 batch below an offset (Kafka's DefaultRecord layout,
 * kafka-format.md §2.2: length varint, attributes, timestamp delta varlong, offset delta varint,
 * key, value, header count, headers), as a lookup does to reach the record it returns.
 *
 * Only records whose every check RecordDecoder would pass are passed over here: the length inside
 * the batch, key and value inside the record, no header, and nothing left over. A record this loop
 * cannot check so (a varint longer than two bytes, headers, any damage) ends it, and the decoder
 * goes on from that record with its own checks and errors: a lookup still fails on a malformed
 * record below its offset exactly as a read from the batch's start does.
 */
import type { VarintCursor } from './varint.js';

/** The zig-zag bits of the varint at data[pos] when it has one or two bytes before `end`, else −1. */
function shortVarint(data: Buffer, pos: number, end: number): number {
  if (pos >= end) return -1;
  const b = data[pos]!;
  if (b < 0x80) return b;
  if (pos + 1 >= end) return -1;
  const b1 = data[pos + 1]!;
  return b1 < 0x80 ? (b & 0x7f) | (b1 << 7) : -1;
}

const bytesOf = (bits: number): number => (bits < 0x80 ? 1 : 2);
const zigzag = (bits: number): number => (bits >>> 1) ^ -(bits & 1);

/**
 * Passes over records `index`, `index + 1`, … (of `count`) from `c.pos` while their offset delta is
 * below `belowDelta` and they check out; moves `c.pos` past them and returns the next record's index.
 */
export function passRecordsBelow(data: Buffer, c: VarintCursor, end: number, index: number, count: number, belowDelta: number): number {
  let pos = c.pos;
  let i = index;
  for (; i < count; i++) {
    const lengthBits = shortVarint(data, pos, end);
    if (lengthBits < 0) break;
    const bodyStart = pos + bytesOf(lengthBits);
    const bodyEnd = bodyStart + zigzag(lengthBits);
    if (bodyEnd < bodyStart || bodyEnd > end) break;
    let at = bodyStart + 1; // attributes
    const ts = shortVarint(data, at, bodyEnd);
    if (ts < 0) break;
    at += bytesOf(ts);
    const delta = shortVarint(data, at, bodyEnd);
    if (delta < 0 || zigzag(delta) >= belowDelta) break;
    at += bytesOf(delta);
    // The key, then the value: a negative length is null.
    const keyBits = shortVarint(data, at, bodyEnd);
    if (keyBits < 0) break;
    at += bytesOf(keyBits) + Math.max(0, zigzag(keyBits));
    const valueBits = shortVarint(data, at, bodyEnd);
    if (valueBits < 0) break;
    at += bytesOf(valueBits) + Math.max(0, zigzag(valueBits));
    // No header (a zero count), and the record ends there.
    if (at >= bodyEnd || data[at] !== 0 || at + 1 !== bodyEnd) break;
    pos = bodyEnd;
  }
  c.pos = pos;
  return i;
}
