/**
 * Round trips through `Log`: random records appended across many segment rolls (small
 * segment.bytes, small index.interval.bytes, tiny index files, time-based rolls), then read back
 * identically by offset and by time from a read-only open, reopened for write with offsets
 * continuing, and segmentInfos() checked against the files and the records.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Log, type LogConfig } from '../../src/api.js';
import type { RecordInput } from '../../src/engine/format/record-batch.js';
import { LogtoolError } from '../../src/engine/errors.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { plain, plainInput, recordArb, T0, type PlainRecord } from './arbitraries.js';

afterAll(removeTempDirs);

type Rec = RecordInput & { timestamp: number };

/** Batches of records with mostly increasing timestamps (local disorder, sometimes backwards). */
const batchesArb = (maxBatches: number) =>
  fc
    .array(fc.array(recordArb({ maxBytes: 160, tsSpread: 400, maxHeaders: 2 }), { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: maxBatches, size: 'max' })
    .map((bs) => bs.map((b) => b.map((r) => ({ ...r }) as Rec)));

function assignTimestamps(batches: Rec[][], startIndex: number, stepMs: number): void {
  let i = startIndex;
  for (const b of batches) for (const r of b) r.timestamp = T0 + i++ * stepMs + (r.timestamp - T0);
}

const configArb = fc.record({
  segmentBytes: fc.integer({ min: 150, max: 5000 }),
  indexIntervalBytes: fc.integer({ min: 0, max: 700 }),
  segmentIndexBytes: fc.constantFrom(24, 40, 96, 10 * 1024 * 1024),
  segmentMs: fc.constantFrom(7 * 24 * 3600 * 1000, 2000, 20_000),
});

function expectedFrom(all: PlainRecord[], opts: { fromOffset?: number; fromTime?: number; maxRecords?: number }): PlainRecord[] {
  let start = opts.fromOffset ?? 0;
  if (opts.fromTime !== undefined) {
    const j = all.findIndex((r) => r.timestamp >= opts.fromTime!);
    if (j < 0) return [];
    start = Math.max(start, all[j]!.offset);
  }
  const out = all.filter((r) => r.offset >= start);
  return opts.maxRecords !== undefined ? out.slice(0, opts.maxRecords) : out;
}

function readAll(log: Log, opts: Parameters<Log['read']>[0] = {}): PlainRecord[] {
  return [...log.read(opts)].map(plain);
}

function checkSegmentInfos(log: Log, dir: string, all: PlainRecord[], cfg: Partial<LogConfig>): void {
  const infos = log.segmentInfos();
  const logFiles = fs.readdirSync(dir).filter((n) => n.endsWith('.log')).sort();
  expect(infos.map((i) => path.basename(i.file))).toEqual(logFiles);
  expect(infos[0]!.baseOffset).toBe(0);
  let totalBytes = 0;
  for (let i = 0; i < infos.length; i++) {
    const s = infos[i]!;
    const st = fs.statSync(s.file);
    expect(s.sizeBytes).toBe(st.size);
    totalBytes += s.sizeBytes;
    const next = infos[i + 1]?.baseOffset ?? log.nextOffset;
    const recs = all.filter((r) => r.offset >= s.baseOffset && r.offset < next);
    if (recs.length === 0) {
      // Only the active segment may be empty (rolled at a boundary, nothing written yet).
      expect(i).toBe(infos.length - 1);
      expect(s.sizeBytes).toBe(0);
      expect(s.firstOffset).toBeUndefined();
      continue;
    }
    expect(s.firstOffset).toBe(s.baseOffset);
    expect(s.firstOffset).toBe(recs[0]!.offset);
    expect(s.lastOffset).toBe(recs[recs.length - 1]!.offset);
    expect(s.lastOffset! + 1).toBe(next);
    expect(s.firstTimestamp).toBe(recs[0]!.timestamp);
    expect(s.maxTimestamp).toBe(Math.max(...recs.map((r) => r.timestamp)));
    // Closed cleanly: indexes trimmed to their entries.
    expect(fs.statSync(s.file.replace(/\.log$/, '.index')).size).toBe(s.indexEntries * 8);
    expect(fs.statSync(s.file.replace(/\.log$/, '.timeindex')).size).toBe(s.timeIndexEntries * 12);
    // The time index always ends with the segment's max timestamp (final entry on roll/close).
    expect(s.timeIndexEntries).toBeGreaterThan(0);
    // A segment exceeds segment.bytes only when it holds a single oversized batch.
    if (s.sizeBytes > cfg.segmentBytes!) expect([...log.reader().batches({ fromOffset: s.baseOffset, maxBatches: 2 })].filter((b) => b.segment.baseOffset === s.baseOffset).length).toBe(1);
  }
  if (totalBytes > 3 * cfg.segmentBytes!) expect(infos.length).toBeGreaterThan(1);
}

describe('Log round trip (property)', () => {
  it('appends across many rolls, reads back by offset and time, reopens and continues', async () => {
    let runs = 0;
    let maxSegments = 0;
    await fc.assert(
      fc.asyncProperty(
        batchesArb(50),
        batchesArb(12),
        configArb,
        fc.array(fc.nat(), { minLength: 4, maxLength: 8 }),
        fc.boolean(),
        async (first, more, cfgRaw, probes, monotone) => {
          runs++;
          assignTimestamps(first, 0, monotone ? 1000 : 50);
          assignTimestamps(more, 10_000, monotone ? 1000 : 50);
          const config: Partial<LogConfig> = { ...cfgRaw, flushMode: 'async' };
          const dir = path.join(makeTempDir(), 't-0');
          const expected: PlainRecord[] = [];

          const log = Log.open(dir, { config });
          try {
            expect(log.nextOffset).toBe(0);
            for (const b of first) {
              const res = await log.append(b);
              expect(res.baseOffset).toBe(expected.length);
              expect(res.lastOffset).toBe(expected.length + b.length - 1);
              expect(res.count).toBe(b.length);
              for (const r of b) expected.push(plainInput(r, expected.length));
            }
            expect(log.nextOffset).toBe(expected.length);
            // Readable through the writer before close.
            expect(readAll(log)).toEqual(expected);
          } finally {
            await log.close();
          }
          expect(fs.existsSync(path.join(path.dirname(dir), '.kafka_cleanshutdown'))).toBe(true);
          expect(fs.readFileSync(path.join(path.dirname(dir), 'recovery-point-offset-checkpoint'), 'utf8')).toBe(`0\n1\nt 0 ${expected.length}\n`);

          const ro = Log.open(dir, { readOnly: true });
          try {
            expect(ro.nextOffset).toBe(expected.length);
            expect(readAll(ro)).toEqual(expected);
            for (const p of probes) {
              const fromOffset = p % (expected.length + 1);
              expect(readAll(ro, { fromOffset })).toEqual(expectedFrom(expected, { fromOffset }));
              const maxRecords = (p % 7) + 1;
              expect(readAll(ro, { fromOffset, maxRecords })).toEqual(expectedFrom(expected, { fromOffset, maxRecords }));
              const anchor = expected[p % expected.length]!.timestamp;
              for (const fromTime of [anchor, anchor + 1, anchor - 1]) {
                expect(readAll(ro, { fromTime }), `fromTime ${fromTime}`).toEqual(expectedFrom(expected, { fromTime }));
              }
            }
            const minTs = Math.min(...expected.map((r) => r.timestamp));
            const maxTs = Math.max(...expected.map((r) => r.timestamp));
            expect(readAll(ro, { fromTime: minTs - 1 })).toEqual(expected);
            expect(readAll(ro, { fromTime: maxTs + 1 })).toEqual([]);
            expect(readAll(ro, { fromTime: maxTs })).toEqual(expectedFrom(expected, { fromTime: maxTs }));
            const batches = [...ro.reader().batches()];
            expect(batches.length).toBe(first.length);
            expect(batches.every((b) => b.crcValid === true)).toBe(true);
            checkSegmentInfos(ro, dir, expected, config);
            maxSegments = Math.max(maxSegments, ro.segments.length);
          } finally {
            await ro.close();
          }

          // Reopen for write: offsets continue where they ended.
          const again = Log.open(dir, { config });
          try {
            expect(again.nextOffset).toBe(expected.length);
            expect(again.loadReport.cleanShutdown).toBe(true);
            for (const b of more) {
              const res = await again.append(b);
              expect(res.baseOffset).toBe(expected.length);
              for (const r of b) expected.push(plainInput(r, expected.length));
            }
          } finally {
            await again.close();
          }
          const ro2 = Log.open(dir, { readOnly: true });
          try {
            expect(ro2.nextOffset).toBe(expected.length);
            expect(readAll(ro2)).toEqual(expected);
            const p = probes[0]! % expected.length;
            expect(readAll(ro2, { fromOffset: p })).toEqual(expectedFrom(expected, { fromOffset: p }));
            const t = expected[p]!.timestamp;
            expect(readAll(ro2, { fromTime: t })).toEqual(expectedFrom(expected, { fromTime: t }));
            checkSegmentInfos(ro2, dir, expected, config);
          } finally {
            await ro2.close();
          }
        },
      ),
      { numRuns: 50, seed: 1234567, endOnFailure: true },
    );
    expect(runs).toBe(50);
    expect(maxSegments).toBeGreaterThan(10); // the generator really exercises rolling
  });
});

describe('Log: flush modes, crash and reopen', () => {
  const mk = (n: number, tag: string): Rec[] => Array.from({ length: n }, (_, i) => ({ key: Buffer.from(`${tag}-k${i}`), value: Buffer.from(`${tag}-v${i}`.repeat(5)), timestamp: T0 + i }));

  it('sync mode: concurrent appends get consecutive offsets and resolve flushed', async () => {
    const dir = path.join(makeTempDir(), 't-0');
    const log = Log.open(dir, { config: { flushMode: 'sync', segmentBytes: 2000, indexIntervalBytes: 100 } });
    const batches = Array.from({ length: 40 }, (_, i) => mk(1 + (i % 3), `s${i}`));
    const results = await Promise.all(batches.map((b) => log.append(b)));
    let next = 0;
    for (let i = 0; i < results.length; i++) {
      expect(results[i]!.baseOffset).toBe(next);
      expect(results[i]!.status).toBe('flushed');
      next += batches[i]!.length;
    }
    expect(log.positions().flushed.offset).toBe(next);
    await log.close();
    const ro = Log.open(dir, { readOnly: true });
    expect(readAll(ro).map((r) => r.offset)).toEqual(Array.from({ length: next }, (_, i) => i));
    expect(ro.segments.length).toBeGreaterThan(1);
    await ro.close();
  });

  it('buffered mode: appends resolve written and are all in the log after close', async () => {
    const dir = path.join(makeTempDir(), 't-0');
    const log = Log.open(dir, { config: { flushMode: 'buffered', segmentBytes: 1500, indexIntervalBytes: 64, batchBytes: 0 } }); // a batch per append: commits cross rolls
    const expected: PlainRecord[] = [];
    for (let i = 0; i < 60; i++) {
      const b = mk(1 + (i % 4), `b${i}`);
      const res = await log.append(b);
      expect(res.status).toBe('written');
      for (const r of b) expected.push(plainInput(r, expected.length));
    }
    await log.close();
    const ro = Log.open(dir, { readOnly: true });
    expect(readAll(ro)).toEqual(expected);
    expect(ro.segments.length).toBeGreaterThan(3);
    await ro.close();
  });

  it('after a crash (no close), reopening recovers every committed batch and continues offsets', async () => {
    const dir = path.join(makeTempDir(), 't-0');
    const config: Partial<LogConfig> = { flushMode: 'async', segmentBytes: 1000, indexIntervalBytes: 50 };
    const log = Log.open(dir, { config });
    const expected: PlainRecord[] = [];
    for (let i = 0; i < 50; i++) {
      const b = mk(2, `c${i}`);
      await log.append(b);
      for (const r of b) expected.push(plainInput(r, expected.length));
    }
    log.abandon();
    expect(fs.existsSync(path.join(path.dirname(dir), '.kafka_cleanshutdown'))).toBe(false);
    const warnings: unknown[] = [];
    const again = Log.open(dir, { config, onWarning: (w) => warnings.push(w) });
    expect(again.loadReport.cleanShutdown).toBe(false);
    expect(again.nextOffset).toBe(expected.length);
    expect(warnings).toEqual([]);
    const res = await again.append(mk(1, 'after'));
    expect(res.baseOffset).toBe(expected.length);
    expected.push(plainInput(mk(1, 'after')[0]!, expected.length));
    await again.close();
    const ro = Log.open(dir, { readOnly: true });
    expect(readAll(ro)).toEqual(expected);
    await ro.close();
  });

  it('rejects writes to a read-only log, reads below the start offset, and appends after close', async () => {
    const dir = path.join(makeTempDir(), 't-0');
    const log = Log.open(dir, { config: { flushMode: 'async' } });
    await log.append(mk(3, 'x'));
    await log.close();
    await expect(async () => log.append(mk(1, 'y'))).rejects.toMatchObject({ kind: 'closed' });
    const ro = Log.open(dir, { readOnly: true });
    expect(() => ro.append(mk(1, 'z'))).toThrow(LogtoolError);
    expect(() => [...ro.read({ fromOffset: -1 })]).toThrow(expect.objectContaining({ kind: 'out-of-range' }));
    expect(readAll(ro, { fromOffset: 3 })).toEqual([]);
    expect(readAll(ro, { fromOffset: 99 })).toEqual([]);
    await ro.close();
  });

  it('reopening for write leaves the trimmed (empty) indexes of sealed segments alone', async () => {
    const dir = path.join(makeTempDir(), 't-0');
    const config: Partial<LogConfig> = { flushMode: 'async', segmentBytes: 300, indexIntervalBytes: 4096 };
    const log = Log.open(dir, { config });
    for (let i = 0; i < 12; i++) await log.append(mk(1, `r${i}`));
    await log.close();
    const sizes = () => Object.fromEntries(fs.readdirSync(dir).filter((n) => /\.(index|timeindex)$/.test(n)).map((n) => [n, fs.statSync(path.join(dir, n)).size]));
    const before = sizes();
    expect(Object.keys(before).length).toBeGreaterThan(4);
    expect(Object.entries(before).filter(([n]) => n.endsWith('.index')).every(([, s]) => s === 0)).toBe(true);
    const again = Log.open(dir, { config });
    // While open, only the active segment's indexes are re-extended to segment.index.bytes.
    const active = again.activeSegment.baseOffset;
    for (const [n, s] of Object.entries(sizes())) {
      if (n.startsWith(String(active).padStart(20, '0'))) continue;
      expect(s, n).toBe(before[n]);
    }
    await again.close();
    expect(sizes()).toEqual(before);
  });

  it('a directory not named topic-N is refused for writing', () => {
    const dir = path.join(makeTempDir(), 'nopartition');
    expect(() => Log.open(dir)).toThrow(expect.objectContaining({ kind: 'invalid-argument', name: 'InvalidDirectoryError' }));
  });
});
