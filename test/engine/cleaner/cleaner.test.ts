/**
 * Compaction by Kafka's cleaner rules (src/engine/cleaner/): the property that after compaction
 * reading gives exactly the latest record per key (tombstones within their retention included),
 * offsets unchanged, every CRC valid, and kafkajs's own decoder reads every batch; multi-pass
 * compaction with a tiny offset map; exact dry runs; records without a key refused before any
 * change; delete horizons; producer state and transactions; min.compaction.lag.ms; grouping;
 * the cleaner checkpoint; compressed batches.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Log } from '../../../src/engine/log/log.js';
import { KeylessRecordsError } from '../../../src/engine/cleaner/cleaner.js';
import { InvalidArgumentError } from '../../../src/engine/errors.js';
import { readBatchHeader, computeBatchCrc } from '../../../src/engine/format/record-batch.js';
import { CompressionType } from '../../../src/engine/format/compression.js';
import { readOffsetCheckpoint } from '../../../src/engine/checkpoint.js';
import { realIO } from '../../../src/engine/io.js';
import { removeTempDirs, tempPartitionPath } from '../../helpers/fixtures.js';
import { buildLog, checkAllCrcs, fingerprint, kafkajsDecodeAll, kafkajsRecords, modelCompaction, rawBatches, readAll, strip, type BatchSpec, type Rec } from './helpers.js';

afterAll(removeTempDirs);

const T0 = 1_700_000_000_000;
const DAY = 86_400_000;

function activeBase(dir: string): number {
  const logs = fs.readdirSync(dir).filter((n) => /^\d{20}\.log$/.test(n)).sort();
  return Number(logs[logs.length - 1]!.slice(0, 20));
}

async function compact(dir: string, opts: Parameters<Log['compact']>[0] = {}, config = {}) {
  const log = Log.open(dir, { config });
  try {
    return await log.compact({ deleteDelayMs: 0, ...opts });
  } finally {
    await log.close();
  }
}

/** Batches of keyed records k0..k{keys-1}; about one in eight is a tombstone. */
const batchesArb = (maxKeys: number) =>
  fc.array(
    fc.array(fc.record({ k: fc.integer({ min: 0, max: maxKeys - 1 }), tomb: fc.integer({ min: 0, max: 7 }), v: fc.string({ maxLength: 30 }) }), { minLength: 1, maxLength: 12 }),
    { minLength: 2, maxLength: 40 },
  );

function toSpecs(batches: { k: number; tomb: number; v: string }[][]): BatchSpec[] {
  let i = 0;
  return batches.map((b) => ({ records: b.map((r) => ({ key: `k${r.k}`, value: r.tomb === 0 ? null : `${r.v}#${i}`, timestamp: T0 + i++ })) }));
}

describe('compaction property', () => {
  it('keeps exactly the latest record per key, offsets unchanged, CRCs valid, kafkajs decodes every batch', async () => {
    await fc.assert(
      fc.asyncProperty(batchesArb(12), fc.integer({ min: 300, max: 2000 }), async (batches, segmentBytes) => {
        const dir = tempPartitionPath('prop-0');
        const written = await buildLog(dir, toSpecs(batches), { segmentBytes });
        const inputBatches = rawBatches(dir).map((b) => readBatchHeader(b.bytes, 0));
        const upTo = activeBase(dir);
        const now = T0 + DAY;
        const report = await compact(dir, { nowMs: now }, { deleteRetentionMs: DAY });
        const expected = modelCompaction(written, upTo);
        // Our reader and kafkajs's decoder see exactly the model, offsets and timestamps included.
        expect(strip(readAll(dir))).toEqual(strip(expected));
        const kb = await kafkajsDecodeAll(dir);
        expect(strip(kafkajsRecords(kb))).toEqual(strip(expected));
        expect(kafkajsRecords(kb).map((r) => r.timestamp)).toEqual(expected.map((r) => r.timestamp));
        checkAllCrcs(dir);
        // Every batch kept its original base and last offset.
        const inputRanges = new Set(inputBatches.map((h) => `${h.baseOffset}-${h.baseOffset + h.lastOffsetDelta}`));
        for (const b of rawBatches(dir)) {
          const h = readBatchHeader(b.bytes, 0);
          expect(inputRanges.has(`${h.baseOffset}-${h.baseOffset + h.lastOffsetDelta}`)).toBe(true);
          // A kept tombstone gets the delete horizon: bit 6 and base timestamp = now + delete.retention.ms.
          const recs = kb.find((x) => Number(x.firstOffset) === h.baseOffset)!.records;
          if (h.baseOffset < upTo && recs.some((r) => r.value === null)) {
            expect(h.attributes & 0x40).toBe(0x40);
            expect(h.baseTimestamp).toBe(now + DAY);
          }
        }
        expect(report.recordsRemoved).toBe(written.length - expected.length);
        // Once the horizon has passed, a new cleaning (from the start) removes the tombstones.
        await compact(dir, { nowMs: now + DAY, fromStart: true }, { deleteRetentionMs: DAY });
        const withoutTombstones = expected.filter((r) => r.offset >= upTo || r.value !== null);
        expect(strip(readAll(dir))).toEqual(strip(withoutTombstones));
        checkAllCrcs(dir);
      }),
      { numRuns: 25 },
    );
  });

  it('a tiny offset map compacts in several passes to the same result, and a dry run predicts it exactly', async () => {
    await fc.assert(
      fc.asyncProperty(batchesArb(14), async (batches) => {
        const specs = toSpecs(batches).map((b) => ({ records: b.records.map((r) => ({ ...r, value: r.value ?? 'v' })) }));
        const dir = tempPartitionPath('multi-0');
        const written = await buildLog(dir, specs, { segmentBytes: 500 });
        const upTo = activeBase(dir);
        const before = fingerprint(dir);
        const dry = await compact(dir, { nowMs: T0 + DAY, offsetMapBytes: 24 * 5, dryRun: true });
        expect(fingerprint(dir)).toEqual(before);
        const real = await compact(dir, { nowMs: T0 + DAY, offsetMapBytes: 24 * 5 });
        const distinct = new Set(written.filter((r) => r.offset < upTo).map((r) => r.key)).size;
        if (distinct > 4) expect(real.passes).toBeGreaterThan(1);
        expect(strip(readAll(dir))).toEqual(strip(modelCompaction(written, upTo)));
        expect(dry.recordsRemoved).toBe(real.recordsRemoved);
        expect(dry.bytesAfter).toBe(real.bytesAfter);
        expect(dry.passes).toBe(real.passes);
        checkAllCrcs(dir);
      }),
      { numRuns: 8 },
    );
  });
});

describe('compaction rules', () => {
  it('refuses records without a key, listing them, and changes nothing', async () => {
    const dir = tempPartitionPath('keyless-0');
    await buildLog(dir, [{ records: [{ key: 'a', value: '1' }, { key: null, value: 'x' }] }, { records: [{ key: 'a', value: '2' }, { key: null, value: 'y' }] }, { records: [{ key: 'b', value: '3' }] }], { segmentBytes: 100 });
    const before = fingerprint(dir);
    const err = await compact(dir).catch((e) => e);
    expect(err).toBeInstanceOf(KeylessRecordsError);
    expect(err.count).toBe(2);
    expect(err.firstOffsets).toEqual([1, 3]);
    expect(err.message).toMatch(/without a key.*Nothing was changed/);
    // Only the closing writer's checkpoints may differ; every segment file is untouched.
    const after = fingerprint(dir);
    for (const [f, h] of Object.entries(before)) if (/\.(log|index|timeindex)$/.test(f)) expect(after[f]).toBe(h);
    expect(Object.keys(after).filter((f) => /\.(cleaned|swap|deleted)$/.test(f))).toEqual([]);
  });

  it('fails before changing anything on a batch whose codec it cannot read', async () => {
    const dir = tempPartitionPath('codec-0');
    await buildLog(dir, [{ records: [{ key: 'a', value: '1' }] }], { segmentBytes: 100 });
    const log = Log.open(dir);
    // appendEncoded refuses such a batch, so it is planted in the file (valid CRC, unknown codec).
    await log.append([{ key: Buffer.from('a'), value: Buffer.from('2') }]);
    log.roll();
    await log.append([{ key: Buffer.from('z'), value: Buffer.from('z') }]);
    await log.close();
    const target = rawBatches(dir).find((b) => readBatchHeader(b.bytes, 0).baseOffset === 1)!;
    const bad = target.bytes;
    bad.writeInt16BE(5, 21); // compression id 5: no such codec
    bad.writeUInt32BE(computeBatchCrc(bad, 0, bad.length), 17);
    const fd = fs.openSync(target.file, 'r+');
    fs.writeSync(fd, bad, 0, bad.length, target.position);
    fs.closeSync(fd);
    const before = fingerprint(dir);
    await expect(compact(dir)).rejects.toThrow(/codec.*before changing anything/);
    const after = fingerprint(dir);
    for (const [f, h] of Object.entries(before)) if (/\.log$/.test(f)) expect(after[f]).toBe(h);
  });

  it('recompresses rewritten batches with their codec (gzip), readable by kafkajs', async () => {
    const dir = tempPartitionPath('gzip-0');
    const specs: BatchSpec[] = [];
    for (let b = 0; b < 6; b++) specs.push({ compression: CompressionType.gzip, records: Array.from({ length: 5 }, (_, i) => ({ key: `k${(b * 5 + i) % 7}`, value: `v${b * 5 + i}`, timestamp: T0 + b * 5 + i })) });
    const written = await buildLog(dir, specs, { segmentBytes: 250 });
    const upTo = activeBase(dir);
    await compact(dir, { nowMs: T0 });
    const kb = await kafkajsDecodeAll(dir);
    expect(strip(kafkajsRecords(kb))).toEqual(strip(modelCompaction(written, upTo)));
    for (const b of rawBatches(dir)) if (b.bytes.readInt32BE(57) > 0) expect(b.bytes.readInt16BE(21) & 7).toBe(CompressionType.gzip);
    checkAllCrcs(dir);
  });

  it('keeps the last batch of an active producer as a 61-byte empty batch; an expired producer loses it', async () => {
    const specs: BatchSpec[] = [
      { producerId: 42, producerEpoch: 3, baseSequence: 0, records: [{ key: 'a', value: '1', timestamp: T0 }, { key: 'b', value: '1', timestamp: T0 }] },
      { records: [{ key: 'a', value: '2', timestamp: T0 + 1 }, { key: 'b', value: '2', timestamp: T0 + 1 }] },
      { records: [{ key: 'c', value: '1', timestamp: T0 + 2 }] },
    ];
    for (const [now, expectEmpty] of [
      [T0 + 60_000, true],
      [T0 + 2 * DAY, false],
    ] as const) {
      const dir = tempPartitionPath('producer-0');
      await buildLog(dir, specs, { segmentBytes: 100 });
      const r = await compact(dir, { nowMs: now });
      const batches = rawBatches(dir).map((b) => ({ h: readBatchHeader(b.bytes, 0), size: b.bytes.length }));
      const p = batches.find((b) => b.h.producerId === 42);
      if (expectEmpty) {
        expect(p).toBeDefined();
        expect(p!.size).toBe(61);
        expect(p!.h).toMatchObject({ baseOffset: 0, lastOffsetDelta: 1, recordsCount: 0, producerEpoch: 3, baseSequence: 0, baseTimestamp: -1, maxTimestamp: T0 });
        expect(r.batchesEmptied).toBeGreaterThanOrEqual(1);
      } else expect(p).toBeUndefined();
      checkAllCrcs(dir);
      await kafkajsDecodeAll(dir);
    }
  });

  it('removes aborted transactional data, keeps its marker with a .txnindex entry, then lets the marker go', async () => {
    const dir = tempPartitionPath('txn-0');
    const ctrl = (type: number) => ({ key: Buffer.from([0, 0, 0, type]).toString('latin1'), value: '\u0000\u0000\u0000\u0000\u0000\u0005' });
    const specs: BatchSpec[] = [
      { producerId: 7, producerEpoch: 0, baseSequence: 0, transactional: true, records: [{ key: 'a', value: 'aborted', timestamp: T0 }] },
      { producerId: 7, producerEpoch: 0, baseSequence: -1, transactional: true, control: true, records: [{ ...ctrl(0), timestamp: T0 }] },
      { producerId: 8, producerEpoch: 0, baseSequence: 0, transactional: true, records: [{ key: 'b', value: 'committed', timestamp: T0 }] },
      { producerId: 8, producerEpoch: 0, baseSequence: -1, transactional: true, control: true, records: [{ ...ctrl(1), timestamp: T0 }] },
      { records: [{ key: 'c', value: 'plain', timestamp: T0 }] },
    ];
    await buildLogBinaryControl(dir, specs);
    const now = T0 + 2 * DAY; // producers expired: nothing is kept for producer state
    await compact(dir, { nowMs: now }, { deleteRetentionMs: DAY });
    expect(readAll(dir).map((r) => r.value)).toEqual(['committed', 'plain', 'tail']);
    const txn = fs.readdirSync(dir).find((n) => n.endsWith('.txnindex'));
    expect(txn).toBeDefined();
    const entry = fs.readFileSync(path.join(dir, txn!));
    expect(entry.length).toBe(34);
    expect(entry.readInt16BE(0)).toBe(0);
    expect(Number(entry.readBigInt64BE(2))).toBe(7);
    expect(Number(entry.readBigInt64BE(10))).toBe(0);
    expect(Number(entry.readBigInt64BE(18))).toBe(1);
    let markers = rawBatches(dir).filter((b) => b.bytes.readInt16BE(21) & 0x20);
    expect(markers.map((b) => Number(b.bytes.readBigInt64BE(43)))).toEqual([7, 8]);
    // Next round: the aborted transaction has no data left, so its marker gets a delete horizon…
    await compact(dir, { nowMs: now, fromStart: true }, { deleteRetentionMs: DAY });
    markers = rawBatches(dir).filter((b) => b.bytes.readInt16BE(21) & 0x20);
    const abortMarker = markers.find((b) => Number(b.bytes.readBigInt64BE(43)) === 7)!;
    expect(abortMarker.bytes.readInt16BE(21) & 0x40).toBe(0x40);
    expect(Number(abortMarker.bytes.readBigInt64BE(27))).toBe(now + DAY);
    // …and goes once the horizon has passed.
    await compact(dir, { nowMs: now + DAY, fromStart: true }, { deleteRetentionMs: DAY });
    markers = rawBatches(dir).filter((b) => b.bytes.readInt16BE(21) & 0x20);
    expect(markers.map((b) => Number(b.bytes.readBigInt64BE(43)))).not.toContain(7);
    expect(readAll(dir).map((r) => r.value)).toEqual(['committed', 'plain', 'tail']);
    checkAllCrcs(dir);
    await kafkajsDecodeAll(dir);
  });

  it('reads the transaction markers that follow batches larger than the header scan window (64 KiB)', async () => {
    const dir = tempPartitionPath('txn-large-0');
    const ctrl = (type: number) => ({ key: Buffer.from([0, 0, 0, type]).toString('latin1'), value: '\u0000\u0000\u0000\u0000\u0000\u0005' });
    const big = (key: string, fill: string) => ({ key, value: fill.repeat(100 * 1024), timestamp: T0 });
    const txn = (pid: number, records: BatchSpec['records'], control = false): BatchSpec => ({ producerId: pid, producerEpoch: 0, baseSequence: control ? -1 : 0, transactional: true, control, records });
    await buildLogBinaryControl(dir, [
      txn(7, [big('a', 'x')]),
      txn(8, [big('b', 'y')]),
      txn(7, [{ ...ctrl(0), timestamp: T0 }], true),
      { records: [big('c', 'z')] },
      txn(8, [{ ...ctrl(1), timestamp: T0 }], true),
      txn(9, [big('d', 'w'), big('e', 'v')]),
      txn(9, [{ ...ctrl(0), timestamp: T0 }], true),
    ]);
    const r = await compact(dir, { nowMs: T0 + 2 * DAY }, { deleteRetentionMs: DAY });
    expect(r.recordsRemoved).toBe(3);
    expect(readAll(dir).map((rec) => `${rec.key}:${rec.value!.length}`)).toEqual([`b:${100 * 1024}`, `c:${100 * 1024}`, 'tail:4']);
    checkAllCrcs(dir);
  });

  it('respects min.compaction.lag.ms, groups segments up to segment.bytes, and records progress in cleaner-offset-checkpoint', async () => {
    const dir = tempPartitionPath('lag-0');
    const specs: BatchSpec[] = [];
    for (let i = 0; i < 30; i++) specs.push({ records: [{ key: `k${i % 3}`, value: `v${i}`, timestamp: T0 + i * 1000 }] });
    const written = await buildLog(dir, specs, { segmentBytes: 300 });
    const segsBefore = fs.readdirSync(dir).filter((n) => n.endsWith('.log')).length;
    // Segments whose newest record is younger than the lag (records from T0+15s on) stay dirty.
    const now = T0 + 25_000;
    const r = await compact(dir, { nowMs: now }, { minCompactionLagMs: 10_000, segmentBytes: 300 });
    const firstYoung = written.find((w) => w.timestamp > now - 10_000)!.offset;
    expect(r.firstUncleanableOffset).toBeLessThanOrEqual(firstYoung);
    expect(strip(readAll(dir))).toEqual(strip(modelCompaction(written, r.firstUncleanableOffset)));
    const cp = readOffsetCheckpoint(realIO, path.join(path.dirname(dir), 'cleaner-offset-checkpoint'));
    expect(cp.get('lag 0')).toBe(r.firstUncleanableOffset);
    // Groups are formed from the input sizes (full segments do not merge); the next cleaning
    // merges the now small cleaned segments, none above segment.bytes. (Without a lag: an emptied
    // segment has no timestamps, so its mtime — written just now — would make it young.)
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.log')).length).toBe(segsBefore);
    await compact(dir, { nowMs: now, fromStart: true }, { minCompactionLagMs: 0, segmentBytes: 300 });
    const logs = fs.readdirSync(dir).filter((n) => n.endsWith('.log'));
    expect(logs.length).toBeLessThan(segsBefore);
    for (const n of logs) expect(fs.statSync(path.join(dir, n)).size).toBeLessThanOrEqual(300);
    expect(strip(readAll(dir))).toEqual(strip(modelCompaction(written, activeBase(dir))));
    // Nothing new is dirty: the next run has nothing to do.
    const again = await compact(dir, { nowMs: now }, { minCompactionLagMs: 0, segmentBytes: 300 });
    expect(again.nothingToClean).toBeDefined();
    expect(again.passes).toBe(0);
  });

  it('a reader opened before compaction keeps reading the old segments, whole, after they are gone', async () => {
    const dir = tempPartitionPath('early-0');
    const written = await buildLog(dir, Array.from({ length: 40 }, (_, i) => ({ records: [{ key: `k${i % 4}`, value: `v${i}` }] })), { segmentBytes: 300 });
    const reader = Log.open(dir, { readOnly: true });
    const it = reader.read();
    expect(it.next().value!.offset).toBe(0);
    await compact(dir);
    expect(fs.readdirSync(dir).filter((n) => /\.(deleted|cleaned|swap)$/.test(n))).toEqual([]);
    expect([...it].map((r) => r.offset)).toEqual(written.slice(1).map((r) => r.offset));
    await reader.close();
    expect(readAll(dir).length).toBeLessThan(written.length);
  });

  it('stays within the memory bound: a small bound means a small map and more passes, too small is refused', async () => {
    const dir = tempPartitionPath('mem-0');
    const specs: BatchSpec[] = [];
    for (let b = 0; b < 40; b++) specs.push({ records: Array.from({ length: 50 }, (_, i) => ({ key: `key-${(b * 50 + i) % 1500}`, value: 'x'.repeat(20) })) });
    const written = await buildLog(dir, specs, { segmentBytes: 16 * 1024 });
    const upTo = activeBase(dir);
    const bound = 18_960_000; // I/O buffers and the fixed allowance take ~18.94 MB: ~16 KB are left for the map
    const r = await compact(dir, { maxMemoryBytes: bound });
    expect(r.memory.accountedBytes).toBeLessThanOrEqual(bound);
    expect(r.offsetMap.memoryBytes).toBeLessThan(20 * 1024);
    expect(r.passes).toBeGreaterThan(1);
    expect(strip(readAll(dir))).toEqual(strip(modelCompaction(written, upTo)));
    await expect(compact(dir, { maxMemoryBytes: 1024 * 1024, fromStart: true })).rejects.toThrow(/maxMemoryBytes 1048576 is too small/);
  });

  it('refuses cleaner options it cannot work with as invalid-argument errors naming the option, not a command-line flag', async () => {
    const dir = tempPartitionPath('badopts-0');
    await buildLog(dir, Array.from({ length: 6 }, (_, i) => ({ records: [{ key: `k${i % 2}`, value: `v${i}` }] })), { segmentBytes: 200 });
    const before = readAll(dir);
    const tooSmall = await compact(dir, { maxMemoryBytes: 1024 * 1024 }).catch((e: unknown) => e);
    expect(tooSmall).toBeInstanceOf(InvalidArgumentError);
    expect(tooSmall).toMatchObject({ kind: 'invalid-argument', exitCode: 2, options: ['maxMemoryBytes'] });
    expect((tooSmall as Error).message).toMatch(/^maxMemoryBytes 1048576 is too small/);
    expect((tooSmall as Error).message).not.toMatch(/--/);
    // An explicit map below two slots: named as offsetMapBytes, not blamed on the memory bound.
    const tinyMap = await compact(dir, { offsetMapBytes: 24 }).catch((e: unknown) => e);
    expect(tinyMap).toMatchObject({ kind: 'invalid-argument', options: ['offsetMapBytes'] });
    expect((tinyMap as Error).message).toMatch(/^offsetMapBytes must be from 48 to \d+ .*not 24$/);
    expect(readAll(dir)).toEqual(before);
  });

  it('keeps replaced segment files aside with keepRemovedDir and lists every removed file', async () => {
    const dir = tempPartitionPath('keep-0');
    await buildLog(dir, Array.from({ length: 12 }, (_, i) => ({ records: [{ key: `k${i % 2}`, value: `v${i}` }] })), { segmentBytes: 200 });
    const keep = path.join(path.dirname(dir), 'kept');
    const r = await compact(dir, { keepRemovedDir: keep });
    expect(r.removedFiles.length).toBeGreaterThan(0);
    for (const f of r.removedFiles) {
      expect(f.keptAt).toBeDefined();
      expect(fs.existsSync(f.keptAt!)).toBe(true);
      expect(f.keptAt!.startsWith(path.join(keep, 'keep-0'))).toBe(true);
    }
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.deleted'))).toEqual([]);
  });
});

/** Like buildLog, but control records get binary keys/values (00 00 00 0t / version + epoch). */
async function buildLogBinaryControl(dir: string, specs: BatchSpec[]): Promise<Rec[]> {
  const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 1 << 20 } });
  try {
    for (const b of specs) {
      await log.append(
        b.records.map((r) => ({ key: r.key === null ? null : Buffer.from(r.key, b.control ? 'latin1' : 'utf8'), value: r.value === null ? null : Buffer.from(r.value, b.control ? 'latin1' : 'utf8'), timestamp: r.timestamp })),
        { producerId: b.producerId, producerEpoch: b.producerEpoch, baseSequence: b.baseSequence, transactional: b.transactional, control: b.control },
      );
    }
    log.roll();
    await log.append([{ key: Buffer.from('tail'), value: Buffer.from('tail'), timestamp: T0 }]);
  } finally {
    await log.close();
  }
  return [];
}
