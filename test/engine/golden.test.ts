/**
 * Real broker data (fixtures/kafka/segments/*): every partition whose batches are all
 * uncompressed reads back through `Log.open(dir, { readOnly: true })` — log end offset per the
 * broker's own checkpoint files, offsets increasing (contiguous unless compacted), every batch
 * CRC valid, batch and record counts per segment file as the collector's header walk counted.
 * Uncompressed byte fixtures (batches/, client-encoded/) decode to the records their source
 * repositories' tests assert.
 *
 * Opens are read-only, on temp copies (partition dir + the log.dir's checkpoint files and marker),
 * and are checked to change nothing; byte fixtures are copied into a temp partition dir as a
 * segment file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, type LogWarning } from '../../src/api.js';
import { decodeRecords, isControl, readBatchHeader, type LogRecord } from '../../src/engine/format/record-batch.js';
import {
  bytesCases,
  codecsOf,
  copyPartitionWithLogDir,
  fileStamps,
  fixturePath,
  hasCleanShutdownMarker,
  hasFixtures,
  makeTempDir,
  removeTempDirs,
  segmentCases,
  type BytesCase,
  type PartitionFacts,
  type SegmentCase,
} from '../helpers/fixtures.js';

import { requireFixtures } from '../helpers/fixtures.js';
requireFixtures(import.meta.url);

afterAll(removeTempDirs);

interface Target {
  c: SegmentCase;
  partition: string;
  facts: PartitionFacts;
}

function uncompressedPartitions(): Target[] {
  const out: Target[] = [];
  for (const c of segmentCases()) {
    for (const [partition, facts] of Object.entries(c.partitions)) {
      const files = Object.keys(facts.selfDecoded ?? {});
      if (files.length === 0) continue;
      const codecs = codecsOf(facts);
      if ([...codecs].some((k) => k !== 'none')) continue;
      out.push({ c, partition, facts });
    }
  }
  return out;
}

const targets = uncompressedPartitions();

describe.skipIf(!hasFixtures)('golden: broker segments with only uncompressed batches', () => {
  it('finds the expected partitions in the corpus', () => {
    // 10 segment cases; the uncompressed partitions with data span 8 of them.
    expect(targets.length).toBeGreaterThanOrEqual(40);
    expect(new Set(targets.map((t) => t.c.case)).size).toBeGreaterThanOrEqual(7);
  });

  it.each(targets.map((t) => [`${t.c.case.replace('segments/', '')}/${t.partition}`, t] as const))('%s', (_name, { c, partition, facts }) => {
    const dir = copyPartitionWithLogDir(c, partition);
    const before = { partition: fileStamps(dir), logDir: fileStamps(path.dirname(dir)) };
    const warnings: LogWarning[] = [];
    const log = Log.open(dir, { readOnly: true, onWarning: (w) => warnings.push(w) });
    try {
      const walk = facts.selfDecoded!;
      const lastFile = Object.keys(walk).sort().pop()!;
      const expectedNext = Number(walk[lastFile]!.lastOffset) + 1;

      // Log end offset: on a clean shutdown it is the checkpointed recovery point; otherwise the
      // recovery point and high watermark are lower bounds.
      const rp = facts['recovery-point'] !== undefined ? Number(facts['recovery-point']) : undefined;
      const hw = facts.replication !== undefined ? Number(facts.replication) : undefined;
      if (hasCleanShutdownMarker(c) && rp !== undefined) expect(log.nextOffset).toBe(rp);
      if (rp !== undefined) expect(log.nextOffset).toBeGreaterThanOrEqual(rp);
      if (hw !== undefined) expect(log.nextOffset).toBeGreaterThanOrEqual(hw);
      expect(log.nextOffset).toBe(expectedNext);

      // Segments are the broker's files.
      expect(log.segments.map((s) => String(s.baseOffset))).toEqual(facts.segments);

      // Every batch: CRC valid, counts per file as walked.
      const perFile = new Map<string, { batches: number; records: number; first?: number; last?: number; control: number }>();
      let prevLast = -1;
      for (const { segment, entry, crcValid } of log.reader().batches()) {
        expect(crcValid, `${segment.logPath} @${entry.position}`).toBe(true);
        expect(entry.magic).toBe(2);
        expect(entry.baseOffset).toBeGreaterThan(prevLast);
        expect(entry.lastOffset).toBeGreaterThanOrEqual(entry.baseOffset);
        prevLast = entry.lastOffset;
        const name = path.basename(segment.logPath);
        const s = perFile.get(name) ?? { batches: 0, records: 0, control: 0 };
        s.batches++;
        s.records += entry.header!.recordsCount;
        if (isControl(entry.header!)) s.control++;
        s.first ??= entry.baseOffset;
        s.last = entry.lastOffset;
        perFile.set(name, s);
      }
      expect(prevLast + 1).toBe(log.nextOffset);
      for (const [file, w] of Object.entries(walk)) {
        const s = perFile.get(file);
        expect(s, file).toBeDefined();
        expect(s!.batches, file).toBe(w.batches);
        expect(s!.records, file).toBe(w.records);
        expect(s!.control, file).toBe(w.controlBatches);
        expect(String(s!.first), file).toBe(w.firstOffset);
        expect(String(s!.last), file).toBe(w.lastOffset);
      }

      // Records (control records included): strictly increasing offsets inside their batches;
      // contiguous unless the partition was compacted (cleaner checkpoint or delete-horizon batches).
      const records = [...log.read({ includeControl: true })];
      const totalRecords = Object.values(walk).reduce((n, w) => n + w.records, 0);
      expect(records.length).toBe(totalRecords);
      for (let i = 1; i < records.length; i++) expect(records[i]!.offset).toBeGreaterThan(records[i - 1]!.offset);
      const compacted = facts.cleaner !== undefined || Object.values(walk).some((w) => w.deleteHorizonBatches > 0);
      if (!compacted && records.length > 0) {
        expect(records[0]!.offset).toBe(log.segments[0]!.baseOffset);
        expect(records[records.length - 1]!.offset).toBe(log.nextOffset - 1);
        records.forEach((r, i) => expect(r.offset).toBe(records[0]!.offset + i));
      }
      // Record timestamps lie within the walk's range (CreateTime data). With a delete horizon
      // (bit 6) baseTimestamp is the horizon and deltas may be negative, so only the max bounds.
      const minTs = Math.min(...Object.values(walk).map((w) => Number(w.minTs)));
      const maxTs = Math.max(...Object.values(walk).map((w) => Number(w.maxTs)));
      const horizon = Object.values(walk).some((w) => w.deleteHorizonBatches > 0);
      for (const r of records) {
        if (!horizon) expect(r.timestamp).toBeGreaterThanOrEqual(minTs);
        expect(r.timestamp).toBeLessThanOrEqual(maxTs);
      }
      // Reading from the middle returns the tail.
      if (records.length > 2) {
        const mid = records[Math.floor(records.length / 2)]!;
        const tail = [...log.read({ fromOffset: mid.offset, includeControl: true })];
        expect(tail[0]!.offset).toBe(mid.offset);
        expect(tail.length).toBe(records.length - records.indexOf(mid));
      }
      // Segment summaries agree with the walk.
      for (const info of log.segmentInfos()) {
        const w = walk[path.basename(info.file)];
        if (!w) continue;
        expect(info.sizeBytes).toBe(w.bytes);
        expect(String(info.firstOffset)).toBe(w.firstOffset);
        expect(String(info.lastOffset)).toBe(w.lastOffset);
        expect(info.maxTimestamp).toBe(Number(w.maxTs));
      }
      expect(warnings).toEqual([]);
    } finally {
      void log.close();
    }
    // A read-only open changes nothing on disk.
    expect(fileStamps(dir)).toEqual(before.partition);
    expect(fileStamps(path.dirname(dir))).toEqual(before.logDir);
  });

  it('every partition dir of a clean-shutdown case opens with the checkpointed log end offset (empty ones too)', () => {
    let checked = 0;
    for (const c of segmentCases().filter(hasCleanShutdownMarker)) {
      for (const [partition, facts] of Object.entries(c.partitions)) {
        if (facts['recovery-point'] === undefined) continue;
        if (!fs.existsSync(fixturePath(c.case, partition))) continue;
        if (c.excludedFiles.some((e) => JSON.stringify(e).includes(`${partition}/`))) continue;
        if ([...codecsOf(facts)].some((k) => k !== 'none')) continue; // reading needs no codec, but keep to the scope
        const log = Log.open(copyPartitionWithLogDir(c, partition), { readOnly: true });
        expect(log.nextOffset, `${c.case}/${partition}`).toBe(Number(facts['recovery-point']));
        void log.close();
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });
});

// ---------------------------------------------------------------------------------------------
// Byte fixtures with expectations from their source repositories.

function decodeAll(buf: Buffer): { records: LogRecord[]; batches: number; validBytes: number } {
  const records: LogRecord[] = [];
  let pos = 0;
  let batches = 0;
  while (buf.length - pos >= 61) {
    const h = readBatchHeader(buf, pos);
    if (h.batchLength < 49 || pos + h.batchLength + 12 > buf.length) break;
    records.push(...decodeRecords(buf, pos, h));
    pos += h.batchLength + 12;
    batches++;
  }
  return { records, batches, validBytes: pos };
}

/** Copies a byte fixture into `<tmp>/fx-0/00000000000000000000.log` and opens it read-only. */
function openAsLog(c: BytesCase): { log: Log; warnings: LogWarning[] } {
  const dir = path.join(makeTempDir(), 'fx-0');
  fs.mkdirSync(dir);
  fs.copyFileSync(fixturePath(c.case), path.join(dir, '00000000000000000000.log'));
  const warnings: LogWarning[] = [];
  return { log: Log.open(dir, { readOnly: true, onWarning: (w) => warnings.push(w) }), warnings };
}

const s = (b: Buffer | null): string | null => (b === null ? null : b.toString('utf8'));
const kv = (r: LogRecord) => ({ key: s(r.key), value: s(r.value) });
const hdrs = (r: LogRecord) => r.headers.map((h) => [h.key, s(h.value)]);

const byName = (name: string): BytesCase => {
  const c = bytesCases().find((x) => x.case === name);
  if (!c) throw new Error(`fixture ${name} missing from cases.json`);
  return c;
};

describe.skipIf(!hasFixtures)('golden: uncompressed byte fixtures match their source tests', () => {
  it('kafka-go v2-v2: 4 messages in order', () => {
    const c = byName('batches/kafkago-v2-v2.bin');
    const { log, warnings } = openAsLog(c);
    const recs = [...log.read()];
    const want = (c.expect_from_test!.messagesInOrder as { key: string; value: string }[]).map((m) => ({ key: m.key, value: m.value }));
    expect(recs.map(kv)).toEqual(want);
    expect(recs.map((r) => r.offset)).toEqual([0, 1, 2, 3]);
    expect(warnings).toEqual([]);
    void log.close();
  });

  it('kafkajs fetch v4 (Scala producer, 6 batches) and (uncompressed, headers)', () => {
    for (const name of ['batches/kafkajs-fetch-v4-scala-producer-6batches.bin', 'batches/kafkajs-fetch-v4-uncompressed-headers.bin']) {
      const c = byName(name);
      const { log, warnings } = openAsLog(c);
      const recs = [...log.read()];
      const want = c.expect_from_test!.records as { offset: number; timestamp: string; key: string; value: string; headers: Record<string, string> }[];
      expect(recs.map((r) => ({ offset: r.offset, timestamp: String(r.timestamp), ...kv(r), headers: Object.fromEntries(hdrs(r)) }))).toEqual(
        want.map((w) => ({ offset: w.offset, timestamp: w.timestamp, key: w.key, value: w.value, headers: w.headers })),
      );
      expect([...log.reader().batches()].every((b) => b.crcValid)).toBe(true);
      expect(warnings).toEqual([]);
      void log.close();
    }
  });

  it('kafka-python live Kafka 0.11 data: batch 1 = null key "123" @1503229838908, batch 2 two empty values, batch 3 "123"', () => {
    const c = byName('batches/kafkapython-live-kafka0.11-v2-3batches.bin');
    const { records, batches } = decodeAll(fs.readFileSync(fixturePath(c.case)));
    expect(batches).toBe(3);
    const b1 = c.expect_from_test!.batch1 as { value: string; key: null; timestamp: number };
    expect(records[0]).toMatchObject({ key: null, timestamp: b1.timestamp, headers: [] });
    expect(s(records[0]!.value)).toBe(b1.value);
    expect(records.slice(1, 3).map((r) => s(r.value))).toEqual(['', '']);
    expect(s(records[3]!.value)).toBe('123');
  });

  it('kafka-python test input: 4 batches, 299 valid bytes, 4 trailing zero bytes are no batch', () => {
    const c = byName('batches/kafkapython-test-input-4batches-plus-4-zero-bytes.bin');
    const buf = fs.readFileSync(fixturePath(c.case));
    expect(buf.length).toBe(c.expect_from_test!.size_in_bytes);
    const { batches, validBytes, records } = decodeAll(buf);
    expect(batches).toBe(c.expect_from_test!.batches);
    expect(validBytes).toBe(c.expect_from_test!.valid_bytes);
    // As a segment file: its 4th batch goes back to offset 0 (the source test concatenated
    // independent batches), which no segment may do, so reading stops there with a warning naming
    // the byte; the 4 trailing bytes (< 18) are reported too, never read as a batch.
    const { log, warnings } = openAsLog(c);
    const read = [...log.read()];
    expect(read.map((r) => r.offset)).toEqual(records.slice(0, read.length).map((r) => r.offset));
    expect(read.length).toBe(4);
    expect(warnings.some((w) => w.position === 218 && /does not follow/.test(w.message))).toBe(true);
    expect(warnings.filter((w) => w.position !== validBytes && w.position !== 218)).toEqual([]);
    void log.close();
  });

  it('kafka-python header batch: value "hdr", header hkey=hval', () => {
    const c = byName('batches/kafkapython-v2-header-batch-added2018.bin');
    const { records } = decodeAll(fs.readFileSync(fixturePath(c.case)));
    expect(records.length).toBe(1);
    expect(s(records[0]!.value)).toBe('hdr');
    expect(hdrs(records[0]!)).toEqual(c.expect_from_test!.headers);
  });

  it('rskafka no-compression and null-key: every header field and record as the rskafka test asserts', () => {
    for (const name of ['batches/rskafka-nocompression.bin', 'batches/rskafka-null-key.bin']) {
      const c = byName(name);
      const e = c.expect_from_test! as Record<string, unknown>;
      const buf = fs.readFileSync(fixturePath(c.case));
      const h = readBatchHeader(buf, 0);
      expect(h).toMatchObject({
        baseOffset: e.base_offset,
        partitionLeaderEpoch: e.partition_leader_epoch,
        producerId: e.producer_id,
        producerEpoch: e.producer_epoch,
        baseSequence: e.base_sequence,
        lastOffsetDelta: e.last_offset_delta,
        baseTimestamp: e.first_timestamp,
        maxTimestamp: e.max_timestamp,
      });
      expect(h.attributes & 0x1f).toBe(0); // no compression, CreateTime, not transactional
      const recs = decodeRecords(buf, 0, h);
      const want = e.records as { key: string | null; value?: string; value_len?: number; headers: [string, string][] }[];
      expect(recs.length).toBe(want.length);
      for (let i = 0; i < want.length; i++) {
        const w = want[i]!;
        const r = recs[i]!;
        expect(s(r.key)).toBe(w.key);
        if (w.value !== undefined) expect(s(r.value)).toBe(w.value);
        if (w.value_len !== undefined) expect(r.value!.length).toBe(w.value_len);
        expect(hdrs(r)).toEqual(w.headers);
      }
    }
  });

  it('kafkajs produce v3/v7 requests (client-encoded): records, headers, producer fields', () => {
    for (const name of ['client-encoded/kafkajs-produce-v3-request-batch.bin', 'client-encoded/kafkajs-produce-v7-request-batch.bin']) {
      const c = byName(name);
      const e = c.expect_from_test! as Record<string, unknown>;
      const buf = fs.readFileSync(fixturePath(c.case));
      const h = readBatchHeader(buf, 0);
      expect(h.baseSequence).toBe(e.firstSequence);
      if (e.producerId !== undefined) expect(String(h.producerId)).toBe(e.producerId);
      if (e.producerEpoch !== undefined) expect(h.producerEpoch).toBe(e.producerEpoch);
      const { records } = decodeAll(buf);
      const want = e.records as { key: string; value: string; timestamp: number; headers: [string, string][] }[];
      expect(records.map((r) => ({ ...kv(r), timestamp: r.timestamp, headers: hdrs(r) }))).toEqual(want);
      // And through a Log (a client batch carries baseOffset 0: a valid segment on its own).
      const { log, warnings } = openAsLog(c);
      expect([...log.read()].map((r) => r.offset)).toEqual(want.map((_, i) => i));
      expect(warnings).toEqual([]);
      void log.close();
    }
  });

  it('the zstd-payload-with-attributes-0 anomaly: CRC valid, but the "records" are a zstd frame → corrupt, not misread', () => {
    const c = byName('batches/kafkajs-recordbatch-zstd-payload-attrs0-UNREFERENCED.bin');
    const buf = fs.readFileSync(fixturePath(c.case));
    const h = readBatchHeader(buf, 0);
    expect(h.attributes & 7).toBe(0);
    expect(buf.subarray(61, 65).toString('hex')).toBe('28b52ffd');
    expect(() => decodeRecords(buf, 0, h)).toThrow(expect.objectContaining({ kind: 'corrupt' }));
  });
});
