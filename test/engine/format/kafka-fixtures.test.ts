/**
 * Every Kafka-written fixture file (batches/, client-encoded/, mixed/, legacy/) decodes through
 * the engine's EntryScanner with CRCs verified, agrees with an independent byte walk (CRCs
 * recomputed with kafkajs's CRC-32C and zlib's CRC-32), and matches what the source repositories'
 * own tests assert about it (expect_from_test in cases.json).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CorruptDataError } from '../../../src/engine/errors.js';
import { EntryScanner, type ScanEnd } from '../../../src/engine/segment/file-records.js';
import { decodeEntryRecords } from '../../../src/engine/format/entry-records.js';
import { zstdDecompress } from '../../../src/engine/format/codecs/zstd.js';
import { compressionNames } from '../../../src/engine/format/compression.js';
import { decodeRecords, readBatchHeader, readInt64, type BatchHeader, type LogRecord } from '../../../src/engine/format/record-batch.js';
import { realIO } from '../../../src/engine/io.js';
import { fixturePath, haveFixtures, loadCases, type FixtureCase } from './kafka-corpus.js';

const require = createRequire(import.meta.url);
const kafkajsCrc32C: (b: Buffer) => number = require('kafkajs/src/protocol/recordBatch/crc32C');

import { requireFixtures } from '../../helpers/fixtures.js';
requireFixtures(import.meta.url);

interface DecodedEntry {
  position: number;
  magic: number;
  compression: number;
  header: BatchHeader | undefined;
  /** Stored CRC (CRC-32C for v2, CRC-32 for legacy). */
  crc: number;
  records: LogRecord[];
}

/** Copies a record out of the scanner's reusable buffer. */
function copyRecord(r: LogRecord): LogRecord {
  const copy = (b: Buffer | null) => (b === null ? null : Buffer.from(b));
  return { ...r, key: copy(r.key), value: copy(r.value), headers: r.headers.map((h) => ({ key: h.key, value: copy(h.value) })) };
}

function scanFixture(file: string): { entries: DecodedEntry[]; end: ScanEnd; validBytes: number } {
  const scanner = new EntryScanner({ io: realIO, path: file, verifyCrc: true });
  const entries: DecodedEntry[] = [];
  for (const e of scanner.entries()) {
    entries.push({
      position: e.position,
      magic: e.magic,
      compression: e.compression,
      header: e.header && { ...e.header },
      crc: e.buf.readUInt32BE(e.bufPos + (e.header ? 17 : 12)),
      records: decodeEntryRecords(e, { file }).map(copyRecord),
    });
  }
  return { entries, end: scanner.end, validBytes: scanner.validBytes };
}

/** The layout walk of kafka-format.md §4, independent of the engine: offset(8), size(4), magic at 16. */
function walkFixture(buf: Buffer): { entries: { position: number; magic: number; crcOk: boolean; attributes: number; recordsCount: number }[]; trailingBytes: number } {
  const entries = [];
  let pos = 0;
  while (buf.length - pos >= 18) {
    const size = buf.readInt32BE(pos + 8) + 12;
    if (size < 26 || pos + size > buf.length) break;
    const magic = buf.readInt8(pos + 16);
    if (magic === 2) {
      entries.push({
        position: pos,
        magic,
        crcOk: kafkajsCrc32C(buf.subarray(pos + 21, pos + size)) === buf.readUInt32BE(pos + 17),
        attributes: buf.readInt16BE(pos + 21),
        recordsCount: buf.readInt32BE(pos + 57),
      });
    } else {
      entries.push({ position: pos, magic, crcOk: zlibCrc32(buf.subarray(pos + 16, pos + size)) === buf.readUInt32BE(pos + 12), attributes: buf[pos + 17]!, recordsCount: 0 });
    }
    pos += size;
  }
  return { entries, trailingBytes: buf.length - pos };
}

const str = (b: Buffer | null): string | null => (b === null ? null : b.toString('utf8'));

/** "'x' * 100" in the rskafka expectations is Rust for 100 × 'x'. */
function expandedText(s: string | null | undefined): string | null | undefined {
  const m = typeof s === 'string' ? /^'(.)' \* (\d+)$/.exec(s) : null;
  return m ? m[1]!.repeat(Number(m[2])) : s;
}

/** Header pairs from either shape the sources use: [[k, v], …] or {k: v | [v…]}. */
function headerPairs(h: unknown): [string, string][] {
  if (Array.isArray(h)) return h as [string, string][];
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries((h ?? {}) as Record<string, string | string[]>)) for (const x of Array.isArray(v) ? v : [v]) out.push([k, x]);
  return out;
}
const recordHeaderPairs = (r: LogRecord): [string, string | null][] => r.headers.map((h) => [h.key, str(h.value)]);

/**
 * Expected values that cases.json defers to the kafkajs spec files ("see that file"), copied from
 * tulios/kafkajs src/protocol/requests/fetch/v0/response.spec.js, v2/response.spec.js and
 * v4/response.spec.js ('response with 0.10 format'). CRCs are the specs' signed int32 values.
 */
const kafkajsLegacySpecs: Record<string, { offset: number; timestamp?: number; key: string; value: string; crc: number }[]> = {
  'legacy/kafkajs-fetch-v0-legacy.bin': [{ offset: 0, key: 'key-0', value: 'some-value-0', crc: 120234579 }],
  'legacy/kafkajs-fetch-v0_gzip-legacy.bin': [
    { offset: 0, key: 'key-0', value: 'some-value-0', crc: 120234579 },
    { offset: 1, key: 'key-1', value: 'some-value-1', crc: -141862522 },
    { offset: 2, key: 'key-2', value: 'some-value-2', crc: 1025004472 },
  ],
  'legacy/kafkajs-fetch-v2-legacy.bin': [
    { offset: 0, timestamp: 1509827715172, key: 'key-0', value: 'some-value-0', crc: -815808405 },
    { offset: 1, timestamp: 1509827715173, key: 'key-1', value: 'some-value-1', crc: -656171735 },
    { offset: 2, timestamp: 1509827715173, key: 'key-2', value: 'some-value-2', crc: 309368599 },
  ],
  // A gzip v1 wrapper at offset 2: the spec lists the inner messages at absolute offsets 0–2.
  'legacy/kafkajs-fetch-v2_gzip-legacy.bin': [
    { offset: 0, timestamp: 1509827715533, key: 'key-0', value: 'some-value-0', crc: -822662985 },
    { offset: 1, timestamp: 1509827715534, key: 'key-1', value: 'some-value-1', crc: -872333670 },
    { offset: 2, timestamp: 1509827715534, key: 'key-2', value: 'some-value-2', crc: 110245028 },
  ],
  'legacy/kafkajs-fetch-v4-magic1-single.bin': [
    {
      offset: 0,
      timestamp: 1538502423117,
      key: 'key-9bf6284dc11345082649-78767-f79b4780-f2aa-4bbb-979f-9a4815652b5c',
      value: 'value-9bf6284dc11345082649-78767-f79b4780-f2aa-4bbb-979f-9a4815652b5c',
      crc: 2036710961,
    },
  ],
};

const RSKAFKA_COMPRESSION: Record<string, number> = { NoCompression: 0, Gzip: 1, Snappy: 2, Lz4: 3, Zstd: 4 };

/** Checks one case's expect_from_test (whatever shape its source repo used) against the decoded entries. */
function checkExpectations(c: FixtureCase, entries: DecodedEntry[], validBytes: number, fileBytes: number): void {
  const e = c.expect_from_test as Record<string, any> | null | undefined;
  const records = entries.flatMap((x) => x.records);
  const first = entries[0]!;
  if (!e) return;

  // kafka-go: keys and values of every message, in order.
  if (Array.isArray(e.messagesInOrder)) {
    expect(records.map((r) => [str(r.key), str(r.value)])).toEqual(e.messagesInOrder.map((m: { key: string; value: string }) => [m.key, m.value]));
  }

  // kafkajs fetch / produce, rskafka: per-record values.
  if (Array.isArray(e.records)) {
    expect(records.length).toBe(e.records.length);
    e.records.forEach((x: Record<string, any>, i: number) => {
      const r = records[i]!;
      if ('offset' in x) expect(r.offset).toBe(Number(x.offset));
      if ('offset_delta' in x) expect(r.offset - Number(e.base_offset)).toBe(x.offset_delta);
      if ('timestamp' in x) expect(r.timestamp).toBe(Number(x.timestamp));
      if ('timestamp_delta' in x) expect(Number(r.timestamp) - Number(e.first_timestamp)).toBe(x.timestamp_delta);
      if ('key' in x) expect(str(r.key)).toBe(expandedText(x.key));
      if ('value' in x) expect(str(r.value)).toBe(x.value);
      if ('value_len' in x) expect(r.value?.length).toBe(x.value_len);
      if ('headers' in x) expect(recordHeaderPairs(r)).toEqual(headerPairs(x.headers));
    });
  }

  // rskafka: batch header fields.
  if ('base_offset' in e) {
    const h = first.header!;
    expect(h.baseOffset).toBe(e.base_offset);
    expect(h.partitionLeaderEpoch).toBe(e.partition_leader_epoch);
    expect(h.producerId).toBe(e.producer_id);
    expect(h.producerEpoch).toBe(e.producer_epoch);
    expect(h.baseSequence).toBe(e.base_sequence);
    expect((h.attributes & 0x10) !== 0).toBe(e.is_transactional);
    expect(h.attributes & 0x08 ? 'LogAppendTime' : 'CreateTime').toBe(e.timestamp_type);
    expect(h.lastOffsetDelta).toBe(e.last_offset_delta);
    expect(h.baseTimestamp).toBe(e.first_timestamp);
    expect(h.maxTimestamp).toBe(e.max_timestamp);
    expect(h.attributes & 7).toBe(RSKAFKA_COMPRESSION[e.compression]);
  }

  // kafkajs produce requests (client-encoded): producer fields and codec.
  if ('producerId' in e) expect(first.header!.producerId).toBe(Number(e.producerId));
  if ('producerEpoch' in e) expect(first.header!.producerEpoch).toBe(e.producerEpoch);
  if ('firstSequence' in e) expect(first.header!.baseSequence).toBe(e.firstSequence);
  if (typeof e.compression === 'number') expect(first.compression).toBe(e.compression);

  // kafkajs LogAppendTime batch: header fields, and every record stamped with maxTimestamp.
  if ('timestampType' in e) {
    const h = first.header!;
    expect(h.baseOffset).toBe(Number(e.firstOffset));
    expect(h.baseTimestamp).toBe(Number(e.firstTimestamp));
    expect(h.partitionLeaderEpoch).toBe(e.partitionLeaderEpoch);
    expect((h.attributes & 0x10) !== 0).toBe(e.inTransaction);
    expect((h.attributes & 0x20) !== 0).toBe(e.isControlBatch);
    expect(h.lastOffsetDelta).toBe(e.lastOffsetDelta);
    expect(h.producerId).toBe(Number(e.producerId));
    expect(h.producerEpoch).toBe(e.producerEpoch);
    expect(h.baseSequence).toBe(e.firstSequence);
    expect(h.maxTimestamp).toBe(Number(e.maxTimestamp));
    expect((h.attributes & 0x08) >> 3).toBe(e.timestampType);
    for (const r of records) expect(r.timestamp).toBe(Number(e.maxTimestamp));
  }

  // kafka-python.
  if (e.batch1) {
    expect(first.records.length).toBe(e.batch1.records);
    const r = first.records[0]!;
    expect(str(r.value)).toBe(e.batch1.value);
    expect(str(r.key)).toBe(e.batch1.key);
    expect(r.timestamp).toBe(e.batch1.timestamp);
    expect(first.header!.attributes & 0x08 ? 1 : 0).toBe(e.batch1.timestamp_type);
    expect(r.headers).toEqual(e.batch1.headers);
    // The test's comments on the next two batches: two records with empty values, then "123".
    expect(entries[1]!.records.map((x) => str(x.value))).toEqual(['', '']);
    expect(entries[2]!.records.map((x) => str(x.value))).toEqual(['123']);
  }
  if (typeof e.records === 'number') {
    expect(records.length).toBe(e.records);
    expect(str(records[0]!.value)).toBe(e.value);
    expect(recordHeaderPairs(records[0]!)).toEqual(headerPairs(e.headers));
  }
  if (typeof e.batches === 'number') expect(entries.length).toBe(e.batches);
  if (typeof e.size_in_bytes === 'number') expect(fileBytes).toBe(e.size_in_bytes);
  if (typeof e.valid_bytes === 'number') expect(validBytes).toBe(e.valid_bytes);
  // kafka-python fed these files plus 4 zero bytes, which it (like the scanner) does not count.
  if (typeof e.size_in_bytes_with_4_zero_bytes === 'number') expect(fileBytes + 4).toBe(e.size_in_bytes_with_4_zero_bytes);
  if (typeof e.messages === 'number') expect(records.length).toBe(e.messages);
  if (e.first) {
    const r = records[0]!;
    expect(str(r.value)).toBe(e.first.value);
    expect(str(r.key)).toBe(e.first.key);
    expect(r.timestamp).toBe(e.first.timestamp ?? -1);
    expect(first.crc).toBe(e.first.checksum);
  }

  // kafkajs snappy fetch: the only assertion is that the batch is snappy.
  if (typeof e.only === 'string' && e.only.includes('snappy')) expect(first.compression).toBe(2);
  // kafkajs mixed formats: the first message set is magic 1 (kafkajs decodes only those).
  if (typeof e.only === 'string' && e.only.includes('magic bytes')) expect(first.magic).toBe(1);
}

const fileCases = loadCases().filter((c) => ['batches', 'client-encoded', 'mixed', 'legacy'].includes(c.kind));

describe.skipIf(!haveFixtures)('Kafka-written fixture files', () => {
  it('lists every fixture file kind', () => {
    expect(fileCases.length).toBeGreaterThanOrEqual(37);
  });

  const anomaly = 'batches/kafkajs-recordbatch-zstd-payload-attrs0-UNREFERENCED.bin';

  it.each(fileCases.filter((c) => c.case !== anomaly).map((c) => [c.case, c] as const))('%s decodes with every CRC checked', (name, c) => {
    const file = fixturePath(name);
    const bytes = readFileSync(file);
    const { entries, end, validBytes } = scanFixture(file);
    const walk = walkFixture(bytes);
    const hint = c.selfDecodedHeaderWalk!;

    // The scanner and the independent walk see the same entries, all with valid CRCs.
    expect(entries.map((x) => [x.position, x.magic])).toEqual(walk.entries.map((x) => [x.position, x.magic]));
    expect(walk.entries.every((x) => x.crcOk)).toBe(true);
    expect(entries.length).toBe(hint.batches);
    expect(walk.trailingBytes).toBe(hint.trailingBytes);
    if (hint.trailingBytes === 0) expect(end).toEqual({ kind: 'end' });
    else expect(end).toMatchObject({ kind: 'partial', bytes: hint.trailingBytes });

    // Formats and codecs per entry match the header walk in cases.json (a hint, but a byte-level one).
    const count = (keys: string[]) => keys.reduce<Record<string, number>>((m, k) => ((m[k] = (m[k] ?? 0) + 1), m), {});
    expect(count(entries.map((x) => String(x.magic)))).toEqual(hint.magics);
    expect(count(entries.map((x) => compressionNames[x.compression]!))).toEqual(hint.codecs);

    // v2: each batch yields exactly recordsCount records, offsets within [base, base + lastOffsetDelta].
    for (const x of entries.filter((y) => y.header)) {
      const h = x.header!;
      expect(x.records.length).toBe(h.recordsCount);
      for (const r of x.records) expect(r.offset >= h.baseOffset && r.offset <= h.baseOffset + h.lastOffsetDelta).toBe(true);
    }
    expect(entries.filter((x) => x.header).reduce((n, x) => n + x.records.length, 0)).toBe(hint.records);
    // Legacy: no headers; v0 has no timestamps; a wrapper's last inner offset is its entry offset.
    for (const x of entries.filter((y) => !y.header)) {
      expect(x.records.length).toBeGreaterThan(0);
      for (const r of x.records) {
        expect(r.headers).toEqual([]);
        if (x.magic === 0) expect(r.timestamp).toBe(-1);
      }
      expect(x.records[x.records.length - 1]!.offset).toBe(readInt64(bytes, x.position));
    }

    checkExpectations(c, entries, validBytes, bytes.length);
    const spec = kafkajsLegacySpecs[name];
    if (spec) {
      const records = entries.flatMap((x) => x.records);
      expect(records.map((r) => ({ offset: r.offset, timestamp: r.timestamp, key: str(r.key), value: str(r.value) }))).toEqual(
        spec.map((s) => ({ offset: s.offset, timestamp: s.timestamp ?? -1, key: s.key, value: s.value })),
      );
      // The spec's CRCs are per message; for plain messages they are the entries' own CRCs.
      if (entries.every((x) => x.compression === 0)) expect(entries.map((x) => x.crc | 0)).toEqual(spec.map((s) => s.crc));
    }
  });

  it('kafkajs mixed-format fetch: 1611 magic-1 messages then v2 batches, offsets 0–2424 without gaps', () => {
    const { entries } = scanFixture(fixturePath('mixed/kafkajs-fetch-v4-mixed-magic1-then-v2.bin'));
    const offsets = entries.flatMap((x) => x.records.map((r) => r.offset));
    expect(offsets).toEqual(Array.from({ length: 2425 }, (_, i) => i));
    expect(entries.findIndex((x) => x.magic === 2)).toBe(1611);
  });

  it('legacy v1 gzip wrappers: inner relative offsets become absolute (kafka-go v1c-v1-v1c)', () => {
    const { entries } = scanFixture(fixturePath('legacy/kafkago-v1c-v1-v1c.bin'));
    expect(entries.map((x) => [x.compression, x.records.map((r) => r.offset)])).toEqual([
      [1, [0, 1]],
      [0, [2]],
      [0, [3]],
      [1, [4]],
      [1, [5]],
    ]);
  });

  it(`${anomaly}: zstd bytes under codec "none" are reported as corrupt, naming the batch (cases.json warning)`, () => {
    const c = fileCases.find((x) => x.case === anomaly)!;
    expect(c.warning).toMatch(/anomaly/);
    const buf = readFileSync(fixturePath(anomaly));
    const walk = walkFixture(buf);
    expect(walk.entries).toHaveLength(1);
    expect(walk.entries[0]!.crcOk).toBe(true);
    const h = readBatchHeader(buf, 0);
    expect(h.attributes & 7).toBe(0);
    expect(buf.readUInt32BE(61)).toBe(0x28b52ffd); // a zstd frame where records should be
    expect(() => decodeRecords(buf, 0, h, { file: anomaly })).toThrow(CorruptDataError);
    expect(() => decodeRecords(buf, 0, h)).toThrow(/batch at offset 0/);
    // Self-observed, not an expectation from the source: read with the zstd codec bits, the
    // payload is a valid one-record section.
    expect(zstdDecompress(buf.subarray(61), 1 << 20).length).toBeGreaterThan(0);
    expect(decodeRecords(buf, 0, { ...h, attributes: 4 }).map((r) => str(r.key))).toEqual(['lorem']);
  });
});
