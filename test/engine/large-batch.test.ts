/**
 * Issue 9, item 1: an entry that fits in its segment is valid on disk whatever its size (Kafka's
 * recovery has no size cap). A batch above 64 MiB acknowledged `flushed` must survive a clean
 * reopen, a recovery and `recover --full`; its CRC is checked in bounded chunks; `append` is
 * bounded by the remembered max.message.bytes; a writable CLI open that repaired anything says so
 * and exits 3.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { EntryScanner, entryBytes, entryCrcValid } from '../../src/engine/segment/file-records.js';
import { realIO } from '../../src/engine/io.js';
import { encodeBatch } from '../../src/engine/format/record-batch.js';
import { CLEAN_SHUTDOWN_FILE } from '../../src/engine/checkpoint.js';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const LOG0 = '00000000000000000000.log';
/** Above the 64 MiB that readers and recovery used to call corrupt. */
const BIG_VALUE_BYTES = (64 << 20) + 4096;
const MAX_MESSAGE_BYTES = 80 << 20;

function bigValue(): Buffer {
  const v = Buffer.allocUnsafe(BIG_VALUE_BYTES);
  for (let i = 0; i < v.length; i += 4096) crypto.randomFillSync(v, i, Math.min(4096, v.length - i));
  return v;
}
const sha = (b: Buffer | null) => crypto.createHash('sha256').update(b ?? Buffer.alloc(0)).digest('hex');

/** A partition holding [small record 0, big record 1, small record 2], closed cleanly. */
async function partitionWithBigBatch(): Promise<{ dir: string; bigSha: string }> {
  const dir = path.join(makeTempDir('logtool-big-'), 't-0');
  const value = bigValue();
  const log = Log.open(dir, { config: { maxMessageBytes: MAX_MESSAGE_BYTES } });
  expect((await log.append([{ value: Buffer.from('before') }])).baseOffset).toBe(0);
  const res = await log.append([{ value }]);
  expect(res).toMatchObject({ baseOffset: 1, status: 'flushed' });
  expect((await log.append([{ value: Buffer.from('after') }])).baseOffset).toBe(2);
  await log.close();
  return { dir, bigSha: sha(value) };
}

async function expectAllThree(dir: string, bigSha: string, readOnly: boolean, logEndOffset = 3): Promise<void> {
  const log = Log.open(dir, { readOnly });
  try {
    expect(log.nextOffset).toBe(logEndOffset);
    expect(log.loadReport.truncated).toEqual([]);
    const recs = [...log.read({ fromOffset: 0, maxRecords: 3 })];
    expect(recs.map((r) => r.offset)).toEqual([0, 1, 2]);
    expect(sha(recs[1]!.value)).toBe(bigSha);
    expect(recs[2]!.value?.toString()).toBe('after');
  } finally {
    await log.close();
  }
}

describe('a batch larger than 64 MiB', () => {
  it('survives a clean reopen for writing and reading: offsets are never handed out again', async () => {
    const { dir, bigSha } = await partitionWithBigBatch();
    await expectAllThree(dir, bigSha, false);
    await expectAllThree(dir, bigSha, true);
    const log = Log.open(dir);
    expect((await log.append([{ value: Buffer.from('next') }])).baseOffset).toBe(3);
    await log.close();
  }, 120_000);

  it('survives recovery after an unclean shutdown (every batch validated)', async () => {
    const { dir, bigSha } = await partitionWithBigBatch();
    fs.rmSync(path.join(path.dirname(dir), CLEAN_SHUTDOWN_FILE), { force: true });
    const log = Log.open(dir);
    expect(log.loadReport.cleanShutdown).toBe(false);
    expect(log.loadReport.repaired).toBe(false);
    expect(log.loadReport.batchesValidated).toBeGreaterThanOrEqual(3);
    await log.close();
    await expectAllThree(dir, bigSha, false);
  }, 120_000);

  it('recover --full keeps it and every later segment (exit 0), verify passes', async () => {
    const { dir, bigSha } = await partitionWithBigBatch();
    // A later segment after the big batch: Kafka's recovery must not drop it either.
    const log = Log.open(dir, { config: { segmentBytes: 1 << 20 } });
    await log.append([{ value: Buffer.from('next segment') }]);
    await log.close();
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.log')).length).toBe(2);
    const rec = await cli('recover', dir, '--full', '--json');
    expect(rec.code, rec.stdout + rec.stderr).toBe(0);
    expect(JSON.parse(rec.stdout)).toMatchObject({ repaired: false, truncated: [], segmentsDropped: [] });
    const ver = await cli('verify', dir, '--deep');
    expect(ver.code, ver.stdout + ver.stderr).toBe(0);
    await expectAllThree(dir, bigSha, true, 4);
  }, 180_000);

  it('append is bounded by the remembered max.message.bytes, not a read cap', async () => {
    const dir = path.join(makeTempDir('logtool-big-'), 't-0');
    const first = Log.open(dir, { config: { maxMessageBytes: 1000 } });
    await first.close();
    const log = Log.open(dir); // remembered, not given again
    expect(log.config.maxMessageBytes).toBe(1000);
    await expect(Promise.resolve().then(() => log.append([{ value: Buffer.alloc(2000) }]))).rejects.toThrow(/max.message.bytes/);
    expect(log.nextOffset).toBe(0);
    await log.close();
  });
});

describe('EntryScanner above maxBufferedEntryBytes', () => {
  /** A .log of three batches, the middle one of about 300 KiB. */
  function threeBatches(): { file: string; sizes: number[]; middle: Buffer } {
    const middle = crypto.randomBytes(300 << 10);
    const batches = [
      encodeBatch([{ value: Buffer.from('a') }], { baseOffset: 0, nowMs: 1 }),
      encodeBatch([{ value: middle }], { baseOffset: 1, nowMs: 2 }),
      encodeBatch([{ value: Buffer.from('c') }], { baseOffset: 2, nowMs: 3 }),
    ];
    const file = path.join(makeTempDir('logtool-scan-'), LOG0);
    fs.writeFileSync(file, Buffer.concat(batches));
    return { file, sizes: batches.map((b) => b.length), middle };
  }
  const scan = (file: string) =>
    new EntryScanner({ io: realIO, path: file, verifyCrc: true, segmentBaseOffset: 0, maxBufferedEntryBytes: 64 << 10, chunkBytes: 16 << 10 });

  it('checks the CRC in chunks, yields the entry incomplete, and loads it on demand', () => {
    const { file, sizes, middle } = threeBatches();
    const s = scan(file);
    const seen = [];
    for (const e of s.entries()) {
      seen.push({ offset: e.baseOffset, size: e.size, complete: e.complete });
      expect(entryCrcValid(e)).toBe(true);
      if (!e.complete) {
        expect(e.buf.length).toBeLessThan(64 << 10);
        const { buf, pos } = entryBytes(e);
        expect(buf.subarray(pos, pos + e.size).includes(middle)).toBe(true);
      }
    }
    expect(s.end).toEqual({ kind: 'end' });
    expect(seen).toEqual([
      { offset: 0, size: sizes[0], complete: true },
      { offset: 1, size: sizes[1], complete: false },
      { offset: 2, size: sizes[2], complete: true },
    ]);
  });

  it('finds a flipped byte deep inside the unbuffered entry', () => {
    const { file, sizes } = threeBatches();
    const fd = fs.openSync(file, 'r+');
    // Invert the byte (writing a fixed one leaves it unchanged when it already held that value).
    const at = sizes[0]! + 200_000;
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, at);
    fs.writeSync(fd, Buffer.from([b[0]! ^ 0xff]), 0, 1, at);
    fs.closeSync(fd);
    const s = scan(file);
    expect([...s.entries()].map((e) => e.baseOffset)).toEqual([0]);
    expect(s.end).toMatchObject({ kind: 'corrupt', position: sizes[0], reason: expect.stringMatching(/CRC-32C mismatch/) });
  });
});
