/**
 * `read` ranges through the built CLI, over one log of several segments written by `append`:
 *
 *  - for random [a, b), `read --from-offset a --to-offset b --json` prints exactly the offsets in
 *    [a, b), and with `--key K` / `--key-base64 B` exactly the records in [a, b) whose key is those
 *    bytes (keys "k1" and "k10" tell exact from prefix matching; one key is not UTF-8);
 *  - `--to-time T` ends where `--from-time T` starts, and that is the first record with a
 *    timestamp ≥ T in what was written (or the log end when none is);
 *  - `--from-offset` at the log end prints nothing with exit 0; beyond it, and below the log start
 *    after `delete-records`, exit 2 naming `[start, end)` and which side was missed;
 *  - the library's ReadOptions.toOffset, which the CLI passes on, is the same exclusive end.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const N = 60;
const T0 = 1_700_000_000_000;
const KEYS: (string | { base64: string } | null)[] = ['k1', 'k10', 'k2', { base64: '//4=' }, null];
/** What was appended, in offset order (a fresh log: record i has offset i). Timestamps repeat in pairs. */
const written = Array.from({ length: N }, (_, i) => ({ key: KEYS[(i * 7) % KEYS.length]!, value: `v${i}`, timestamp: T0 + Math.floor(i / 2) * 1000 }));

interface Row {
  offset: number;
  timestamp: number;
  key: unknown;
}
const rows = (stdout: string): Row[] =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Row);
const offsets = (stdout: string) => rows(stdout).map((r) => r.offset);
const range = (a: number, b: number) => Array.from({ length: Math.max(0, b - a) }, (_, i) => a + i);

let dir: string;

beforeAll(async () => {
  dir = path.join(makeTempDir('logtool-ranges-'), 'r-0');
  const input = path.join(path.dirname(dir), 'in.ndjson');
  fs.writeFileSync(input, written.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const r = await cli('append', dir, '--input', input, '--batch-records', '3', '--segment-bytes', '600');
  expect(r.code, r.stderr).toBe(0);
}, 60_000);

describe('read ranges', () => {
  it('the log has several segments and all the records written', async () => {
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.log')).length).toBeGreaterThanOrEqual(3);
    const all = await cli('read', dir, '--json');
    expect(all.code).toBe(0);
    expect(rows(all.stdout).map((r) => [r.offset, r.timestamp, r.key])).toEqual(written.map((w, i) => [i, w.timestamp, w.key]));
  });

  it('--from-offset a --to-offset b is exactly [a, b); --key exactly the records in it with that key', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: N }), fc.integer({ min: 0, max: N + 5 }), fc.constantFrom(...KEYS.filter((k) => k !== null)), async (a, b, key) => {
        const r = await cli('read', dir, '--from-offset', String(a), '--to-offset', String(b), '--json');
        expect(r.code).toBe(0);
        expect(offsets(r.stdout)).toEqual(range(a, Math.min(b, N)));
        const keyArgs = typeof key === 'string' ? ['--key', key] : ['--key-base64', key.base64];
        const k = await cli('read', dir, '--from-offset', String(a), '--to-offset', String(b), ...keyArgs, '--json');
        expect(k.code).toBe(0);
        const expected = range(a, Math.min(b, N)).filter((o) => JSON.stringify(written[o]!.key) === JSON.stringify(key));
        expect(offsets(k.stdout)).toEqual(expected);
        expect(rows(k.stdout).every((row) => JSON.stringify(row.key) === JSON.stringify(key))).toBe(true);
      }),
      { numRuns: 12 },
    );
  }, 120_000);

  it('--max-records with --key counts the matching records', async () => {
    const r = await cli('read', dir, '--key', 'k2', '--max-records', '3', '--json');
    expect(r.code).toBe(0);
    expect(offsets(r.stdout)).toEqual(written.map((w, i) => (w.key === 'k2' ? i : -1)).filter((i) => i >= 0).slice(0, 3));
  });

  it('--to-time T ends at the offset --from-time T starts at: the first record with timestamp ≥ T', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: T0 - 2000, max: T0 + (N / 2) * 1000 + 2000 }), async (t) => {
        const first = written.findIndex((w) => w.timestamp >= t);
        const end = first === -1 ? N : first;
        const from = await cli('read', dir, '--from-time', String(t), '--json');
        expect(from.code).toBe(0);
        expect(offsets(from.stdout)).toEqual(range(end, N));
        const to = await cli('read', dir, '--to-time', String(t), '--json');
        expect(to.code).toBe(0);
        expect(offsets(to.stdout)).toEqual(range(0, end));
      }),
      { numRuns: 6, examples: [[T0], [T0 + 1000], [T0 + 1001], [T0 + 100_000]] },
    );
  }, 120_000);

  it('--from-offset at the log end: nothing, exit 0; beyond it: exit 2 naming [start, end)', async () => {
    const at = await cli('read', dir, '--from-offset', String(N));
    expect(at).toMatchObject({ code: 0, stdout: '' });
    const beyond = await cli('read', dir, '--from-offset', String(N + 1));
    expect(beyond.code).toBe(2);
    expect(beyond.stdout).toBe('');
    expect(beyond.stderr).toContain(`beyond the log end offset ${N}`);
    expect(beyond.stderr).toContain(`[0, ${N})`);
  });

  it('below the log start after delete-records: exit 2 naming [start, end); from the start still reads', async () => {
    const copy = path.join(makeTempDir('logtool-ranges-del-'), 'r-0');
    fs.cpSync(dir, copy, { recursive: true });
    const del = await cli('delete-records', copy, '--before-offset', '25');
    expect(del.code, del.stderr).toBe(0);
    const below = await cli('read', copy, '--from-offset', '24', '--to-offset', '30');
    expect(below.code).toBe(2);
    expect(below.stdout).toBe('');
    expect(below.stderr).toContain('below the log start offset 25');
    expect(below.stderr).toContain(`[25, ${N})`);
    const ok = await cli('read', copy, '--from-offset', '25', '--to-offset', '28', '--json');
    expect(ok.code).toBe(0);
    expect(offsets(ok.stdout)).toEqual([25, 26, 27]);
  });

  it('library: log.read({ fromOffset, toOffset }) ends before toOffset, across segments and with maxRecords', async () => {
    const log = Log.open(dir, { readOnly: true });
    try {
      const read = (o: Parameters<Log['read']>[0]) => [...log.read(o)].map((r) => r.offset);
      expect(read({ fromOffset: 5, toOffset: 41 })).toEqual(range(5, 41));
      expect(read({ toOffset: 3 })).toEqual([0, 1, 2]);
      expect(read({ fromOffset: 20, toOffset: 20 })).toEqual([]);
      expect(read({ fromOffset: 20, toOffset: 10 })).toEqual([]);
      expect(read({ fromOffset: 50, toOffset: N + 100 })).toEqual(range(50, N));
      expect(read({ fromOffset: 10, toOffset: 40, maxRecords: 4 })).toEqual([10, 11, 12, 13]);
    } finally {
      await log.close();
    }
  });

  it('usage errors: --key with --key-base64, range options with --batches, invalid base64', async () => {
    for (const args of [
      ['--key', 'k1', '--key-base64', 'azE='],
      ['--batches', '--to-offset', '5'],
      ['--key-base64', '!!!!'],
    ]) {
      const r = await cli('read', dir, ...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
    }
  });
});
