/**
 * The cleaner's read-ahead (batch-reader.ts, issue 15): while one buffer's batches are checked,
 * the bytes after them are read into the other in the thread pool. Read with a small chunk, so
 * that a test log crosses many buffer boundaries and has batches larger than a buffer: the same
 * batches as one large buffer gives, every byte read once, most of them ahead, never into a
 * skipped range; a scan stopped early leaves no read in flight; a read-ahead that fails stops the
 * scan with an error naming the file.
 */
import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/engine/log/log.js';
import { realIO, type FileIO } from '../../../src/engine/io.js';
import { LogtoolError } from '../../../src/engine/errors.js';
import { BatchReader, type Batch } from '../../../src/engine/cleaner/batch-reader.js';
import type { SkipRange } from '../../../src/engine/cleaner/dead-runs.js';
import type { LogSegment } from '../../../src/engine/segment/segment.js';
import { removeTempDirs, tempPartitionPath } from '../../helpers/fixtures.js';
import { pathTrackingIO } from '../../helpers/path-io.js';

afterAll(removeTempDirs);

const CHUNK_BYTES = 16 * 1024;

/** One sealed segment of ~200 batches of 1 to 12 records of 40 to 1,000 bytes (some batches larger than half a chunk). */
async function segmentOfMixedBatches(dir: string): Promise<void> {
  const log = Log.open(dir, { config: { flushMode: 'async' } });
  try {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    for (let b = 0; b < 200; b++) {
      // Every 25th batch is 12 records of 1,000 bytes (larger than a buffer).
      const big = b % 25 === 0;
      const count = big ? 12 : 1 + rand(12);
      await log.append(Array.from({ length: count }, (_, i) => ({ key: Buffer.from(`k${b}-${i}`), value: Buffer.alloc(big ? 1000 : 40 + rand(960), b), timestamp: 1_700_000_000_000 + b })));
    }
    log.roll();
    await log.append([{ key: Buffer.from('end'), value: Buffer.from('end') }]);
  } finally {
    await log.close();
  }
}

interface ReadLog {
  sync: [number, number][];
  async: [number, number][];
  inFlight: number;
}

/** Records the `.log` reads ([position, bytes]); with `failAsync`, asynchronous reads fail with EIO. */
function readRecordingIO(reads: ReadLog, failAsync = false): FileIO {
  return pathTrackingIO((name, base) => ({
    read(fd, buf, offset, length, position) {
      const n = base.read(fd, buf, offset, length, position);
      if (name(fd).endsWith('.log')) reads.sync.push([position, n]);
      return n;
    },
    async readAsync(fd, buf, offset, length, position) {
      reads.inFlight++;
      try {
        if (failAsync) throw new LogtoolError('io', 'read failed: EIO (i/o error)', { file: name(fd) });
        const n = await base.readAsync!(fd, buf, offset, length, position);
        if (name(fd).endsWith('.log')) reads.async.push([position ?? -1, n]);
        return n;
      } finally {
        reads.inFlight--;
      }
    },
  }), realIO);
}

const digest = (e: Batch) => `${e.position}+${e.size}:${crypto.createHash('sha256').update(e.buf.subarray(e.bufPos, e.bufPos + e.size)).digest('hex')}`;

async function scan(reader: BatchReader, seg: LogSegment, skips?: SkipRange[], stopAfter = Infinity): Promise<string[]> {
  const out: string[] = [];
  for await (const e of reader.batches(seg, 0, undefined, skips)) {
    out.push(digest(e));
    if (out.length >= stopAfter) break;
  }
  return out;
}

describe('the cleaner\'s read-ahead', () => {
  it('yields the batches one large buffer yields, reading every byte once, most of them ahead', async () => {
    const dir = tempPartitionPath('read-ahead-0');
    await segmentOfMixedBatches(dir);
    const reads: ReadLog = { sync: [], async: [], inFlight: 0 };
    const log = Log.open(dir, { io: readRecordingIO(reads) });
    try {
      const seg = log.segments[0]!;
      const expected = await scan(new BatchReader(log.io), seg);
      expect(expected.length).toBe(200);
      // Some batches are larger than one buffer (half the chunk): read when met, the buffer grown.
      expect(Math.max(...expected.map((d) => Number(d.split(/[+:]/)[1])))).toBeGreaterThan(CHUNK_BYTES / 2);
      reads.sync.length = 0;
      reads.async.length = 0;
      const small = new BatchReader(log.io, CHUNK_BYTES);
      expect(await scan(small, seg)).toEqual(expected);
      // Every byte once: the reads tile the segment without overlap.
      const all = [...reads.sync, ...reads.async].sort((a, b) => a[0] - b[0]);
      let at = 0;
      for (const [position, n] of all) {
        expect(position).toBe(at);
        at += n;
      }
      expect(at).toBe(seg.size);
      expect(small.bytesRead).toBe(seg.size);
      const ahead = reads.async.reduce((n, r) => n + r[1], 0);
      expect(ahead).toBeGreaterThan(seg.size / 2);
      expect(reads.inFlight).toBe(0);
    } finally {
      await log.close();
    }
  });

  it('never reads into a skipped range, and a scan stopped early leaves no read in flight', async () => {
    const dir = tempPartitionPath('read-ahead-skip-0');
    await segmentOfMixedBatches(dir);
    const reads: ReadLog = { sync: [], async: [], inFlight: 0 };
    const log = Log.open(dir, { io: readRecordingIO(reads) });
    try {
      const seg = log.segments[0]!;
      const reader = new BatchReader(log.io, CHUNK_BYTES);
      const batches: Batch[] = [];
      for await (const e of new BatchReader(log.io).batches(seg)) batches.push({ ...e, header: { ...e.header } });
      // Skip batches 50..89 and 120..129 (their positions and last offsets).
      const range = (a: number, b: number): SkipRange => ({ from: batches[a]!.position, to: batches[b]!.position + batches[b]!.size, lastOffset: batches[b]!.header.baseOffset + batches[b]!.header.lastOffsetDelta, batches: b - a + 1, records: 0 });
      const skips = [range(50, 89), range(120, 129)];
      reads.sync.length = 0;
      reads.async.length = 0;
      const got = await scan(reader, seg, skips);
      expect(got.length).toBe(200 - 40 - 10);
      for (const [position, n] of [...reads.sync, ...reads.async]) {
        for (const s of skips) expect(position + n <= s.from || position >= s.to, `read [${position}, ${position + n}) into skip [${s.from}, ${s.to})`).toBe(true);
      }
      // Stopped after 3 batches: no read left running, and the next scan starts afresh.
      const first = await scan(reader, seg, undefined, 3);
      expect(first.length).toBe(3);
      expect(reads.inFlight).toBe(0);
      const again = await scan(reader, seg);
      expect(again.slice(0, 3)).toEqual(first);
      expect(again.length).toBe(200);
    } finally {
      await log.close();
    }
  });

  it('a read-ahead that fails stops the scan with an error naming the segment file', async () => {
    const dir = tempPartitionPath('read-ahead-fail-0');
    await segmentOfMixedBatches(dir);
    const reads: ReadLog = { sync: [], async: [], inFlight: 0 };
    const log = Log.open(dir, { io: readRecordingIO(reads, true) });
    try {
      const seg = log.segments[0]!;
      const error = await scan(new BatchReader(log.io, CHUNK_BYTES), seg).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(LogtoolError);
      expect((error as LogtoolError).kind).toBe('io');
      expect((error as LogtoolError).file).toBe(seg.logPath);
      expect(reads.inFlight).toBe(0);
    } finally {
      await log.close();
    }
  });
});
