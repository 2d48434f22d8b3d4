/**
 * Records given as byte ranges of one buffer (Kafka's DefaultRecord.writeTo, kafka-format.md §2):
 * null key, no headers, one CreateTime for all, each value buf[starts[i], ends[i]). What
 * `append --lines` makes of an input chunk, encoded without a Buffer or record object per line.
 * The bytes are exactly encodeRecordBatch's for the records {key: null, value, timestamp}.
 */
import { assert } from '../errors.js';
import { CompressionType } from './compression.js';
import { RECORD_BATCH_OVERHEAD } from './batch-header.js';
import { writeBatchHeader, type EncodeBatchOptions, type EncodedBatch } from './batch-encode.js';
import { putUvarint, uvarintBytes } from './record-writer.js';

export interface ValueSlices {
  /** The bytes the values are ranges of. */
  buf: Buffer;
  /** Value i is buf[starts[i], ends[i]). */
  starts: Int32Array;
  ends: Int32Array;
  /** Records: the first `count` ranges. */
  count: number;
  /** Every record's timestamp (a safe integer, epoch ms); undefined for the time of the append. */
  timestampMs: number | undefined;
}

/** One uncompressed v2 batch of the slices at opts.baseOffset, into opts.into when it fits. */
export function encodeValueSlices(s: ValueSlices, opts: EncodeBatchOptions): EncodedBatch {
  const { buf: src, starts, ends, count } = s;
  assert((opts.compression ?? CompressionType.none) === CompressionType.none && opts.offsetDeltas === undefined, 'value slices are encoded uncompressed with consecutive offsets');
  const nowMs = opts.nowMs ?? Date.now();
  const ts = s.timestampMs ?? nowMs;
  assert(Number.isSafeInteger(ts) && count > 0 && count <= starts.length, `value slices: ${count} records at timestamp ${ts}`);
  // Every timestamp delta is 0 (one byte): body = attributes, delta, offset delta, null key, value, header count.
  let size = RECORD_BATCH_OVERHEAD;
  for (let i = 0; i < count; i++) {
    const len = ends[i]! - starts[i]!;
    const body = 4 + uvarintBytes(i * 2) + uvarintBytes(len * 2) + len;
    size += uvarintBytes(body * 2) + body;
  }
  const into = opts.into;
  const out = into !== undefined && into.length >= size ? into.subarray(0, size) : Buffer.allocUnsafe(size);
  // The values' span is staged at the end of `out` with one copy; each value then moves forward
  // to its place within `out` (copyWithin: no view per value). The records never outgrow the span
  // they come from when ranges are increasing and the bytes between them (line ends) are fewer
  // than a record's own fields; a value whose place would pass its staged bytes, and every one
  // after it, is copied from `src` instead.
  const spanStart = starts[0]!;
  const spanBytes = ends[count - 1]! - spanStart;
  let staged = spanBytes > 0 && spanBytes <= size - RECORD_BATCH_OVERHEAD;
  const stagedAt = size - spanBytes - spanStart;
  if (staged) src.copy(out, size - spanBytes, spanStart, spanStart + spanBytes);
  let pos = RECORD_BATCH_OVERHEAD;
  let prevEnd = spanStart;
  for (let i = 0; i < count; i++) {
    const start = starts[i]!;
    const len = ends[i]! - start;
    const zo = i * 2;
    const body = 4 + uvarintBytes(zo) + uvarintBytes(len * 2) + len;
    pos = putUvarint(out, pos, body * 2);
    out[pos++] = 0; // attributes
    out[pos++] = 0; // timestamp delta
    pos = putUvarint(out, pos, zo);
    out[pos++] = 1; // null key
    pos = putUvarint(out, pos, len * 2);
    staged &&= start >= prevEnd && start + len <= spanStart + spanBytes && pos <= stagedAt + start;
    if (staged) out.copyWithin(pos, stagedAt + start, stagedAt + start + len);
    else src.copy(out, pos, start, start + len);
    pos += len;
    prevEnd = start + len;
    out[pos++] = 0; // header count
  }
  assert(pos === size, `value slices: wrote ${pos} of ${size} bytes`);
  const written = writeBatchHeader(out, size, opts, { compression: CompressionType.none, count, baseTimestamp: ts, maxTimestamp: ts, nowMs });
  return { buf: out, count, ...written };
}
