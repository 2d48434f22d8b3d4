/**
 * Issue 9, item 9: one gzip batch of millions of empty records (a few MB on disk, valid CRC) must
 * not make `verify --deep`, `read --json` or `dump-log --deep-iteration` hold a record object per
 * record: each runs as a child process with a V8 heap of 64 MiB (128 MiB per 3,000,000 records),
 * which the decoded records held at once exceed many times over, and must read every record.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_BATCH_OVERHEAD, writeBatchHeader } from '../../src/engine/format/record-batch.js';
import { ensureBuilt } from '../helpers/build.js';
import { sh } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

/**
 * Records per heap megabyte stay those of the former 3,000,000 under 128 MiB (a decoded record,
 * object and buffer, takes well over 100 bytes, so holding them all needs several times the heap);
 * half of each halves the three runs' time. LOGTOOL_BOMB_RECORDS=3000000 for the former size.
 */
const RECORDS = Number(process.env.LOGTOOL_BOMB_RECORDS ?? 1_500_000);
const HEAP_MB = Math.round((128 * RECORDS) / 3_000_000);

/** Appends the zig-zag varint of n (n ≥ 0) at pos. */
function zigzag(buf: Buffer, pos: number, n: number): number {
  let v = n * 2;
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[pos++] = v;
  return pos;
}

/** A partition whose only batch is gzip-compressed and holds `count` records with a null key and an empty value. */
function bombPartition(count: number): { dir: string; logFile: string; batchBytes: number } {
  const raw = Buffer.alloc(count * 10);
  let pos = 0;
  const body = Buffer.alloc(8);
  for (let i = 0; i < count; i++) {
    // attributes 0, timestamp delta 0, offset delta i, key null (−1), value empty (0), 0 headers
    let b = 0;
    body[b++] = 0;
    body[b++] = 0;
    b = zigzag(body, b, i);
    body[b++] = 0x01;
    body[b++] = 0x00;
    body[b++] = 0x00;
    pos = zigzag(raw, pos, b);
    body.copy(raw, pos, 0, b);
    pos += b;
  }
  const packed = gzipSync(raw.subarray(0, pos));
  const batch = Buffer.alloc(RECORD_BATCH_OVERHEAD + packed.length);
  packed.copy(batch, RECORD_BATCH_OVERHEAD);
  writeBatchHeader(batch, batch.length, { baseOffset: 0 }, { compression: 1, count, baseTimestamp: 1764460800000, maxTimestamp: 1764460800000, nowMs: 1764460800000 });
  const dir = path.join(makeTempDir('logtool-bomb-'), 't-0');
  fs.mkdirSync(dir);
  const logFile = path.join(dir, '00000000000000000000.log');
  fs.writeFileSync(logFile, batch);
  // Empty indexes, as a writer leaves them for a segment of one batch (a missing .index is a
  // repair that verify reports).
  fs.writeFileSync(path.join(dir, '00000000000000000000.index'), '');
  fs.writeFileSync(path.join(dir, '00000000000000000000.timeindex'), '');
  return { dir, logFile, batchBytes: batch.length };
}

describe(`a gzip batch of ${RECORDS} empty records, under a ${HEAP_MB} MiB heap`, () => {
  let bomb: ReturnType<typeof bombPartition>;
  beforeAll(() => {
    bomb = bombPartition(RECORDS);
    expect(bomb.batchBytes).toBeLessThan(2 * RECORDS); // about 2 bytes per record on disk
  }, 120_000);
  const node = `"$NODE" --max-old-space-size=${HEAP_MB} "$CLI"`;

  it('verify --deep decodes and counts every record', async () => {
    const r = await sh(`${node} verify '${bomb.dir}' --deep --json`);
    expect(r.stderr).not.toMatch(/heap|memory/i);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, records: RECORDS });
  }, 300_000);

  it('read --json prints every record', async () => {
    const r = await sh(`${node} read '${bomb.dir}' --json | awk 'END { print NR; print $0 }'`);
    expect(r.stderr).not.toMatch(/heap|memory/i);
    expect(r.code, r.stderr).toBe(0);
    const [lines, last] = r.stdout.trim().split('\n');
    expect(Number(lines)).toBe(RECORDS);
    expect(JSON.parse(last!)).toMatchObject({ offset: RECORDS - 1, key: null, value: '' });
  }, 300_000);

  it('dump-log --deep-iteration prints every record', async () => {
    const r = await sh(`${node} dump-log --files '${bomb.logFile}' --deep-iteration | awk 'END { print NR; print $0 }'`);
    expect(r.stderr).not.toMatch(/heap|memory/i);
    expect(r.code, r.stderr).toBe(0);
    const [lines, last] = r.stdout.trim().split('\n');
    expect(Number(lines)).toBeGreaterThan(RECORDS);
    expect(last).toMatch(new RegExp(`^\\| offset: ${RECORDS - 1} `));
  }, 300_000);
});
