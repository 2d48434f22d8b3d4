/**
 * Cross-checks against independent implementations: kafkajs 2.2.4's own RecordBatch encoder and
 * decoder (with kafkajs-snappy, and lz4js / fzstd plugged in as its LZ4 / ZSTD codecs), and the
 * pure-JS lz4js and fzstd decoders on raw payloads. Batches logtool writes must decode there, and
 * batches those libraries write must decode in logtool.
 */
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LogtoolError } from '../../../src/engine/errors.js';
import { codecFor, CompressionType, compressionName } from '../../../src/engine/format/compression.js';
import '../../../src/engine/format/codecs/index.js';
import { lz4Decompress } from '../../../src/engine/format/codecs/lz4.js';
import { snappyDecompress } from '../../../src/engine/format/codecs/snappy.js';
import {
  decodeRecords,
  encodeBatch,
  isCrcValid,
  readBatchHeader,
  type LogRecord,
  type RecordInput,
} from '../../../src/engine/format/record-batch.js';

const require = createRequire(import.meta.url);

interface KafkajsCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}
interface KafkajsRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | Buffer[]>;
}
const kafkajs: { CompressionCodecs: Record<number, () => KafkajsCodec>; CompressionTypes: Record<string, number> } = require('kafkajs');
const kafkajsSnappy: () => KafkajsCodec = require('kafkajs-snappy');
const { RecordBatch: kafkajsRecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
  RecordBatch(args: Record<string, unknown>): Promise<{ buffer: Buffer }>;
};
const kafkajsRecordBatchDecoder: (decoder: unknown) => Promise<{ records: KafkajsRecord[]; lastOffsetDelta: number }> = require('kafkajs/src/protocol/recordBatch/v0/decoder');
const kafkajsRecord: (args: Record<string, unknown>) => unknown = require('kafkajs/src/protocol/recordBatch/record/v0');
const KafkajsDecoder: new (buf: Buffer) => unknown = require('kafkajs/src/protocol/decoder');
const lz4js: {
  decompress(src: Uint8Array, maxSize?: number): Uint8Array;
  compress(src: Uint8Array): Uint8Array;
  compressBlock(src: Uint8Array, dst: Uint8Array, sIndex: number, sLength: number, hashTable: Uint32Array): number;
  compressBound(n: number): number;
} = require('lz4js');
const lz4jsXxh32: { hash(seed: number, src: Uint8Array, index: number, len: number): number } = require('lz4js/xxh32.js');
const fzstd: { decompress(data: Uint8Array): Uint8Array } = require('fzstd');

/**
 * An LZ4 frame in Kafka's shape built only from lz4js parts (its block compressor with a fresh
 * hash table per 64 KiB block, so blocks are independent, and its xxh32 for the header checksum).
 */
function lz4jsKafkaFrame(data: Uint8Array): Buffer {
  const parts: Buffer[] = [];
  const head = Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0]);
  head[6] = (lz4jsXxh32.hash(0, head, 4, 2) >>> 8) & 0xff;
  parts.push(head);
  for (let p = 0; p < data.length; p += 65536) {
    const chunk = data.subarray(p, Math.min(p + 65536, data.length));
    const dst = new Uint8Array(lz4js.compressBound(chunk.length));
    const n = lz4js.compressBlock(chunk, dst, 0, chunk.length, new Uint32Array(1 << 16));
    const size = Buffer.alloc(4);
    if (n === 0 || n >= chunk.length) {
      size.writeUInt32LE((chunk.length | 0x80000000) >>> 0);
      parts.push(size, Buffer.from(chunk));
    } else {
      size.writeUInt32LE(n);
      parts.push(size, Buffer.from(dst.subarray(0, n)));
    }
  }
  parts.push(Buffer.alloc(4));
  return Buffer.concat(parts);
}

kafkajs.CompressionCodecs[kafkajs.CompressionTypes.Snappy!] = kafkajsSnappy;
kafkajs.CompressionCodecs[kafkajs.CompressionTypes.LZ4!] = () => ({
  compress: async (encoder) => lz4jsKafkaFrame(encoder.buffer),
  decompress: async (buffer) => Buffer.from(lz4js.decompress(buffer)),
});
kafkajs.CompressionCodecs[kafkajs.CompressionTypes.ZSTD!] = () => ({
  compress: async () => {
    throw new Error('no independent zstd encoder installed (fzstd only decompresses)');
  },
  decompress: async (buffer) => Buffer.from(fzstd.decompress(buffer)),
});

const BASE_TIMESTAMP = 1_700_000_000_000;

/** Byte equality; vitest's deep equality walks buffers element by element, far too slowly here. */
function expectBytes(actual: Uint8Array, expected: Uint8Array): void {
  expect(Buffer.compare(Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength), Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength))).toBe(0);
}

/** Records kafkajs can represent too: unique header keys, non-null header values. */
const recordsArb = fc.array(
  fc.record({
    key: fc.option(fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)), { nil: null }),
    value: fc.option(
      fc.oneof(
        fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
        fc.string({ maxLength: 200 }).map((s) => Buffer.from(s.repeat(5))),
      ),
      { nil: null },
    ),
    // Prefixed so that no key looks like an array index (kafkajs returns headers as an object,
    // whose integer-like keys would be reordered).
    headers: fc.uniqueArray(fc.record({ key: fc.string({ maxLength: 12 }).map((k) => `h-${k}`), value: fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)) }), {
      selector: (h) => h.key,
      maxLength: 3,
    }),
    timestampDelta: fc.integer({ min: 0, max: 100_000 }),
  }),
  { minLength: 1, maxLength: 20 },
);
type Rec = { key: Buffer | null; value: Buffer | null; headers: { key: string; value: Buffer }[]; timestampDelta: number };

function expectSameRecords(ours: LogRecord[], theirs: KafkajsRecord[], input: Rec[], baseOffset: number): void {
  expect(theirs.length).toBe(input.length);
  expect(ours.length).toBe(input.length);
  input.forEach((r, i) => {
    const t = theirs[i]!;
    const o = ours[i]!;
    expect(Number(t.offset)).toBe(baseOffset + i);
    expect(o.offset).toBe(baseOffset + i);
    expect(Number(t.timestamp)).toBe(BASE_TIMESTAMP + r.timestampDelta);
    expect(o.timestamp).toBe(BASE_TIMESTAMP + r.timestampDelta);
    expect(t.key === null ? null : Buffer.from(t.key)).toEqual(r.key);
    expect(o.key === null ? null : Buffer.from(o.key)).toEqual(r.key);
    expect(t.value === null ? null : Buffer.from(t.value)).toEqual(r.value);
    expect(o.value === null ? null : Buffer.from(o.value)).toEqual(r.value);
    expect(Object.keys(t.headers)).toEqual(r.headers.map((h) => h.key));
    for (const h of r.headers) expect(Buffer.from(t.headers[h.key] as Buffer)).toEqual(h.value);
    expect(o.headers.map((h) => ({ key: h.key, value: h.value && Buffer.from(h.value) }))).toEqual(r.headers);
  });
}

const batchCodecs = [CompressionType.none, CompressionType.gzip, CompressionType.snappy, CompressionType.lz4, CompressionType.zstd] as const;

describe.each(batchCodecs.map((id) => [compressionName(id), id] as const))('%s batches against kafkajs', (_name, compression) => {
  it('logtool-written batches decode in kafkajs', async () => {
    await fc.assert(
      fc.asyncProperty(recordsArb, fc.integer({ min: 0, max: 2 ** 40 }), async (recs, baseOffset) => {
        const input: RecordInput[] = recs.map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: BASE_TIMESTAMP + r.timestampDelta }));
        const batch = encodeBatch(input, { baseOffset, compression });
        const theirs = await kafkajsRecordBatchDecoder(new KafkajsDecoder(batch));
        expect(theirs.lastOffsetDelta).toBe(recs.length - 1);
        const h = readBatchHeader(batch, 0);
        expect(isCrcValid(batch, 0, h)).toBe(true);
        expectSameRecords(decodeRecords(batch, 0, h), theirs.records, recs, baseOffset);
      }),
      { numRuns: 25 },
    );
  });

  it.skipIf(compression === CompressionType.zstd)('kafkajs-written batches decode in logtool', async () => {
    await fc.assert(
      fc.asyncProperty(recordsArb, fc.integer({ min: 0, max: 2 ** 40 }), async (recs, baseOffset) => {
        const batch = (
          await kafkajsRecordBatch({
            compression,
            firstOffset: baseOffset,
            firstTimestamp: BASE_TIMESTAMP,
            maxTimestamp: BASE_TIMESTAMP + Math.max(...recs.map((r) => r.timestampDelta)),
            lastOffsetDelta: recs.length - 1,
            records: recs.map((r, i) =>
              kafkajsRecord({
                offsetDelta: i,
                timestampDelta: r.timestampDelta,
                key: r.key,
                value: r.value,
                headers: Object.fromEntries(r.headers.map((x) => [x.key, x.value])),
              }),
            ),
          })
        ).buffer;
        const h = readBatchHeader(batch, 0);
        expect(h.baseOffset).toBe(baseOffset);
        expect(h.attributes & 7).toBe(compression);
        expect(isCrcValid(batch, 0, h)).toBe(true);
        const theirs = await kafkajsRecordBatchDecoder(new KafkajsDecoder(batch));
        expectSameRecords(decodeRecords(batch, 0, h), theirs.records, recs, baseOffset);
      }),
      { numRuns: 25 },
    );
  });
});

const payloadArb = fc.oneof(
  fc.uint8Array({ maxLength: 5000 }),
  fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 300_000 })).map(([pattern, n]) => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = pattern[i % pattern.length]!;
    return out;
  }),
);

describe('raw payloads against independent codecs', () => {
  it('lz4: logtool frames decode in lz4js, lz4js-built Kafka frames decode in logtool', () => {
    fc.assert(
      fc.property(payloadArb, (data) => {
        const ours = codecFor(CompressionType.lz4)!.compress(Buffer.from(data));
        const theirs = lz4js.decompress(ours, data.length + 16);
        expectBytes(theirs.subarray(0, data.length), data);
        expect(theirs.length).toBe(data.length);
        expectBytes(lz4Decompress(lz4jsKafkaFrame(data), data.length), data);
      }),
      { numRuns: 60 },
    );
  });

  it('lz4: lz4js’s own frames (linked blocks, no independence flag) are refused as Kafka refuses them', () => {
    const frame = Buffer.from(lz4js.compress(Buffer.from('lz4js default frame '.repeat(10))));
    expect(() => lz4Decompress(frame, 1000)).toThrow(/dependent \(linked\) blocks/);
  });

  it('zstd: logtool frames decode in fzstd', () => {
    fc.assert(
      fc.property(payloadArb, (data) => {
        const ours = codecFor(CompressionType.zstd)!.compress(Buffer.from(data));
        expectBytes(fzstd.decompress(ours), data);
      }),
      { numRuns: 60 },
    );
  });

  it('snappy: logtool xerial streams decode in kafkajs-snappy; its raw snappyjs output decodes in logtool', async () => {
    const theirCodec = kafkajsSnappy();
    await fc.assert(
      fc.asyncProperty(payloadArb, async (data) => {
        const buf = Buffer.from(data);
        const ours = codecFor(CompressionType.snappy)!.compress(buf);
        expectBytes(await theirCodec.decompress(ours), buf);
        const theirs = await theirCodec.compress({ buffer: buf });
        expectBytes(snappyDecompress(Buffer.from(theirs), buf.length), buf);
      }),
      { numRuns: 40 },
    );
  });

  it('gzip: logtool streams decode in kafkajs’s gzip codec and back', async () => {
    const gzip = kafkajs.CompressionCodecs[kafkajs.CompressionTypes.GZIP!]!();
    await fc.assert(
      fc.asyncProperty(payloadArb, async (data) => {
        const buf = Buffer.from(data);
        expectBytes(await gzip.decompress(codecFor(CompressionType.gzip)!.compress(buf)), buf);
        expectBytes(codecFor(CompressionType.gzip)!.decompress(await gzip.compress({ buffer: buf }), buf.length), buf);
      }),
      { numRuns: 30 },
    );
  });

  it('an lz4js-decoded stream that lies about its length never gets past logtool’s limit', () => {
    const frame = lz4jsKafkaFrame(new Uint8Array(200_000));
    expect(() => lz4Decompress(frame, 100_000)).toThrow(LogtoolError);
  });
});
