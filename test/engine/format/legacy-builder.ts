/**
 * Test-only writer of legacy v0/v1 message sets, to produce inputs the engine itself never
 * writes (Kafka 4 stopped writing them): plain messages and compressed wrappers with each
 * legacy codec, in the layout of kafka-format.md §3.
 */
import { crc32 } from '../../../src/engine/format/crc32c.js';
import { gzipCompress } from '../../../src/engine/format/codecs/gzip.js';
import { lz4Compress } from '../../../src/engine/format/codecs/lz4.js';
import { snappyCompress } from '../../../src/engine/format/codecs/snappy.js';
import { writeInt64 } from '../../../src/engine/format/record-batch.js';

export interface LegacyMessageInput {
  offset: number;
  magic: 0 | 1;
  attributes?: number;
  /** v1 only. */
  timestamp?: number;
  key: Buffer | null;
  value: Buffer | null;
}

/** One entry: offset | size | crc | magic | attributes | [timestamp] | key | value, with a valid CRC-32. */
export function legacyMessage(m: LegacyMessageInput): Buffer {
  const keyBytes = m.key === null ? 0 : m.key.length;
  const valueBytes = m.value === null ? 0 : m.value.length;
  const messageBytes = 4 + 1 + 1 + (m.magic === 1 ? 8 : 0) + 4 + keyBytes + 4 + valueBytes;
  const buf = Buffer.alloc(12 + messageBytes);
  writeInt64(buf, 0, m.offset);
  buf.writeInt32BE(messageBytes, 8);
  let p = 16;
  buf[p++] = m.magic;
  buf[p++] = m.attributes ?? 0;
  if (m.magic === 1) {
    writeInt64(buf, p, m.timestamp ?? -1);
    p += 8;
  }
  for (const field of [m.key, m.value]) {
    if (field === null) {
      buf.writeInt32BE(-1, p);
      p += 4;
    } else {
      buf.writeInt32BE(field.length, p);
      p += 4;
      p += field.copy(buf, p);
    }
  }
  buf.writeUInt32BE(crc32(buf, 16, buf.length), 12);
  return buf;
}

export function compressLegacy(codec: 1 | 2 | 3, magic: 0 | 1, data: Buffer): Buffer {
  if (codec === 1) return gzipCompress(data);
  if (codec === 2) return snappyCompress(data);
  return lz4Compress(data, { legacyHeaderChecksum: magic === 0 });
}

export interface WrapperInput {
  magic: 0 | 1;
  codec: 1 | 2 | 3;
  wrapperOffset: number;
  wrapperTimestamp?: number;
  logAppendTime?: boolean;
  inner: LegacyMessageInput[];
  /** Replaces the compressed payload (for corruption tests). */
  payload?: Buffer;
}

/** A compressed wrapper message whose value is the compressed concatenation of inner entries. */
export function legacyWrapper(w: WrapperInput): Buffer {
  const innerSet = Buffer.concat(w.inner.map(legacyMessage));
  const payload = w.payload ?? compressLegacy(w.codec, w.magic, innerSet);
  return legacyMessage({
    offset: w.wrapperOffset,
    magic: w.magic,
    attributes: w.codec | (w.logAppendTime ? 0x08 : 0),
    timestamp: w.wrapperTimestamp,
    key: null,
    value: payload,
  });
}
