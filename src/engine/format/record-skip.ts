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
 *
 * readShortRecord reads such a record into a view in one pass on the same terms: the decoder's
 * way through the records nearly every batch holds, any other read by the decoder field by field.
 */
import type { VarintCursor } from './varint.js';
import type { RecordView } from './record-view.js';

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

/**
 * Shows the record at data[pos] in `v` and returns where it ends when it has the short form nearly
 * every record has (length, offset delta and value length varints of one or two bytes, timestamp
 * delta and key length of one, no header); −1 for any other record, `v` untouched, which
 * RecordDecoder then reads field by field with its own checks and errors. Every check the decoder
 * makes on such a record is made here on the same bytes, so the view is the one it would show.
 * Written out byte by byte: with helper calls per varint a 100 B record's read cost 10–50% more.
 */
export function readShortRecord(data: Buffer, pos: number, end: number, v: RecordView): number {
  if (pos >= end) return -1;
  let b = data[pos]!;
  let bits = b;
  if (b >= 0x80) {
    if (pos + 1 >= end || data[pos + 1]! >= 0x80) return -1;
    bits = (b & 0x7f) | (data[++pos]! << 7);
  }
  const bodyStart = pos + 1;
  const bodyEnd = bodyStart + ((bits >>> 1) ^ -(bits & 1));
  if (bodyEnd < bodyStart || bodyEnd > end) return -1;
  let at = bodyStart + 1; // attributes
  if (at >= bodyEnd || (b = data[at]!) >= 0x80) return -1;
  const timestampDelta = (b >>> 1) ^ -(b & 1);
  if (++at >= bodyEnd) return -1;
  bits = b = data[at]!;
  if (b >= 0x80) {
    if (at + 1 >= bodyEnd || data[at + 1]! >= 0x80) return -1;
    bits = (b & 0x7f) | (data[++at]! << 7);
  }
  const offsetDelta = (bits >>> 1) ^ -(bits & 1);
  if (++at >= bodyEnd || (b = data[at]!) >= 0x80) return -1;
  const keyLength = (b >>> 1) ^ -(b & 1);
  const keyStart = ++at;
  if (keyLength > 0) at += keyLength;
  if (at >= bodyEnd) return -1;
  bits = b = data[at]!;
  if (b >= 0x80) {
    if (at + 1 >= bodyEnd || data[at + 1]! >= 0x80) return -1;
    bits = (b & 0x7f) | (data[++at]! << 7);
  }
  const valueLength = (bits >>> 1) ^ -(bits & 1);
  const valueStart = ++at;
  if (valueLength > 0) at += valueLength;
  // No header (a zero count), and the record ends there (a key or value running past it ends past it).
  if (at >= bodyEnd || data[at] !== 0 || at + 1 !== bodyEnd) return -1;
  v.timestampDelta = timestampDelta;
  v.offsetDelta = offsetDelta;
  v.keyStart = keyStart;
  v.keyLength = keyLength < 0 ? -1 : keyLength;
  v.valueStart = valueStart;
  v.valueLength = valueLength < 0 ? -1 : valueLength;
  v.headerCount = 0;
  v.headersStart = bodyEnd;
  v.headersEnd = bodyEnd;
  return bodyEnd;
}
