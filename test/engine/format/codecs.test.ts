/**
 * The four compression codecs: round trips, Kafka's exact framing, limits against lying lengths
 * and bombs, and arbitrary corruption (which must only ever raise a LogtoolError).
 */
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CorruptDataError, LogtoolError } from '../../../src/engine/errors.js';
import { codecFor, CompressionType, compressionName } from '../../../src/engine/format/compression.js';
import '../../../src/engine/format/codecs/index.js';
import { lz4Compress, lz4Decompress, LZ4_KAFKA_BLOCK_BYTES } from '../../../src/engine/format/codecs/lz4.js';
import { snappyCompress, snappyDecompress, XERIAL_BLOCK_BYTES, XERIAL_HEADER_BYTES } from '../../../src/engine/format/codecs/snappy.js';
import { zstdCompress, zstdDecompress } from '../../../src/engine/format/codecs/zstd.js';
import { xxh32 } from '../../../src/engine/format/codecs/xxhash32.js';
import { decodeRecords, encodeBatch, readBatchHeader } from '../../../src/engine/format/record-batch.js';

const require = createRequire(import.meta.url);
const lz4jsXxh32: { hash(seed: number, src: Uint8Array, index: number, len: number): number } = require('lz4js/xxh32.js');
const snappyNative: { compressSync(b: Buffer): Buffer } = require('snappy');
const zstdBinding: typeof import('zstd-napi/binding.js') = require('zstd-napi/binding');

/**
 * A frame shaped like zstd-jni's streaming output (what Kafka writes): no content size, no
 * checksum, level 3. windowLog rewrites the frame's window descriptor to declare a larger window
 * than the data needs (zstd itself shrinks it when it knows the input size).
 */
function zstdStreamLikeKafka(data: Buffer, windowLog?: number): Buffer {
  const cctx = new zstdBinding.CCtx();
  cctx.setParameter(zstdBinding.CParameter.compressionLevel, 3);
  cctx.setParameter(zstdBinding.CParameter.contentSizeFlag, 0);
  cctx.setParameter(zstdBinding.CParameter.checksumFlag, 0);
  const dst = Buffer.allocUnsafe(zstdBinding.compressBound(data.length));
  const frame = dst.subarray(0, cctx.compress2(dst, data));
  if (windowLog !== undefined) {
    expect(frame[4]).toBe(0); // FHD: no content size, no single segment, so byte 5 is the window descriptor
    frame[5] = (windowLog - 10) << 3;
  }
  return frame;
}

const codecIds = [CompressionType.gzip, CompressionType.snappy, CompressionType.lz4, CompressionType.zstd] as const;

function codec(id: number) {
  const c = codecFor(id);
  if (!c) throw new Error(`codec ${id} not registered`);
  return c;
}

/** Data that compresses (a repeated pattern) and is long enough to span several codec blocks. */
const compressibleData = fc
  .tuple(fc.uint8Array({ minLength: 1, maxLength: 48 }), fc.integer({ min: 0, max: 200_000 }))
  .map(([pattern, bytes]) => {
    const out = Buffer.allocUnsafe(bytes);
    for (let i = 0; i < bytes; i++) out[i] = pattern[i % pattern.length]!;
    return out;
  });
const arbitraryData = fc.uint8Array({ maxLength: 3000 }).map((a) => Buffer.from(a));

function expectLogtoolError(fn: () => unknown): LogtoolError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LogtoolError);
    return e as LogtoolError;
  }
  throw new Error('expected a LogtoolError, got a result');
}

describe('xxh32', () => {
  it('matches the reference vectors', () => {
    expect(xxh32(Buffer.alloc(0))).toBe(0x02cc5d05);
    expect(xxh32(Buffer.from('abc'))).toBe(0x32d153ff);
    expect(xxh32(Buffer.from('Nobody inspects the spammish repetition'))).toBe(0xe2293b2f);
  });

  it('matches lz4js for arbitrary data, offsets and seeds', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(), fc.nat(), fc.integer({ min: 0, max: 0xffffffff }), (data, a, b, seed) => {
        const start = data.length ? a % data.length : 0;
        const end = start + (data.length - start ? b % (data.length - start + 1) : 0);
        expect(xxh32(data, start, end, seed)).toBe(lz4jsXxh32.hash(seed, data, start, end - start) >>> 0);
      }),
      { numRuns: 300 },
    );
  });
});

describe.each(codecIds.map((id) => [compressionName(id), id] as const))('%s codec', (_name, id) => {
  it('round-trips arbitrary data', () => {
    fc.assert(
      fc.property(arbitraryData, (data) => {
        const packed = codec(id).compress(data);
        expect(codec(id).decompress(packed, data.length).equals(data)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('round-trips compressible data spanning several blocks', () => {
    fc.assert(
      fc.property(compressibleData, (data) => {
        const packed = codec(id).compress(data);
        expect(codec(id).decompress(packed, data.length).equals(data)).toBe(true);
      }),
      { numRuns: 25 },
    );
  });

  it('refuses output one byte over the limit', () => {
    fc.assert(
      fc.property(fc.oneof(arbitraryData, compressibleData).filter((d) => d.length > 0), (data) => {
        const packed = codec(id).compress(data);
        const e = expectLogtoolError(() => codec(id).decompress(packed, data.length - 1));
        expect(e).toBeInstanceOf(CorruptDataError);
        expect(e.message).toMatch(/limit of \d+ decompressed bytes/);
      }),
      { numRuns: 40 },
    );
  });

  it('survives arbitrary corruption and truncation: a result within the limit or a LogtoolError', () => {
    const corruption = fc.record({
      data: fc.oneof(arbitraryData, compressibleData.map((d) => d.subarray(0, 70_000))),
      flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
      truncateTo: fc.option(fc.nat(), { nil: undefined }),
      appended: fc.uint8Array({ maxLength: 8 }),
      maxOutputBytes: fc.integer({ min: 0, max: 300_000 }),
    });
    fc.assert(
      fc.property(corruption, ({ data, flips, truncateTo, appended, maxOutputBytes }) => {
        let packed = Buffer.from(codec(id).compress(data));
        for (const [at, byte] of flips) if (packed.length) packed[at % packed.length] = byte;
        if (truncateTo !== undefined) packed = packed.subarray(0, truncateTo % (packed.length + 1));
        packed = Buffer.concat([packed, appended]);
        try {
          const out = codec(id).decompress(packed, maxOutputBytes);
          expect(out.length).toBeLessThanOrEqual(maxOutputBytes);
        } catch (e) {
          if (!(e instanceof LogtoolError)) throw new Error(`non-LogtoolError escaped: ${String(e)}`);
          expect(e.kind).toBe('corrupt');
        }
      }),
      { numRuns: 400 },
    );
  });

  it('treats arbitrary bytes as garbage, never crashing', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.integer({ min: 0, max: 1 << 20 }), (bytes, maxOutputBytes) => {
        try {
          expect(codec(id).decompress(Buffer.from(bytes), maxOutputBytes).length).toBeLessThanOrEqual(maxOutputBytes);
        } catch (e) {
          if (!(e instanceof LogtoolError)) throw new Error(`non-LogtoolError escaped: ${String(e)}`);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('stops a decompression bomb at the limit', () => {
    const zeros = Buffer.alloc(48 << 20);
    const bomb = codec(id).compress(zeros);
    expect(bomb.length).toBeLessThan(zeros.length / 20);
    const e = expectLogtoolError(() => codec(id).decompress(bomb, 1 << 20));
    expect(e.message).toMatch(/limit of 1048576 decompressed bytes/);
  });
});

describe('codec failures inside a batch', () => {
  const records = Array.from({ length: 50 }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`value number ${i} `.repeat(20)), timestamp: 1_000 + i }));

  it.each(codecIds.map((id) => [compressionName(id), id] as const))('%s: a truncated payload is reported naming the batch, file and position', (name, id) => {
    const batch = encodeBatch(records, { baseOffset: 77, compression: id });
    const h = readBatchHeader(batch, 0);
    const cut = { ...h, batchLength: 61 + 5 - 12 }; // keep only 5 payload bytes
    const e = expectLogtoolError(() => decodeRecords(batch, 0, cut, { file: 'seg.log', filePosition: 4096 }));
    expect(e).toBeInstanceOf(CorruptDataError);
    expect(e.message).toMatch(new RegExp(`^batch at offset 77 in seg\\.log: ${name} payload cannot be decompressed: ${name}: `));
    expect([e.file, e.position]).toEqual(['seg.log', 4096]);
  });

  it.each(codecIds.map((id) => [compressionName(id), id] as const))('%s: maxDecompressedBytes bounds a batch', (name, id) => {
    const batch = encodeBatch(records, { baseOffset: 5, compression: id });
    const e = expectLogtoolError(() => decodeRecords(batch, 0, readBatchHeader(batch, 0), { maxDecompressedBytes: 1000 }));
    expect(e.message).toMatch(new RegExp(`^batch at offset 5: ${name} payload cannot be decompressed: .*limit of 1000 decompressed bytes`));
    expect(decodeRecords(batch, 0, readBatchHeader(batch, 0))).toHaveLength(50);
  });
});

describe('gzip framing', () => {
  it('reads concatenated members as Java does', () => {
    const two = Buffer.concat([gzipSync('first '), gzipSync('second')]);
    expect(codec(CompressionType.gzip).decompress(two, 100).toString()).toBe('first second');
  });

  it('rejects an empty payload and a truncated stream', () => {
    expectLogtoolError(() => codec(CompressionType.gzip).decompress(Buffer.alloc(0), 100));
    const whole = gzipSync(Buffer.from('hello, gzip'));
    expect(expectLogtoolError(() => codec(CompressionType.gzip).decompress(whole.subarray(0, whole.length - 3), 100)).message).toMatch(/gzip/);
  });
});

describe('snappy xerial framing', () => {
  it('writes the Java header and 32 KiB blocks', () => {
    const data = Buffer.alloc(100 * 1024, 7);
    for (let i = 0; i < data.length; i += 13) data[i] = i & 0xff;
    const packed = snappyCompress(data);
    expect(packed.subarray(0, 16).toString('hex')).toBe('82534e415050590000000001' + '00000001');
    let pos = XERIAL_HEADER_BYTES;
    const blockSizes: number[] = [];
    while (pos < packed.length) {
      const n = packed.readInt32BE(pos);
      const block = packed.subarray(pos + 4, pos + 4 + n);
      blockSizes.push(snappyDecompress(block, 1 << 20).length); // a lone raw block decodes via the fallback
      pos += 4 + n;
    }
    expect(pos).toBe(packed.length);
    expect(blockSizes).toEqual([XERIAL_BLOCK_BYTES, XERIAL_BLOCK_BYTES, XERIAL_BLOCK_BYTES, 4 * 1024]);
  });

  it('writes a bare header for empty input and reads it back as empty', () => {
    const packed = snappyCompress(Buffer.alloc(0));
    expect(packed.length).toBe(XERIAL_HEADER_BYTES);
    expect(snappyDecompress(packed, 0).length).toBe(0);
  });

  it('reads a header repeated mid-stream (concatenated streams)', () => {
    const joined = Buffer.concat([snappyCompress(Buffer.from('alpha ')), snappyCompress(Buffer.from('beta'))]);
    expect(snappyDecompress(joined, 100).toString()).toBe('alpha beta');
  });

  it('reads a raw snappy payload (no xerial magic) as one block', () => {
    const raw = snappyNative.compressSync(Buffer.from('raw snappy from librdkafka'));
    expect(snappyDecompress(raw, 100).toString()).toBe('raw snappy from librdkafka');
  });

  it('ignores 1–3 bytes after the last chunk, as SnappyInputStream does', () => {
    const packed = Buffer.concat([snappyCompress(Buffer.from('tail')), Buffer.from([1, 2, 3])]);
    expect(snappyDecompress(packed, 100).toString()).toBe('tail');
  });

  it('checks a raw block’s declared length before decompressing', () => {
    // Preamble ff ff ff ff 0f = 2^32 − 1 bytes, followed by nothing worth decoding.
    const lying = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x41]);
    expect(expectLogtoolError(() => snappyDecompress(lying, 1 << 20)).message).toMatch(/declares 4294967295 bytes/);
    // Same lie inside xerial framing.
    const framed = Buffer.concat([snappyCompress(Buffer.alloc(0)), Buffer.from([0, 0, 0, lying.length]), lying]);
    expect(expectLogtoolError(() => snappyDecompress(framed, 1 << 20)).message).toMatch(/declares 4294967295 bytes/);
  });

  it('counts earlier chunks against the limit of later ones', () => {
    const data = Buffer.alloc(3 * XERIAL_BLOCK_BYTES, 1);
    const packed = snappyCompress(data);
    expect(expectLogtoolError(() => snappyDecompress(packed, 2 * XERIAL_BLOCK_BYTES + 10)).message).toMatch(/declares 32768 bytes with 10 left/);
  });

  it('rejects a chunk running past the payload and a zero or negative chunk length', () => {
    const packed = snappyCompress(Buffer.from('some data to frame'));
    expectLogtoolError(() => snappyDecompress(packed.subarray(0, packed.length - 2), 100));
    const zero = Buffer.concat([snappyCompress(Buffer.alloc(0)), Buffer.from([0, 0, 0, 0])]);
    expect(expectLogtoolError(() => snappyDecompress(zero, 100)).message).toMatch(/invalid chunk length 0/);
    const negative = Buffer.concat([snappyCompress(Buffer.alloc(0)), Buffer.from([0xff, 0, 0, 0, 0])]);
    expect(expectLogtoolError(() => snappyDecompress(negative, 100)).message).toMatch(/invalid chunk length/);
  });
});

describe('lz4 Kafka frame', () => {
  it('decompresses blocks in place without changing its input, also when a block fails (issue 15)', () => {
    const data = Buffer.from('records of an lz4 batch, '.repeat(6000)); // three 64 KiB blocks
    const frame = lz4Compress(data);
    const copy = Buffer.from(frame);
    const out = lz4Decompress(frame, 1 << 20);
    expect(out.equals(data)).toBe(true);
    expect(frame.equals(copy)).toBe(true);
    // A limit the second block overruns: the first block's size word was restored before the throw.
    expect(() => lz4Decompress(frame, LZ4_KAFKA_BLOCK_BYTES + 10)).toThrow(LogtoolError);
    expect(frame.equals(copy)).toBe(true);
    // One block: the library's buffer is returned as is, and it is not a view of the input.
    const small = lz4Compress(Buffer.from('one block '.repeat(100)));
    const one = lz4Decompress(small, 1 << 20);
    expect(one.toString()).toBe('one block '.repeat(100));
    expect(one.buffer === small.buffer).toBe(false);
  });

  it('writes magic, FLG 0x60, BD 0x40, the header checksum 0x82 and an end mark', () => {
    const packed = lz4Compress(Buffer.from('hello hello hello hello hello hello'));
    expect(packed.subarray(0, 7).toString('hex')).toBe('04224d18604082');
    expect(packed.readUInt32LE(packed.length - 4)).toBe(0);
    expect(lz4Compress(Buffer.alloc(0)).toString('hex')).toBe('04224d18604082' + '00000000');
  });

  it('writes 64 KiB blocks and stores incompressible ones with bit 31', () => {
    const random = Buffer.from(fc.sample(fc.uint8Array({ minLength: 150_000, maxLength: 150_000 }), { numRuns: 1, seed: 42 })[0]!);
    const packed = lz4Compress(random);
    const sizes: number[] = [];
    let pos = 7;
    for (;;) {
      const word = packed.readUInt32LE(pos);
      pos += 4;
      if (word === 0) break;
      expect(word & 0x80000000).not.toBe(0);
      sizes.push(word & 0x7fffffff);
      pos += word & 0x7fffffff;
    }
    expect(sizes).toEqual([LZ4_KAFKA_BLOCK_BYTES, LZ4_KAFKA_BLOCK_BYTES, 150_000 - 2 * LZ4_KAFKA_BLOCK_BYTES]);
    expect(lz4Decompress(packed, random.length).equals(random)).toBe(true);
  });

  /**
   * Walks one LZ4 block's sequences and checks the format's end-of-block rules (the last 5 bytes
   * are literals; the last match starts at least 12 bytes before the end). Decoders sized to the
   * exact block, like lz4-java's in Kafka, can fail on blocks that break them.
   */
  function checkBlockEndRules(block: Buffer, decodedBytes: number): void {
    let ip = 0;
    let op = 0;
    let lastMatchStart = -1;
    let lastMatchEnd = -1;
    for (;;) {
      const token = block[ip++]!;
      let literals = token >>> 4;
      if (literals === 15) for (let x = 255; x === 255; literals += x) x = block[ip++]!;
      ip += literals;
      op += literals;
      if (ip >= block.length) break;
      ip += 2; // match offset
      let match = token & 15;
      if (match === 15) for (let x = 255; x === 255; match += x) x = block[ip++]!;
      lastMatchStart = op;
      op += match + 4;
      lastMatchEnd = op;
    }
    expect(ip).toBe(block.length);
    expect(op).toBe(decodedBytes);
    if (lastMatchStart >= 0) {
      expect(lastMatchStart).toBeLessThanOrEqual(decodedBytes - 12);
      expect(lastMatchEnd).toBeLessThanOrEqual(decodedBytes - 5);
    }
  }

  it('writes blocks that keep LZ4’s end-of-block rules', () => {
    fc.assert(
      fc.property(compressibleData, (data) => {
        const packed = lz4Compress(data);
        let pos = 7;
        let decoded = 0;
        for (;;) {
          const word = packed.readUInt32LE(pos);
          pos += 4;
          if (word === 0) break;
          const n = word & 0x7fffffff;
          const blockBytes = Math.min(LZ4_KAFKA_BLOCK_BYTES, data.length - decoded);
          if (!(word & 0x80000000)) checkBlockEndRules(packed.subarray(pos, pos + n), blockBytes);
          decoded += blockBytes;
          pos += n;
        }
        expect(decoded).toBe(data.length);
      }),
      { numRuns: 40 },
    );
  });

  it('computes the magic-0 header checksum over magic‖FLG‖BD and skips it only when told', () => {
    const data = Buffer.from('legacy magic 0 payload, legacy magic 0 payload');
    const broken = lz4Compress(data, { legacyHeaderChecksum: true });
    expect(broken[6]).toBe((xxh32(broken, 0, 6) >>> 8) & 0xff);
    expect(broken[6]).not.toBe(0x82);
    expect(lz4Decompress(broken, 100, { legacyHeaderChecksum: true }).equals(data)).toBe(true);
    expect(expectLogtoolError(() => lz4Decompress(broken, 100)).message).toMatch(/header checksum/);
  });

  /** Builds a frame by hand with the given FLG/BD and raw-stored blocks (optionally checksummed). */
  function handFrame(flg: number, bd: number, blocks: Buffer[], extra: { contentSize?: bigint; contentChecksum?: boolean } = {}): Buffer {
    const parts: Buffer[] = [];
    const head = Buffer.from([0x04, 0x22, 0x4d, 0x18, flg, bd]);
    const desc = [head];
    if (extra.contentSize !== undefined) {
      const cs = Buffer.alloc(8);
      cs.writeBigUInt64LE(extra.contentSize);
      desc.push(cs);
    }
    const d = Buffer.concat(desc);
    parts.push(d, Buffer.from([(xxh32(d, 4, d.length) >>> 8) & 0xff]));
    for (const b of blocks) {
      const w = Buffer.alloc(4);
      w.writeUInt32LE((b.length | 0x80000000) >>> 0);
      parts.push(w, b);
      if (flg & 0x10) {
        const c = Buffer.alloc(4);
        c.writeUInt32LE(xxh32(b));
        parts.push(c);
      }
    }
    parts.push(Buffer.alloc(4));
    if (extra.contentChecksum) parts.push(Buffer.from([1, 2, 3, 4]));
    return Buffer.concat(parts);
  }

  it('reads frames with content size, block checksums and a content checksum', () => {
    const a = Buffer.from('first block ');
    const b = Buffer.from('second block');
    const frame = handFrame(0x60 | 0x10 | 0x08 | 0x04, 0x70, [a, b], { contentSize: 24n, contentChecksum: true });
    expect(lz4Decompress(frame, 100).toString()).toBe('first block second block');
    const bad = Buffer.from(frame);
    bad[7 + 8 + 4] ^= 1; // first byte of the first block's data: its checksum no longer matches
    expect(expectLogtoolError(() => lz4Decompress(bad, 100)).message).toMatch(/fails its checksum/);
  });

  it('rejects what Kafka rejects: linked blocks, other versions, reserved bits, bad block sizes', () => {
    const block = [Buffer.from('x')];
    expect(expectLogtoolError(() => lz4Decompress(handFrame(0x40, 0x40, block), 10)).message).toMatch(/dependent/);
    expect(expectLogtoolError(() => lz4Decompress(handFrame(0xa0, 0x40, block), 10)).message).toMatch(/version 2/);
    expect(expectLogtoolError(() => lz4Decompress(handFrame(0x61, 0x40, block), 10)).message).toMatch(/reserved/);
    expect(expectLogtoolError(() => lz4Decompress(handFrame(0x60, 0x30, block), 10)).message).toMatch(/block size code 3/);
    expect(expectLogtoolError(() => lz4Decompress(handFrame(0x60, 0x41, block), 10)).message).toMatch(/reserved/);
  });

  it('rejects a block larger than the frame maximum and a stored block over the limit', () => {
    const frame = lz4Compress(Buffer.from('abc'));
    const lying = Buffer.from(frame);
    lying.writeUInt32LE(0x7fffffff, 7);
    expect(expectLogtoolError(() => lz4Decompress(lying, 1 << 20)).message).toMatch(/above the frame's 65536-byte maximum/);
    const stored = handFrame(0x60, 0x70, [Buffer.alloc(5000)]);
    expect(expectLogtoolError(() => lz4Decompress(stored, 4999)).message).toMatch(/limit of 4999/);
  });

  it('rejects a frame without an end mark', () => {
    const frame = lz4Compress(Buffer.from('abcabcabcabc'));
    expect(expectLogtoolError(() => lz4Decompress(frame.subarray(0, frame.length - 4), 100)).message).toMatch(/without an end mark/);
  });

  it('ignores bytes after the end mark, as Kafka does', () => {
    const frame = Buffer.concat([lz4Compress(Buffer.from('done')), Buffer.from('junk')]);
    expect(lz4Decompress(frame, 100).toString()).toBe('done');
  });
});

describe('zstd frames', () => {
  it('reads concatenated frames and an empty payload', () => {
    const joined = Buffer.concat([zstdCompress(Buffer.from('one ')), zstdCompress(Buffer.from('two'))]);
    expect(zstdDecompress(joined, 100).toString()).toBe('one two');
    expect(zstdDecompress(Buffer.alloc(0), 0).length).toBe(0);
  });

  it('refuses a frame whose declared content size exceeds the limit before decoding', () => {
    // Frame header: magic, FHD 0xE0 (8-byte content size, single segment), content size 2^40.
    const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 1, 0, 0]);
    expect(expectLogtoolError(() => zstdDecompress(header, 1 << 20)).message).toMatch(/declares 1099511627776 bytes/);
  });

  it('streams frames without a content size, as Kafka writes them, within the limit', () => {
    const data = Buffer.from('kafka zstd record bytes '.repeat(50_000));
    const frame = zstdStreamLikeKafka(data);
    expect(zstdBinding.getFrameContentSize(frame)).toBeNull();
    expect(zstdDecompress(frame, data.length).equals(data)).toBe(true);
    expect(expectLogtoolError(() => zstdDecompress(frame, data.length - 1)).message).toMatch(/limit of \d+ decompressed bytes/);
    const bomb = zstdStreamLikeKafka(Buffer.alloc(48 << 20));
    expect(expectLogtoolError(() => zstdDecompress(bomb, 1 << 20)).message).toMatch(/limit of 1048576/);
  });

  it('caps the decoder window by the limit (never below 8 MiB)', () => {
    const data = Buffer.from('small batch, huge window');
    const wide = zstdStreamLikeKafka(data, 27); // a 128 MiB window declared for 24 bytes
    expect(expectLogtoolError(() => zstdDecompress(wide, 1 << 20)).message).toMatch(/zstd/);
    expect(zstdDecompress(wide, 256 << 20).equals(data)).toBe(true);
    expect(zstdDecompress(zstdStreamLikeKafka(data, 23), 100).equals(data)).toBe(true);
  });

  it('reports truncation', () => {
    const frame = zstdCompress(Buffer.from('a zstd frame that will be cut short '.repeat(20)));
    expect(expectLogtoolError(() => zstdDecompress(frame.subarray(0, frame.length - 5), 10_000)).message).toMatch(/zstd/);
  });
});
