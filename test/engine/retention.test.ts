/**
 * Retention by Kafka's rules (src/engine/cleaner/retention.ts and Log.applyRetention /
 * deleteRecordsBefore): segments go exactly when their largest timestamp is older than
 * retention.ms (strictly), by size from the oldest, only as a prefix, never beyond the high
 * watermark, and the log never loses its last segment (an empty one is rolled first). Deleted
 * files are renamed `.deleted` and removed after the delay; the log start offset advances, is
 * checkpointed, and reads below it fail naming it — also for read-only opens.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { planRetention, type RetentionRules, type SegmentView } from '../../src/engine/cleaner/retention.js';
import { readOffsetCheckpoint } from '../../src/engine/checkpoint.js';
import { realIO, type FileIO } from '../../src/engine/io.js';
import { LogtoolError } from '../../src/engine/errors.js';
import { removeTempDirs, tempPartitionPath } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

const NOW = 1_700_000_000_000;
const HOUR = 3_600_000;

const seg = (baseOffset: number, sizeBytes: number, maxTimestamp: number, mtimeMs = NOW): SegmentView => ({ baseOffset, sizeBytes, maxTimestamp, mtimeMs });
const rules = (r: Partial<RetentionRules>): RetentionRules => ({ logStartOffset: 0, logEndOffset: 400, highWatermark: 400, nowMs: NOW, retentionMs: -1, retentionBytes: -1, deletePolicy: true, ...r });
const bases = (p: ReturnType<typeof planRetention>) => p.deletions.map((d) => d.baseOffset);

describe('planRetention (Kafka deletableSegments)', () => {
  const segs = [seg(0, 100, NOW - 3 * HOUR), seg(100, 100, NOW - 2 * HOUR - 1), seg(200, 100, NOW - 2 * HOUR), seg(300, 100, NOW - HOUR)];

  it('deletes by time exactly when now − largest timestamp > retention.ms', () => {
    const p = planRetention(segs, rules({ retentionMs: 2 * HOUR }));
    expect(bases(p)).toEqual([0, 100]); // 200 is exactly 2 h old: kept
    expect(p.deletions.every((d) => d.reason === 'retention.ms' && d.timestampSource === 'records')).toBe(true);
    expect(p.logStartOffset).toBe(200);
    expect(bases(planRetention(segs, rules({ retentionMs: 2 * HOUR - 1 })))).toEqual([0, 100, 200]);
  });

  it('only ever deletes a prefix: an old segment after a young one stays', () => {
    const p = planRetention([seg(0, 100, NOW), seg(100, 100, NOW - 10 * HOUR), seg(200, 100, NOW)], rules({ retentionMs: HOUR, logEndOffset: 300, highWatermark: 300 }));
    expect(bases(p)).toEqual([]);
  });

  it('never deletes by time a segment with future timestamps, and falls back to mtime without timestamps', () => {
    expect(bases(planRetention([seg(0, 100, NOW + HOUR), seg(100, 100, NOW)], rules({ retentionMs: 0, logEndOffset: 200, highWatermark: 200 })))).toEqual([]);
    const p = planRetention([seg(0, 100, -1, NOW - 5 * HOUR), seg(100, 100, -1, NOW)], rules({ retentionMs: HOUR, logEndOffset: 200, highWatermark: 200 }));
    expect(bases(p)).toEqual([0]);
    expect(p.deletions[0]!.timestampSource).toBe('mtime');
    expect(p.deletions[0]!.largestTimestamp).toBe(NOW - 5 * HOUR);
  });

  it('deletes by size from the oldest while what remains is at least retention.bytes', () => {
    const sized = [seg(0, 300, NOW), seg(100, 300, NOW), seg(200, 300, NOW), seg(300, 100, NOW)];
    expect(bases(planRetention(sized, rules({ retentionBytes: 450 })))).toEqual([0]); // 1000 − 300 = 700 ≥ 450; − 300 more = 400 < 450
    expect(bases(planRetention(sized, rules({ retentionBytes: 400 })))).toEqual([0, 100]);
    expect(bases(planRetention(sized, rules({ retentionBytes: 1000 })))).toEqual([]);
    expect(planRetention(sized, rules({ retentionBytes: 400 })).deletions.every((d) => d.reason === 'retention.bytes')).toBe(true);
  });

  it('never leaves the log without a segment: rolls first when all go, keeps a last empty one', () => {
    const old = [seg(0, 100, NOW - 9 * HOUR), seg(100, 100, NOW - 9 * HOUR)];
    const all = planRetention(old, rules({ retentionMs: HOUR, logEndOffset: 200, highWatermark: 200 }));
    expect(bases(all)).toEqual([0, 100]);
    expect(all.rollFirst).toBe(true);
    expect(all.logStartOffset).toBe(200);
    const emptyLast = planRetention([...old, seg(200, 0, -1, NOW - 9 * HOUR)], rules({ retentionMs: HOUR, logEndOffset: 200, highWatermark: 200 }));
    expect(bases(emptyLast)).toEqual([0, 100]);
    expect(emptyLast.rollFirst).toBe(false);
  });

  it('stops at the high watermark, applies the log-start rule first and size/time only with policy delete', () => {
    expect(bases(planRetention(segs, rules({ retentionMs: 0, highWatermark: 250 })))).toEqual([0, 100]);
    const lso = planRetention(segs, rules({ logStartOffset: 250, deletePolicy: false, retentionMs: 0, retentionBytes: 0 }));
    expect(bases(lso)).toEqual([0, 100]);
    expect(lso.deletions.every((d) => d.reason === 'log-start-offset')).toBe(true);
  });
});

async function timedLog(dir: string, segments: number, perSegment: number, ts: (i: number) => number, config = {}): Promise<void> {
  const log = Log.open(dir, { config: { flushMode: 'async', ...config } });
  let i = 0;
  for (let s = 0; s < segments; s++) {
    if (s > 0) log.roll();
    for (let r = 0; r < perSegment; r++, i++) await log.append([{ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), timestamp: ts(i) }]);
  }
  await log.close();
}

const logFiles = (dir: string) => fs.readdirSync(dir).filter((n) => /^\d{20}\.log/.test(n)).sort();

describe('Log retention', () => {
  it('deletes expired segments (renamed .deleted, removed at once with delay 0), advances the log start offset, reads below it fail', async () => {
    const dir = tempPartitionPath('ret-0');
    await timedLog(dir, 4, 10, (i) => NOW - (40 - i) * HOUR); // segment s holds hours 40−10s … 31−10s ago
    const log = Log.open(dir);
    const r = log.applyRetention({ nowMs: NOW, retentionMs: 15 * HOUR, deleteDelayMs: 0 });
    expect(r.deleted.map((d) => d.baseOffset)).toEqual([0, 10]); // newest records 31 h and 21 h old
    expect(r.logStartOffsetAfter).toBe(20);
    expect(r.bytesDeleted).toBe(r.deleted.reduce((n, d) => n + d.sizeBytes, 0));
    expect(logFiles(dir)).toEqual(['00000000000000000020.log', '00000000000000000030.log']);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.deleted'))).toEqual([]);
    expect(log.logStartOffset).toBe(20);
    expect(() => [...log.read({ fromOffset: 5 })]).toThrow(/offset 5 is below the log start offset 20/);
    expect([...log.read()][0]!.offset).toBe(20);
    await log.close();
  });

  it('rolls an empty segment when every segment expires, and keeps appending at the log end offset', async () => {
    const dir = tempPartitionPath('roll-0');
    await timedLog(dir, 2, 5, () => NOW - 100 * HOUR);
    const log = Log.open(dir);
    const r = log.applyRetention({ nowMs: NOW, retentionMs: HOUR, deleteDelayMs: 0 });
    expect(r.rolled).toBe(true);
    expect(r.deleted.map((d) => d.baseOffset)).toEqual([0, 5]);
    expect(log.segments.map((s) => s.baseOffset)).toEqual([10]);
    expect(log.logStartOffset).toBe(10);
    const a = await log.append([{ key: Buffer.from('x'), value: Buffer.from('y') }]);
    expect(a.baseOffset).toBe(10);
    await log.close();
    expect(logFiles(dir)).toEqual(['00000000000000000010.log']);
  });

  it('keeps deleted files until file.delete.delay.ms; a reader started before still reads them', async () => {
    const dir = tempPartitionPath('delay-0');
    await timedLog(dir, 3, 4, (i) => NOW - (20 - i) * HOUR);
    const log = Log.open(dir);
    const reader = log.read();
    expect(reader.next().value!.offset).toBe(0);
    const keep = path.join(path.dirname(dir), 'kept');
    const r = log.applyRetention({ nowMs: NOW, retentionMs: 10 * HOUR, deleteDelayMs: 60_000, keepRemovedDir: keep });
    expect(r.deleted.map((d) => d.baseOffset)).toEqual([0, 4]);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.log.deleted')).sort()).toEqual(['00000000000000000000.log.deleted', '00000000000000000004.log.deleted']);
    // The reader opened before retention still sees the old segments, in order.
    expect([...reader].map((x) => x.offset)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    for (const d of r.deleted) for (const f of d.files) expect(fs.existsSync(f.keptAt!)).toBe(true);
    expect(log.runPendingDeletions()).toBe(1);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.deleted'))).toEqual([]);
    await log.close();
  });

  it('deleteRecordsBefore advances and checkpoints the log start offset; read-only opens see it', async () => {
    const dir = tempPartitionPath('dr-0');
    await timedLog(dir, 3, 10, (i) => NOW + i);
    const log = Log.open(dir);
    expect(() => log.deleteRecordsBefore(31)).toThrow(/beyond the log end offset 30/);
    const dry = log.deleteRecordsBefore(15, { dryRun: true });
    expect(dry.deleted.map((d) => d.baseOffset)).toEqual([0]);
    expect(log.logStartOffset).toBe(0);
    const r = log.deleteRecordsBefore(15, { deleteDelayMs: 0 });
    expect(r.deleted.map((d) => [d.baseOffset, d.reason])).toEqual([[0, 'log-start-offset']]);
    expect(log.logStartOffset).toBe(15);
    const cp = readOffsetCheckpoint(realIO, path.join(path.dirname(dir), 'log-start-offset-checkpoint'));
    expect(cp.get('dr 0')).toBe(15);
    // Never backwards.
    expect(log.deleteRecordsBefore(3).logStartOffsetAfter).toBe(15);
    await log.close();
    const ro = Log.open(dir, { readOnly: true });
    expect(ro.logStartOffset).toBe(15);
    expect([...ro.read()][0]!.offset).toBe(15);
    let err: unknown;
    try {
      [...ro.read({ fromOffset: 14 })];
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LogtoolError);
    expect((err as LogtoolError).message).toMatch(/below the log start offset 15/);
    expect(() => [...ro.reader().batches({ fromOffset: 2 })]).toThrow(/below the log start offset 15/);
    await ro.close();
  });

  it('applies retention in the background when configured, and not otherwise', async () => {
    const dir = tempPartitionPath('bg-0');
    await timedLog(dir, 3, 3, () => Date.now() - 10 * HOUR);
    const quiet = Log.open(dir, { config: { retentionMs: HOUR, fileDeleteDelayMs: 0 } });
    await new Promise((r) => setTimeout(r, 80));
    expect(quiet.segments.length).toBe(3);
    await quiet.close();
    const log = Log.open(dir, { config: { retentionMs: HOUR, fileDeleteDelayMs: 0 }, retentionCheckIntervalMs: 20 });
    const deadline = Date.now() + 5000;
    while (log.logStartOffset < 9 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(log.logStartOffset).toBe(9);
    expect(log.segments.map((s) => s.baseOffset)).toEqual([9]);
    await log.close();
  });
});

describe('segments retired while a flush syncs them', () => {
  it('are closed only once that flush has finished: no fdatasync on a descriptor closed meanwhile', async () => {
    // Real files; the I/O layer only holds each asynchronous fdatasync until released, and notes
    // a close of a descriptor whose fdatasync is still waiting.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const waiting = new Set<number>();
    const closedWhileSyncing: number[] = [];
    const io: FileIO = {
      ...realIO,
      datasyncAsync(fd) {
        waiting.add(fd);
        return gate.then(() => {
          waiting.delete(fd);
          return realIO.datasyncAsync(fd);
        });
      },
      close(fd) {
        if (waiting.has(fd)) closedWhileSyncing.push(fd);
        realIO.close(fd);
      },
    };
    const dir = tempPartitionPath('retire-syncing-0');
    const log = Log.open(dir, { io, config: { segmentBytes: 1024, flushMode: 'async' } });
    for (let i = 0; i < 40; i++) await log.append([{ key: Buffer.from(`k${i}`), value: Buffer.alloc(100, i), timestamp: NOW + i }]);
    expect(log.segments.length).toBeGreaterThan(3);
    const flushing = log.flush(); // syncs the sealed segments; held at the first fdatasync
    await new Promise((r) => setImmediate(r));
    expect(waiting.size).toBeGreaterThan(0);
    const report = log.deleteRecordsBefore(30, { deleteDelayMs: 0 });
    expect(report.deleted.length).toBeGreaterThan(0);
    release();
    await flushing;
    expect(closedWhileSyncing).toEqual([]);
    expect(log.positions().flushed.offset).toBe(40);
    await log.close();
    const ro = Log.open(dir, { readOnly: true });
    expect([...ro.read()].map((r) => r.offset)).toEqual([30, 31, 32, 33, 34, 35, 36, 37, 38, 39]);
    await ro.close();
  });
});
