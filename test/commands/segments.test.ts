/**
 * `logtool segments` on damaged index files (issue 9, item 12): an `.index` entry that does not
 * point at a batch of its segment is a data problem (exit 3 naming the `.index` and the byte
 * position of the entry), never a failed read (exit 1).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { cli, cliSync } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const INDEX0 = '00000000000000000000.index';

/** A partition of 20 one-record batches with an index entry after every batch. */
function indexedPartition(): string {
  const dir = path.join(makeTempDir('logtool-segments-'), 't-0');
  const input = Array.from({ length: 20 }, (_, i) => `value-${i}`).join('\n') + '\n';
  const r = cliSync('append', dir, '--lines', '--batch-records', '1', '--index-interval-bytes', '0', '--input', writeInput(dir, input));
  expect(r.code, r.stderr).toBe(0);
  expect(fs.statSync(path.join(dir, INDEX0)).size).toBeGreaterThanOrEqual(8);
  return dir;
}

function writeInput(dir: string, text: string): string {
  const file = path.join(path.dirname(dir), 'input.txt');
  fs.writeFileSync(file, text);
  return file;
}

/** Overwrites the position of the last entry of the trimmed `.index`; returns that entry's byte position. */
function setLastIndexPosition(dir: string, position: number): number {
  const file = path.join(dir, INDEX0);
  const bytes = fs.readFileSync(file);
  const at = bytes.length - 8;
  bytes.writeInt32BE(position, at + 4);
  fs.writeFileSync(file, bytes);
  return at;
}

describe.concurrent('segments on a damaged .index', () => {
  it('an intact index lists the segment, exit 0', async () => {
    const dir = indexedPartition();
    const r = await cli('segments', dir, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.split('\n')[0]!)).toMatchObject({ firstOffset: 0, lastOffset: 19 });
  });

  for (const [name, position] of [
    ['a negative position', -2123738168],
    ['a position past the end of the .log', 1 << 30],
    ['a position inside a batch', 3],
  ] as const) {
    it(`an entry with ${name} exits 3 naming the .index and the entry's byte position`, async () => {
      const dir = indexedPartition();
      const at = setLastIndexPosition(dir, position);
      const r = await cli('segments', dir);
      expect(r.stderr).not.toMatch(/ERR_OUT_OF_RANGE|internal error|read failed/);
      expect(r.stderr).toContain(`${path.join(dir, INDEX0)} at byte ${at}`);
      expect(r.code).toBe(3);
    });
  }

  it('garbage .index files of many shapes never exit 1', async () => {
    const dir = indexedPartition();
    const file = path.join(dir, INDEX0);
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) & 0xff;
    for (let v = 0; v < 16; v++) {
      const garbage = Buffer.alloc(8 * (1 + (v % 12)), 0);
      for (let i = 0; i < garbage.length; i++) garbage[i] = rand();
      fs.writeFileSync(file, garbage);
      const r = await cli('segments', dir, '--json');
      expect([0, 3], `variant ${v}: ${r.stderr}`).toContain(r.code);
      if (r.code === 3) expect(r.stderr).toContain(file);
    }
  }, 120_000);
});

describe('segments on a compacted log', () => {
  const T0 = 1_700_000_000_000;

  it("shows the first record's timestamp, not the delete horizon the cleaner put in the batch's base timestamp", async () => {
    const dir = path.join(makeTempDir('logtool-segments-'), 'c-0');
    const lines = [JSON.stringify({ key: 'a', value: null, timestamp: T0 })];
    for (let i = 1; i <= 30; i++) lines.push(JSON.stringify({ key: `k${i % 5}`, value: `v${i}`, timestamp: T0 + i * 1000 }));
    const input = writeInput(dir, lines.join('\n') + '\n');
    expect(cliSync('append', dir, '--input', input, '--batch-records', '1', '--segment-bytes', '500').code).toBe(0);
    const compacted = await cli('compact', dir, '--now', '2026-01-01T00:00:00Z', '--delete-retention-ms', '86400000');
    expect(compacted.code, compacted.stderr).toBe(0);
    // The tombstone's batch now carries the delete horizon (attribute bit 0x40) as its base timestamp.
    const first = fs.readFileSync(path.join(dir, '00000000000000000000.log'));
    expect(first.readInt16BE(21) & 0x40).toBe(0x40);
    expect(Number(first.readBigInt64BE(27))).toBe(Date.parse('2026-01-02T00:00:00Z'));
    const r = await cli('segments', dir, '--json');
    expect(r.code, r.stderr).toBe(0);
    const segs = r.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((s) => !s.summary);
    expect(segs[0]).toMatchObject({ baseOffset: 0, firstOffset: 0, firstTimestamp: T0, maxTimestamp: T0 });
    const text = await cli('segments', dir);
    expect(text.stdout.split('\n')[1]).toContain(new Date(T0).toISOString());
    expect(text.stdout).not.toContain('2026-01-02');
  });
});
