/**
 * Legacy v0/v1 message decoding (kafka-format.md §3): plain messages, compressed wrappers with
 * each legacy codec and framing quirk, Kafka's offset and timestamp rules, the errors and limits,
 * a cross-check against kafkajs's own MessageSet encoder and decoder, and a legacy segment read
 * through the public Log API.
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CorruptDataError, LogtoolError } from '../../../src/engine/errors.js';
import { crc32 } from '../../../src/engine/format/crc32c.js';
import { lz4Compress } from '../../../src/engine/format/codecs/lz4.js';
import { gzipCompress } from '../../../src/engine/format/codecs/gzip.js';
import { decodeLegacyEntry } from '../../../src/engine/format/legacy.js';
import { writeInt64, type LogRecord } from '../../../src/engine/format/record-batch.js';
import { Log } from '../../../src/api.js';
import { compressLegacy, legacyMessage, legacyWrapper, type LegacyMessageInput } from './legacy-builder.js';

const require = createRequire(import.meta.url);

const decode = (entry: Buffer, opts = {}): LogRecord[] => decodeLegacyEntry(entry, 0, entry.length, opts);
const b = (s: string): Buffer => Buffer.from(s);
const view = (rs: LogRecord[]) => rs.map((r) => ({ offset: r.offset, timestamp: r.timestamp, key: r.key?.toString() ?? null, value: r.value?.toString() ?? null }));

function corruptError(fn: () => unknown): CorruptDataError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CorruptDataError);
    return e as CorruptDataError;
  }
  throw new Error('expected a CorruptDataError');
}

/** Recomputes the CRC-32 of an entry built by hand or patched. */
function reseal(entry: Buffer): Buffer {
  entry.writeUInt32BE(crc32(entry, 16, entry.length), 12);
  return entry;
}

describe('plain legacy messages', () => {
  it('v0: offset, no timestamp (−1), key and value, no headers', () => {
    const rs = decode(legacyMessage({ offset: 42, magic: 0, key: b('k'), value: b('v') }));
    expect(view(rs)).toEqual([{ offset: 42, timestamp: -1, key: 'k', value: 'v' }]);
    expect(rs[0]!.headers).toEqual([]);
  });

  it('v1: the message timestamp', () => {
    const rs = decode(legacyMessage({ offset: 7, magic: 1, timestamp: 1_500_000_000_123, key: null, value: b('') }));
    expect(view(rs)).toEqual([{ offset: 7, timestamp: 1_500_000_000_123, key: null, value: '' }]);
  });

  it('null value (tombstone) and null key', () => {
    expect(view(decode(legacyMessage({ offset: 1, magic: 0, key: null, value: null })))).toEqual([{ offset: 1, timestamp: -1, key: null, value: null }]);
  });

  it('round-trips arbitrary keys and values in both magics', () => {
    const bytes = fc.option(fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)), { nil: null });
    fc.assert(
      fc.property(fc.constantFrom<0 | 1>(0, 1), fc.integer({ min: 0, max: 2 ** 50 }), fc.integer({ min: -1, max: 2 ** 45 }), bytes, bytes, (magic, offset, ts, key, value) => {
        const [r] = decode(legacyMessage({ offset, magic, timestamp: ts, key, value }));
        expect(r!.offset).toBe(offset);
        expect(r!.timestamp).toBe(magic === 0 ? -1 : ts);
        expect(r!.key === null ? null : Buffer.compare(r!.key, key!)).toBe(key === null ? null : 0);
        expect(r!.value === null ? null : Buffer.compare(r!.value, value!)).toBe(value === null ? null : 0);
      }),
      { numRuns: 200 },
    );
  });

  it('reads any negative length as null and ignores bytes after the value, as Kafka does', () => {
    const m = legacyMessage({ offset: 3, magic: 0, key: b('kk'), value: b('vv') });
    m.writeInt32BE(-2, 18); // key length −2 (the key bytes then belong to nothing)
    const shifted = Buffer.concat([m.subarray(0, 22), m.subarray(24)]); // drop the key bytes
    shifted.writeInt32BE(shifted.length - 12, 8);
    expect(view(decode(reseal(shifted)))).toEqual([{ offset: 3, timestamp: -1, key: null, value: 'vv' }]);
    const padded = Buffer.concat([legacyMessage({ offset: 4, magic: 1, timestamp: 5, key: null, value: b('x') }), Buffer.from([9, 9, 9])]);
    padded.writeInt32BE(padded.length - 12, 8);
    expect(view(decode(reseal(padded)))).toEqual([{ offset: 4, timestamp: 5, key: null, value: 'x' }]);
  });
});

const inner = (offsets: number[], magic: 0 | 1, timestamps?: number[]): LegacyMessageInput[] =>
  offsets.map((o, i) => ({ offset: o, magic, timestamp: timestamps?.[i] ?? 1000 + i, key: b(`key-${i}`), value: b(`value-${i}`) }));

describe.each([
  ['gzip', 1],
  ['snappy', 2],
  ['lz4', 3],
] as const)('%s compressed wrappers', (_name, codec) => {
  it('v0: inner offsets are absolute; no timestamps', () => {
    const entry = legacyWrapper({ magic: 0, codec, wrapperOffset: 104, inner: inner([100, 101, 102, 103, 104], 0) });
    expect(view(decode(entry))).toEqual([0, 1, 2, 3, 4].map((i) => ({ offset: 100 + i, timestamp: -1, key: `key-${i}`, value: `value-${i}` })));
  });

  it('v1: inner offsets are relative to the wrapper (= absolute offset of the last inner message)', () => {
    const entry = legacyWrapper({ magic: 1, codec, wrapperOffset: 104, wrapperTimestamp: 1002, inner: inner([0, 1, 2, 3, 4], 1) });
    expect(view(decode(entry)).map((r) => [r.offset, r.timestamp])).toEqual([
      [100, 1000],
      [101, 1001],
      [102, 1002],
      [103, 1003],
      [104, 1004],
    ]);
  });

  it('v1: compacted wrappers keep gaps (absolute = wrapper − lastInner + inner)', () => {
    const entry = legacyWrapper({ magic: 1, codec, wrapperOffset: 1005, inner: inner([0, 2, 5], 1) });
    expect(decode(entry).map((r) => r.offset)).toEqual([1000, 1002, 1005]);
  });

  it('v1: a wrapper offset of 0 means base 0 (librdkafka quirk)', () => {
    const entry = legacyWrapper({ magic: 1, codec, wrapperOffset: 0, inner: inner([0, 1, 2], 1) });
    expect(decode(entry).map((r) => r.offset)).toEqual([0, 1, 2]);
  });

  it('v1: a LogAppendTime wrapper’s timestamp replaces the inner ones', () => {
    const entry = legacyWrapper({ magic: 1, codec, wrapperOffset: 9, wrapperTimestamp: 777_000, logAppendTime: true, inner: inner([0, 1], 1, [5, 6]) });
    expect(decode(entry).map((r) => r.timestamp)).toEqual([777_000, 777_000]);
  });

  it('inner messages must have the wrapper’s magic and must not be compressed', () => {
    const mixed = legacyWrapper({ magic: 1, codec, wrapperOffset: 1, inner: [...inner([0], 1), { offset: 1, magic: 0, key: null, value: b('v0') }] });
    expect(corruptError(() => decode(mixed)).message).toMatch(/inner message 1 .*magic 0 does not match the wrapper's magic 1/);
    const innerWrapper: LegacyMessageInput = { offset: 5, magic: 0, attributes: codec, key: null, value: compressLegacy(codec, 0, legacyMessage(inner([5], 0)[0]!)) };
    const nested = legacyWrapper({ magic: 0, codec, wrapperOffset: 5, inner: [innerWrapper] });
    expect(corruptError(() => decode(nested)).message).toMatch(/nested compression/);
  });

  it('inner CRC-32s are verified', () => {
    const innerSet = Buffer.concat(inner([0, 1], 1).map(legacyMessage));
    innerSet[innerSet.length - 1] ^= 0xff; // last byte of the second inner value
    const entry = legacyWrapper({ magic: 1, codec, wrapperOffset: 1, inner: [], payload: compressLegacy(codec, 1, innerSet) });
    const e = corruptError(() => decode(entry, { file: 'seg.log', filePosition: 4096 }));
    expect(e.message).toMatch(/^v1 message at offset 1: inner message 1 \(decompressed byte \d+\): CRC-32 mismatch/);
    expect(e.file).toBe('seg.log');
    expect(e.position).toBe(4096);
  });

  it('an incomplete inner entry at the end of the set ends it, as in Kafka', () => {
    const innerSet = Buffer.concat([...inner([0, 1], 1).map(legacyMessage), legacyMessage(inner([2], 1)[0]!).subarray(0, 20)]);
    const entry = legacyWrapper({ magic: 1, codec, wrapperOffset: 11, inner: [], payload: compressLegacy(codec, 1, innerSet) });
    expect(decode(entry).map((r) => r.offset)).toEqual([10, 11]);
  });

  it('refuses to decompress past maxDecompressedBytes, naming the message', () => {
    const entry = legacyWrapper({ magic: 1, codec, wrapperOffset: 50, inner: inner([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 1) });
    const e = corruptError(() => decode(entry, { maxDecompressedBytes: 100 }));
    expect(e.message).toMatch(/^v1 message at offset 50: .* payload cannot be decompressed: .*limit of 100 decompressed bytes/);
  });
});

describe('lz4 legacy header checksum (KAFKA-3160)', () => {
  it('magic 0 accepts the broken checksum (and does not verify it at all)', () => {
    const messages = inner([0, 1], 0);
    const broken = legacyWrapper({ magic: 0, codec: 3, wrapperOffset: 1, inner: messages });
    expect(decode(broken).map((r) => r.value?.toString())).toEqual(['value-0', 'value-1']);
    const correct = legacyWrapper({ magic: 0, codec: 3, wrapperOffset: 1, inner: [], payload: lz4Compress(Buffer.concat(messages.map(legacyMessage))) });
    expect(decode(correct)).toHaveLength(2);
  });

  it('magic 1 verifies the correct checksum and rejects the broken one', () => {
    const messages = inner([0, 1], 1);
    const broken = legacyWrapper({ magic: 1, codec: 3, wrapperOffset: 1, inner: [], payload: lz4Compress(Buffer.concat(messages.map(legacyMessage)), { legacyHeaderChecksum: true }) });
    expect(corruptError(() => decode(broken)).message).toMatch(/lz4 payload cannot be decompressed: lz4: header checksum/);
  });
});

describe('invalid legacy entries', () => {
  it('zstd and unknown codecs, a null wrapper value, an empty wrapper', () => {
    const zstd = legacyMessage({ offset: 1, magic: 1, attributes: 4, timestamp: 0, key: null, value: b('x') });
    expect(corruptError(() => decode(zstd)).message).toMatch(/zstd compression is not allowed before magic 2/);
    const unknown = legacyMessage({ offset: 1, magic: 0, attributes: 6, key: null, value: b('x') });
    expect(corruptError(() => decode(unknown)).message).toMatch(/unknown compression type id 6/);
    const nullValue = legacyMessage({ offset: 1, magic: 0, attributes: 1, key: null, value: null });
    expect(corruptError(() => decode(nullValue)).message).toMatch(/null value/);
    const empty = legacyWrapper({ magic: 1, codec: 1, wrapperOffset: 1, inner: [] });
    expect(corruptError(() => decode(empty)).message).toMatch(/holds no inner messages/);
  });

  it('a v1 wrapper offset below the last inner relative offset (and not 0)', () => {
    const entry = legacyWrapper({ magic: 1, codec: 1, wrapperOffset: 2, inner: inner([0, 1, 2, 3], 1) });
    expect(corruptError(() => decode(entry)).message).toMatch(/wrapper offset is below the last inner relative offset 3/);
  });

  it('an inner size below 14 bytes', () => {
    const bad = Buffer.alloc(12 + 14);
    bad.writeInt32BE(13, 8);
    const entry = legacyWrapper({ magic: 0, codec: 1, wrapperOffset: 0, inner: [], payload: gzipCompress(bad) });
    expect(corruptError(() => decode(entry)).message).toMatch(/inner message 0 \(decompressed byte 0\): size 13 is below the minimum 14/);
  });

  it('a v1 message shorter than the v1 overhead, and lengths running past the message', () => {
    const short = Buffer.alloc(12 + 16);
    writeInt64(short, 0, 9);
    short.writeInt32BE(16, 8);
    short[16] = 1;
    expect(corruptError(() => decode(reseal(short))).message).toMatch(/v1 message of 16 bytes is below the 22-byte minimum/);
    const long = legacyMessage({ offset: 9, magic: 0, key: b('abc'), value: b('def') });
    long.writeInt32BE(100, 25); // value length, after the 3-byte key at 22
    expect(corruptError(() => decode(reseal(long))).message).toMatch(/^v0 message at offset 9: value of 100 bytes runs past the message/);
  });

  it('arbitrary corruption of a wrapper never escapes as anything but a LogtoolError', () => {
    const entries = [1, 2, 3].flatMap((codec) => [0, 1].map((magic) => legacyWrapper({ magic: magic as 0 | 1, codec: codec as 1 | 2 | 3, wrapperOffset: 20, inner: inner([0, 1, 2], magic as 0 | 1) })));
    fc.assert(
      fc.property(fc.constantFrom(...entries), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), (entry, flips) => {
        const bad = Buffer.from(entry);
        for (const [at, v] of flips) bad[16 + (at % (bad.length - 16))] = v; // keep offset and size intact
        try {
          decode(bad, { maxDecompressedBytes: 4096 });
        } catch (e) {
          if (!(e instanceof LogtoolError)) throw new Error(`non-LogtoolError escaped: ${String(e)}`);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('against kafkajs’s MessageSet encoder and decoder', () => {
  const kafkajs: { CompressionCodecs: Record<number, () => { compress(e: { buffer: Buffer }): Promise<Buffer> }> } = require('kafkajs');
  kafkajs.CompressionCodecs[2] = require('kafkajs-snappy');
  const MessageSet: (args: Record<string, unknown>) => { buffer: Buffer } = require('kafkajs/src/protocol/messageSet');
  const messageSetDecoder: (decoder: unknown, size: number) => Promise<{ offset: string; key: Buffer | null; value: Buffer | null; timestamp?: string }[]> = require('kafkajs/src/protocol/messageSet/decoder');
  const KafkajsDecoder: new (buf: Buffer) => unknown = require('kafkajs/src/protocol/decoder');

  /** A compressed set the way kafkajs's Produce v0–v2 requests build it, placed at a broker offset. */
  async function kafkajsCompressedSet(version: 0 | 1, compression: 1 | 2, n: number, lastOffset: number): Promise<Buffer> {
    const entries = Array.from({ length: n }, (_, i) => ({ key: `key-${i}`, value: `value-${i}`, timestamp: 1_600_000_000_000 + i }));
    const innerSet = MessageSet({ messageVersion: version, compression, entries });
    const compressed = await kafkajs.CompressionCodecs[compression]!().compress(innerSet);
    const wrapper = Buffer.from(MessageSet({ messageVersion: version, entries: [{ compression, timestamp: entries[n - 1]!.timestamp, value: compressed }] }).buffer);
    writeInt64(wrapper, 0, lastOffset); // the broker assigns the wrapper offset; the CRC does not cover it
    return wrapper;
  }

  it.each([
    [0, 1],
    [0, 2],
    [1, 1],
    [1, 2],
  ] as const)('magic %i, codec %i: same records in logtool and kafkajs', async (version, compression) => {
    const wrapper = await kafkajsCompressedSet(version, compression, 4, 203);
    const ours = decode(wrapper);
    const theirs = await messageSetDecoder(new KafkajsDecoder(wrapper), wrapper.length);
    expect(ours.map((r) => [r.key?.toString(), r.value?.toString()])).toEqual(theirs.map((m) => [m.key?.toString(), m.value?.toString()]));
    expect(ours.map((r) => r.offset)).toEqual(theirs.map((m) => Number(m.offset)));
    // kafkajs numbers v0 inner messages 0…n−1 (they would be absolute in a broker-written v0 set).
    expect(ours.map((r) => r.offset)).toEqual(version === 1 ? [200, 201, 202, 203] : [0, 1, 2, 3]);
    if (version === 1) expect(ours.map((r) => r.timestamp)).toEqual(theirs.map((m) => Number(m.timestamp)));
  });
});

describe('a legacy segment read through Log', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'logtool-legacy-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('returns every record of plain and compressed v0/v1 entries, from any offset', async () => {
    const dir = path.join(root, 'old-topic-0');
    mkdirSync(dir);
    const segment = Buffer.concat([
      legacyMessage({ offset: 0, magic: 0, key: b('a'), value: b('plain v0') }),
      legacyWrapper({ magic: 0, codec: 3, wrapperOffset: 3, inner: inner([1, 2, 3], 0) }),
      legacyMessage({ offset: 4, magic: 1, timestamp: 2000, key: null, value: b('plain v1') }),
      legacyWrapper({ magic: 1, codec: 2, wrapperOffset: 7, wrapperTimestamp: 3000, logAppendTime: true, inner: inner([0, 1, 2], 1) }),
      legacyWrapper({ magic: 1, codec: 1, wrapperOffset: 9, inner: inner([0, 1], 1, [4000, 4001]) }),
    ]);
    writeFileSync(path.join(dir, '00000000000000000000.log'), segment);
    const log = Log.open(dir, { readOnly: true });
    try {
      const all = [...log.read()];
      expect(all.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(all.map((r) => r.timestamp)).toEqual([-1, -1, -1, -1, 2000, 3000, 3000, 3000, 4000, 4001]);
      expect(all[0]!.value?.toString()).toBe('plain v0');
      // From the middle of a compressed wrapper: the wrapper is found by its last offset.
      expect([...log.read({ fromOffset: 6 })].map((r) => r.offset)).toEqual([6, 7, 8, 9]);
    } finally {
      await log.close();
    }
  });
});
