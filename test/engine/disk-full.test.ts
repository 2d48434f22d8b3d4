/**
 * Issue 10: one real disk-full test. A small tmpfs is mounted (we run as root in CI; where mount is
 * not permitted the tests skip with a printed notice), filled during `append` and during
 * `compact`, then space is freed and work continues. Same invariants as the fault-injection suite:
 * exit 1 with one error line naming ENOSPC; every acknowledged record reads back; nothing that
 * existed before is missing; no .cleaned/.swap/.deleted left after the next open; the next open
 * appends and `verify` exits 0.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledged, cliInProcess, nextOpen, showNdjson } from '../helpers/fault-io.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { errorLineText } from '../helpers/cli.js';

const TMPFS_BYTES = 4 * 1024 * 1024;
let mountPoint: string | undefined;
let skipReason = '';

beforeAll(() => {
  const dir = makeTempDir('logtool-diskfull-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_BYTES}`, 'tmpfs', dir], { stdio: 'pipe' });
    mountPoint = dir;
  } catch (e) {
    skipReason = `cannot mount a tmpfs here (${(e as Error).message.split('\n')[0]})`;
    console.log(`NOTICE: disk-full tests skipped: ${skipReason}`);
  }
});

afterAll(() => {
  if (mountPoint) execFileSync('umount', [mountPoint]);
  removeTempDirs();
});

const cli = cliInProcess;

/** Bytes still free on the mount. */
const freeBytes = (dir: string): number => {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
};

/** Fills the mount so that about `leaveBytes` stay free; returns the filler's path. */
function fill(dir: string, leaveBytes: number): string {
  const filler = path.join(dir, 'filler');
  const fd = fs.openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  const page = chunk.subarray(0, 4096);
  try {
    while (freeBytes(dir) > leaveBytes + chunk.length) fs.writeSync(fd, chunk);
    while (freeBytes(dir) > leaveBytes) fs.writeSync(fd, page);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e; // full already: what we wanted
  } finally {
    fs.closeSync(fd);
  }
  return filler;
}

function ndjson(count: number, keys: number, from = 0): string {
  const out: string[] = [];
  for (let i = from; i < from + count; i++) out.push(JSON.stringify({ key: `k${i % keys}`, value: `v${i}-${'y'.repeat(200)}`, timestamp: 1764590400000 + i }));
  return `${out.join('\n')}\n`;
}

/** The next open: records before it appends; nothing left over; verify exits 0. */
async function reopen(dir: string): Promise<string[]> {
  const n = await nextOpen(dir);
  expect(n.leftovers).toEqual([]);
  expect(n.verify.code, n.verify.stdout + n.verify.stderr).toBe(0);
  return n.records;
}

/** A partition directory `dir` holding the NDJSON `records`; `input` is a scratch input file. */
async function seedLog(dir: string, records: string, segmentBytes: number, segmentIndexBytes: number): Promise<{ dir: string; input: string }> {
  const input = path.join(makeTempDir(), 'in.ndjson');
  fs.writeFileSync(input, records);
  const r = await cli('append', dir, '--input', input, '--segment-bytes', String(segmentBytes), '--segment-index-bytes', String(segmentIndexBytes));
  expect(r.code, r.stderr).toBe(0);
  return { dir, input };
}

/** The single error line of a failed command: exit 1, naming ENOSPC and a file on the mount. */
function expectOneDiskFullError(r: { code: number; stderr: string }, mount: string, json: boolean): void {
  expect(r.code, r.stderr).toBe(1);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  const error = errorLineText(lines[0]!, json); // the JSON error object under --json
  expect(error, lines[0]).toMatch(/^error: /);
  expect(error).toContain('ENOSPC');
  expect(error).toContain(mount);
}

describe('a real full disk (tmpfs)', () => {
  it('append fills the disk: acknowledged records survive, and appending continues once space is freed', async (ctx) => {
    if (!mountPoint) return ctx.skip(skipReason);
    const { dir, input } = await seedLog(path.join(mountPoint, 'append-0'), ndjson(50, 7), 65536, 4096);
    const before = showNdjson(ndjson(50, 7), 0);
    const big = ndjson(20_000, 7, 50); // ~4.5 MB: more than the mount holds
    fs.writeFileSync(input, big);
    const filler = fill(mountPoint, 600 * 1024);
    const r = await cli('append', dir, '--input', input, '--json', '--flush', 'sync', '--batch-records', '50');
    expectOneDiskFullError(r, mountPoint, true);
    const acked = acknowledged(r.stdout);
    expect(acked).toBeGreaterThan(0);
    fs.rmSync(filler);
    const records = await reopen(dir);
    expect(records.length).toBeGreaterThanOrEqual(50 + acked);
    expect(records.slice(0, 50)).toEqual(before);
    expect(records.slice(50)).toEqual(showNdjson(big, 50).slice(0, records.length - 50));
    console.log(`disk full during append: ${acked} records acknowledged before ENOSPC, ${records.length - 50} read back`);
  });

  it('compact fills the disk: nothing is lost, no .cleaned/.swap is left, and compaction completes once space is freed', async (ctx) => {
    if (!mountPoint) return ctx.skip(skipReason);
    const { dir } = await seedLog(path.join(mountPoint, 'compact-0'), ndjson(6000, 4000), 262144, 8192);
    // The fault-free result, on a copy on the regular disk.
    const reference = path.join(makeTempDir(), 'compact-0');
    fs.cpSync(dir, reference, { recursive: true });
    const ref = await cli('compact', reference, '--now', '1764590400000');
    expect(ref.code, ref.stderr).toBe(0);
    const expected = await reopen(reference);
    const before = new Set(showNdjson(ndjson(6000, 4000), 0));
    const filler = fill(mountPoint, 0);
    const r = await cli('compact', dir, '--now', '1764590400000');
    expectOneDiskFullError(r, mountPoint, false);
    fs.rmSync(filler);
    const mid = await reopen(dir);
    const midSet = new Set(mid);
    for (const x of midSet) expect(before.has(x), x).toBe(true);
    for (const x of expected) expect(midSet.has(x), x).toBe(true);

    // Continue: compacting again gives what the same log gives on a disk that never filled.
    const reference2 = path.join(makeTempDir(), 'compact-0');
    fs.cpSync(dir, reference2, { recursive: true });
    expect((await cli('compact', reference2, '--now', '1764590400000')).code).toBe(0);
    const expected2 = await reopen(reference2);
    const again = await cli('compact', dir, '--now', '1764590400000');
    expect(again.code, again.stderr).toBe(0);
    expect(await reopen(dir)).toEqual(expected2);
    expect(expected2.length).toBeLessThan(mid.length);
  });
});
