/**
 * The engine's own walks of a `.log` (Kafka's FileLogInputStream reading by position: verify,
 * recovery's LogSegment.recover, rebuild-index and its --verify, the index checks) keep nothing of
 * an entry past the next, so they read through one buffer (ScanOptions.reuseBuffer) instead of a
 * fresh 1 MiB chunk per read that waits for the garbage collector (issue 15: verify --deep's peak
 * memory, the scan's speed). Observed through the file-I/O layer: the distinct buffers the `.log`
 * reads go into, whatever the segment's size (the window grows 16 KiB → 1 MiB: 7 buffers).
 * Readers that hand entries out (Log.read, batches()) still never refill a buffer in place.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { nativeIO, realIO, withIO } from '../../src/engine/io.js';
import { verifyLog } from '../../src/engine/recovery/log-verifier.js';
import { verifySegmentIndexes } from '../../src/engine/recovery/index-verifier.js';
import { rebuildSegmentIndexes, verifySegmentIndexFiles } from '../../src/engine/recovery/index-rebuilder.js';
import { EntryScanner } from '../../src/engine/segment/file-records.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { pathTrackingIO } from '../helpers/path-io.js';

afterAll(removeTempDirs);

const BATCHES = 1000;
const RECORDS_PER_BATCH = 100;
/** The window's growth from its 16 KiB first read to 1 MiB chunks, and a little slack. */
const MAX_BUFFERS = 9;

/** Opening and closing a log read a few entries beside a walk (each through its own small buffer). */
const OPEN_BUFFERS = 4;

/** `fn` on the log opened read-only (inside the observed layer: its files are opened through it). */
async function withLog<T>(fn: (log: Log) => T): Promise<T> {
  const log = Log.open(dir, { readOnly: true });
  try {
    return fn(log);
  } finally {
    await log.close();
  }
}

/** Runs `fn` with `.log` reads observed: the distinct ArrayBuffers read into and the bytes read. */
async function observeLogReads<T>(fn: () => T | Promise<T>): Promise<{ result: T; buffers: number; bytes: number }> {
  const buffers = new Set<ArrayBufferLike>();
  let bytes = 0;
  const io = pathTrackingIO((name, base) => ({
    read: (fd, buf, offset, length, position) => {
      const n = base.read(fd, buf, offset, length, position);
      if (name(fd).endsWith('.log')) {
        buffers.add(buf.buffer);
        bytes += n;
      }
      return n;
    },
  }), nativeIO);
  const result = await withIO(io, fn);
  return { result, buffers: buffers.size, bytes };
}

let dir: string;
let logBytes: number;
const segmentLog = () => path.join(dir, '00000000000000000000.log');

beforeAll(async () => {
  dir = path.join(makeTempDir('logtool-scan-reuse-'), 'reuse-0');
  const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 64 << 20 }, rememberConfig: false });
  const value = Buffer.alloc(100, 0x61);
  for (let b = 0; b < BATCHES; b++) await log.append(Array.from({ length: RECORDS_PER_BATCH }, () => ({ key: null, value })));
  await log.close();
  logBytes = fs.statSync(segmentLog()).size;
  expect(logBytes).toBeGreaterThan(10 << 20); // 10+ chunks: a fresh buffer per chunk would show
});

describe('internal walks read a segment through one reused buffer', () => {
  it('verify --deep (every CRC, every record checked)', async () => {
    const { result, buffers, bytes } = await observeLogReads(() => withLog((log) => verifyLog(log, { deep: true })));
    expect(result.problems).toEqual([]);
    expect(result.records).toBe(BATCHES * RECORDS_PER_BATCH);
    expect(bytes).toBeGreaterThanOrEqual(logBytes);
    expect(buffers).toBeLessThanOrEqual(MAX_BUFFERS + OPEN_BUFFERS);
  });

  it('the index checks (header-only walk)', async () => {
    const { result, buffers } = await observeLogReads(() => withLog((log) => verifySegmentIndexes(log.segments[0]!)));
    expect(result).toEqual([]);
    expect(buffers).toBeLessThanOrEqual(MAX_BUFFERS + OPEN_BUFFERS);
  });

  it('full recovery (LogSegment.recover)', async () => {
    fs.rmSync(path.join(path.dirname(dir), '.kafka_cleanshutdown'), { force: true });
    const { result: report, buffers, bytes } = await observeLogReads(async () => {
      const log = Log.open(dir, { recovery: { forceRecoverAll: true } });
      const r = log.loadReport;
      await log.close();
      return r;
    });
    expect(report.batchesValidated).toBe(BATCHES);
    expect(report.repaired).toBe(false);
    expect(bytes).toBeGreaterThanOrEqual(logBytes);
    expect(buffers).toBeLessThanOrEqual(MAX_BUFFERS + OPEN_BUFFERS);
  });

  it('rebuild-index and rebuild-index --verify', async () => {
    const rebuilt = await observeLogReads(() => rebuildSegmentIndexes(realIO, dir, 0, { indexIntervalBytes: 4096 }));
    expect(rebuilt.result.scan.batches).toBe(BATCHES);
    expect(rebuilt.bytes).toBeGreaterThanOrEqual(logBytes);
    expect(rebuilt.buffers).toBeLessThanOrEqual(MAX_BUFFERS);
    const verified = await observeLogReads(() => verifySegmentIndexFiles(realIO, dir, 0, { indexIntervalBytes: 4096 }));
    expect(verified.result.differenceCount).toBe(0);
    expect(verified.buffers).toBeLessThanOrEqual(MAX_BUFFERS);
  });
});

describe('Log.read({ reuseBuffer: true }) (what `logtool read` uses: it copies what it prints)', () => {
  it('returns every record as the default read does while each is used before the next, through one reused buffer per segment', async () => {
    const rdir = path.join(makeTempDir('logtool-read-reuse-'), 'read-reuse-0');
    const valueFor = (o: number): Buffer => Buffer.from(`value-${o}-`.padEnd(90 + (o % 20), String.fromCharCode(97 + (o % 26))));
    const w = Log.open(rdir, { config: { flushMode: 'async', segmentBytes: 4 << 20 }, rememberConfig: false });
    for (let b = 0; b < 600; b++) await w.append(Array.from({ length: 100 }, (_, i) => ({ key: Buffer.from(`k${b * 100 + i}`), value: valueFor(b * 100 + i) })));
    await w.close();
    const readAll = (reuseBuffer: boolean, fromOffset: number) =>
      observeLogReads(async () => {
        const log = Log.open(rdir, { readOnly: true });
        try {
          let n = 0;
          for (const r of log.read({ fromOffset, reuseBuffer })) {
            const o = n + fromOffset;
            if (r.offset !== o || !r.value!.equals(valueFor(o)) || r.key!.toString() !== `k${o}`) throw new Error(`record ${o} read back as ${r.offset} (reuseBuffer ${reuseBuffer})`);
            n++;
          }
          return { n, segments: log.segments.length };
        } finally {
          await log.close();
        }
      });
    for (const from of [0, 12_345]) {
      const fresh = await readAll(false, from);
      const reused = await readAll(true, from);
      expect(reused.result.n).toBe(600 * 100 - from);
      expect(fresh.result.n).toBe(reused.result.n);
      expect(reused.result.segments).toBeGreaterThan(1); // the read crosses segments
      expect(reused.bytes).toBeGreaterThan(5 << 20);
      // One buffer per chunk (a fresh 1 MiB each) against one window per segment.
      expect(fresh.buffers).toBeGreaterThan(reused.buffers);
      expect(reused.buffers).toBeLessThanOrEqual(reused.result.segments * MAX_BUFFERS + OPEN_BUFFERS);
    }
  });
});

describe('Log.readViews() (one reused view: valid until the next step)', () => {
  it('reads through one reused buffer per segment, as read({ reuseBuffer: true })', async () => {
    const walk = (views: boolean) =>
      observeLogReads(() =>
        withLog((log) => {
          let n = 0;
          if (views) for (const v of log.readViews()) n += v.valueLength === 100 ? 1 : 0;
          else for (const r of log.read()) n += r.value!.length === 100 ? 1 : 0;
          return n;
        }),
      );
    const fresh = await walk(false);
    const viewed = await walk(true);
    expect(viewed.result).toBe(BATCHES * RECORDS_PER_BATCH);
    expect(fresh.result).toBe(viewed.result);
    expect(viewed.bytes).toBeGreaterThanOrEqual(logBytes);
    expect(fresh.buffers).toBeGreaterThan(viewed.buffers);
    expect(viewed.buffers).toBeLessThanOrEqual(MAX_BUFFERS + OPEN_BUFFERS);
  });
});

describe('a scan that hands entries out', () => {
  it('never refills a buffer an entry came from; a reusing scan does, which is why only internal walks use it', () => {
    const firstBytesOf = (reuseBuffer: boolean) => {
      const scanner = new EntryScanner({ io: realIO, path: segmentLog(), reuseBuffer });
      const kept = [];
      for (const e of scanner.entries()) kept.push({ e, copy: Buffer.from(e.buf.subarray(e.bufPos, e.bufPos + 61)) });
      return kept.filter(({ e, copy }) => !e.buf.subarray(e.bufPos, e.bufPos + 61).equals(copy)).length;
    };
    expect(firstBytesOf(false)).toBe(0);
    expect(firstBytesOf(true)).toBeGreaterThan(0);
  });
});
