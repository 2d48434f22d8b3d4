/**
 * Issue 9, item 1 (last rule): a writable open that repaired anything says so on stderr and makes
 * the command exit 3 — after the command has done its own work.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const LOG0 = '00000000000000000000.log';

async function threeRecords(): Promise<string> {
  const dir = path.join(makeTempDir('logtool-repaired-'), 't-0');
  for (const v of ['a', 'b', 'c']) expect((await cli('append', dir, '--value', v)).code).toBe(0);
  return dir;
}

describe.concurrent('a writable open that repairs', () => {
  it('append after a torn tail: appends, says what was repaired, exits 3', async () => {
    const dir = await threeRecords();
    const logFile = path.join(dir, LOG0);
    const goodBytes = fs.statSync(logFile).size;
    fs.appendFileSync(logFile, Buffer.from([0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 90, 1, 2, 3, 4, 2, 9, 9]));
    const r = await cli('append', dir, '--value', 'd', '--json');
    expect(JSON.parse(r.stdout)).toMatchObject({ baseOffset: 3, status: 'flushed' });
    expect(r.stderr).toMatch(/repaired when opened: 1 segment\(s\) truncated \(19 bytes\)/);
    expect(r.stderr).toContain(`${logFile} at byte ${goodBytes}`);
    expect(r.code).toBe(3);
    const read = await cli('read', dir, '--json');
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout.trim().split('\n').map((l) => JSON.parse(l).value)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('an open that repairs nothing exits 0 and says nothing', async () => {
    const dir = await threeRecords();
    const r = await cli('append', dir, '--value', 'd');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
