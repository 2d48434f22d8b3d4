/**
 * Invariants asserted at the engine's boundaries (issue 11): a broken one is an InternalError of
 * kind 'internal' (exit 1) naming the file and byte position, raised before anything is written —
 * segment append (offsets increase, the described batches cover the bytes), index append
 * (positions and offsets within the segment), the entry scanner's bounds, and the segment list.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { realIO } from '../../src/engine/io.js';
import { ExitCode, InternalError, LogtoolError, assert } from '../../src/engine/errors.js';
import { LogSegment, segmentFileName } from '../../src/engine/segment/segment.js';
import { EntryScanner } from '../../src/engine/segment/file-records.js';
import { LogSegments } from '../../src/engine/log/log-segments.js';
import { encodeRecordBatch } from '../../src/engine/format/record-batch.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { thrown } from '../helpers/errors.js';

afterAll(removeTempDirs);

const caught = (fn: () => unknown): LogtoolError => thrown(fn, InternalError);

function segmentAt(base: number): { seg: LogSegment; dir: string } {
  const dir = path.join(makeTempDir('logtool-inv-'), 't-0');
  fs.mkdirSync(dir);
  const seg = new LogSegment({ io: realIO, dir, baseOffset: base, indexIntervalBytes: 0, maxIndexBytes: 1024, writable: true, create: 'exclusive' });
  return { seg, dir };
}

const batchAt = (baseOffset: number, n = 1) => encodeRecordBatch(Array.from({ length: n }, (_, i) => ({ value: Buffer.from(`v${i}`), timestamp: 1_000 + i })), { baseOffset, nowMs: 1 });

describe('assert', () => {
  it('throws a typed internal error that the CLI maps to exit 1 and one "internal error" line', () => {
    const e = caught(() => assert(false, 'two plus two', { file: '/x/00.log', position: 7 }));
    expect(e.kind).toBe('internal');
    expect(e.exitCode).toBe(ExitCode.operational);
    expect(e.describe()).toBe('internal error: /x/00.log at byte 7: assertion failed: two plus two');
    expect(() => assert(true, 'fine')).not.toThrow();
  });
});

describe('segment append', () => {
  it('refuses a batch whose offsets do not increase, before writing a byte', () => {
    const { seg, dir } = segmentAt(10);
    const a = batchAt(10, 3);
    seg.append(a.buf, 0, a.buf.length, [{ size: a.buf.length, lastOffset: 12, maxTimestamp: a.maxTimestamp }]);
    const again = batchAt(12);
    const e = caught(() => seg.append(again.buf, 0, again.buf.length, [{ size: again.buf.length, lastOffset: 12, maxTimestamp: again.maxTimestamp }]));
    expect(e.message).toMatch(/offset 12 appended after offset 12/);
    expect(e.file).toBe(path.join(dir, segmentFileName(10, '.log')));
    expect(e.position).toBe(a.buf.length);
    expect(fs.statSync(e.file!).size).toBe(a.buf.length);
    seg.close();
  });

  it('refuses a batch below the segment base and batches that do not cover the bytes', () => {
    const { seg } = segmentAt(100);
    const low = batchAt(50);
    expect(caught(() => seg.append(low.buf, 0, low.buf.length, [{ size: low.buf.length, lastOffset: 50, maxTimestamp: 0 }])).message).toMatch(/offsets must increase/);
    const b = batchAt(100);
    expect(caught(() => seg.append(b.buf, 0, b.buf.length, [{ size: b.buf.length - 1, lastOffset: 100, maxTimestamp: 0 }])).message).toMatch(/batches of \d+ bytes described for an append of \d+/);
    expect(caught(() => seg.append(b.buf, 0, b.buf.length + 1, [])).message).toMatch(/outside a buffer/);
    expect(seg.size).toBe(0);
    seg.close();
  });
});

describe('index append', () => {
  it('refuses a position beyond 32 bits and a time-index offset outside the segment', () => {
    const { seg } = segmentAt(0);
    expect(caught(() => seg.offsetIndex.append(5, 2 ** 31)).message).toMatch(/not a 32-bit file position/);
    expect(caught(() => seg.timeIndex.maybeAppend(5_000, 2 ** 31 + 1)).message).toMatch(/outside segment 0/);
    expect(seg.offsetIndex.entries).toBe(0);
    expect(seg.timeIndex.entries).toBe(0);
    seg.close();
  });
});

describe('entry scanner bounds', () => {
  it('refuses a negative or fractional start position', () => {
    const { seg } = segmentAt(0);
    expect(caught(() => new EntryScanner({ io: realIO, path: seg.logPath, startPosition: -1 })).message).toMatch(/scan from position -1/);
    expect(caught(() => new EntryScanner({ io: realIO, path: seg.logPath, startPosition: 1.5 })).message).toMatch(/scan from position 1.5/);
    seg.close();
  });
});

describe('segment list', () => {
  it('refuses a segment that does not start above the active one (offsets across segments)', () => {
    const { seg: s10 } = segmentAt(10);
    const { seg: s5 } = segmentAt(5);
    const list = new LogSegments([s10]);
    expect(caught(() => list.add(s5)).message).toMatch(/segment 5 added after segment 10/);
    expect(list.all.map((s) => s.baseOffset)).toEqual([10]);
    expect(list.floor(9)).toBeUndefined();
    expect(list.floor(1000)).toBe(s10);
    s10.close();
    s5.close();
  });
});

describe('encodeRecordBatch', () => {
  it('returns the header fields the log needs, equal to what the header holds', () => {
    for (const opts of [{ baseOffset: 7, nowMs: 1 }, { baseOffset: 7, nowMs: 99, logAppendTime: true }, { baseOffset: 0, nowMs: 1, compression: 1 }]) {
      const e = encodeRecordBatch([{ value: Buffer.from('a'), timestamp: 5 }, { value: null, timestamp: 40 }, { value: Buffer.from('c'), timestamp: 9 }], opts);
      expect(e.buf.readBigInt64BE(0)).toBe(BigInt(opts.baseOffset));
      expect(e.lastOffsetDelta).toBe(e.buf.readInt32BE(23));
      expect(e.count).toBe(e.buf.readInt32BE(57));
      expect(e.maxTimestamp).toBe(Number(e.buf.readBigInt64BE(35)));
      expect([e.lastOffsetDelta, e.count, e.maxTimestamp]).toEqual([2, 3, opts.logAppendTime ? 99 : 40]);
    }
    const big = encodeRecordBatch([{ value: null, timestamp: 2n ** 60n }], { baseOffset: 0, nowMs: 1 });
    expect(big.maxTimestamp).toBe(Number(big.buf.readBigInt64BE(35)));
  });
});
