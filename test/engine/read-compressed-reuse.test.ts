/**
 * Log.read() without reuseBuffer refills its file buffer in place after a compressed v2 batch
 * (ScanOptions.reuseBuffer 'compressed', issue 15: a fresh 1 MiB chunk per read was a tenth of an
 * lz4 read's CPU): the records of a compressed batch are views of its decompressed section, never
 * of the batch's bytes (recordsSection copies a registered codec's output that is a view of them).
 * So every record returned stays valid after the read has gone on, whatever the mix of codecs; and
 * a log of compressed batches is read through a window per segment instead of a buffer per chunk.
 */
import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { Log } from '../../src/engine/log/log.js';
import { nativeIO, withIO } from '../../src/engine/io.js';
import { codecFor, CompressionType, registerCodec, type Codec } from '../../src/engine/format/compression.js';
import type { LogRecord } from '../../src/engine/format/record-batch.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { pathTrackingIO } from '../helpers/path-io.js';

afterAll(removeTempDirs);

const RECORDS_PER_BATCH = 50;

/** Record o's value: 200–400 bytes, little of it repeated (so that the compressed log spans many chunks). */
function valueFor(o: number): Buffer {
  const out = Buffer.alloc(200 + (o % 201));
  let x = (o * 2654435761) >>> 0 || 1;
  for (let i = 0; i < out.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = i % 4 === 0 ? 0x61 + (o % 26) : x & 0xff;
  }
  return out;
}

async function writeLog(name: string, codecs: number[], batches: number, segmentBytes = 3 << 20): Promise<string> {
  const dir = path.join(makeTempDir('logtool-read-compressed-'), `${name}-0`);
  const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes }, rememberConfig: false });
  for (let b = 0; b < batches; b++) {
    const records = Array.from({ length: RECORDS_PER_BATCH }, (_, i) => ({ key: Buffer.from(`k${b * RECORDS_PER_BATCH + i}`), value: valueFor(b * RECORDS_PER_BATCH + i) }));
    await log.append(records, { compression: codecs[b % codecs.length]! });
  }
  await log.close();
  return dir;
}

/** Every record of the log, kept until the read is over; and the distinct buffers its `.log` reads went into. */
async function readKeepingAll(dir: string): Promise<{ records: LogRecord[]; buffers: number; segments: number }> {
  const buffers = new Set<ArrayBufferLike>();
  const io = pathTrackingIO((name, base) => ({
    read: (fd, buf, offset, length, position) => {
      if (name(fd).endsWith('.log')) buffers.add(buf.buffer);
      return base.read(fd, buf, offset, length, position);
    },
  }), nativeIO);
  return withIO(io, async () => {
    const log = Log.open(dir, { readOnly: true });
    try {
      return { records: [...log.read()], buffers: buffers.size, segments: log.segments.length };
    } finally {
      await log.close();
    }
  });
}

function expectRecords(records: LogRecord[], count: number): void {
  expect(records.length).toBe(count);
  const wrong = records.filter((r, o) => r.offset !== o || r.key?.toString() !== `k${o}` || !r.value?.equals(valueFor(o)));
  expect(wrong.map((r) => r.offset)).toEqual([]);
}

describe('Log.read() after compressed batches', () => {
  it('keeps every record valid when compressed and uncompressed batches alternate', async () => {
    const c = CompressionType;
    const dir = await writeLog('mixed', [c.lz4, c.none, c.snappy, c.zstd, c.none, c.gzip, c.lz4, c.snappy], 400);
    const { records, segments } = await readKeepingAll(dir);
    expect(segments).toBeGreaterThan(1);
    expectRecords(records, 400 * RECORDS_PER_BATCH);
  });

  it('reads a log of compressed batches through one window per segment, not a buffer per chunk', async () => {
    const dir = await writeLog('lz4', [CompressionType.lz4], 1500, 64 << 20);
    const logBytes = fs.statSync(path.join(dir, '00000000000000000000.log')).size;
    const { records, buffers, segments } = await readKeepingAll(dir);
    expectRecords(records, 1500 * RECORDS_PER_BATCH);
    expect(segments).toBe(1);
    // A fresh buffer per 1 MiB chunk would be one per MiB read; the window grows 16 KiB → 1 MiB (7
    // buffers), and opening the log reads a few entries through buffers of their own.
    expect(logBytes).toBeGreaterThan(20 << 20);
    expect(buffers).toBeLessThanOrEqual(9 + 4);
  });

  it('copies what a registered codec returns as a view of the batch, so its records stay valid too', async () => {
    const gzip = codecFor(CompressionType.gzip)!;
    // A codec whose "compressed" form is the records themselves and whose decompress returns a view of them.
    const viewCodec: Codec = { compress: (data) => Buffer.from(data), decompress: (data) => data.subarray(0) };
    registerCodec(CompressionType.gzip, viewCodec);
    try {
      const dir = await writeLog('view-codec', [CompressionType.gzip], 300);
      const { records, segments } = await readKeepingAll(dir);
      expect(segments).toBeGreaterThan(1);
      expectRecords(records, 300 * RECORDS_PER_BATCH);
    } finally {
      registerCodec(CompressionType.gzip, gzip);
    }
  });
});
