/**
 * issue 9 item 8: a group position beyond the log end (a lost tail was recovered) moves back to the
 * log end, with a warning, so that records appended later at those offsets reach the group.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { ensureBuilt } from '../helpers/build.js';
import { removeTempDirs, tempPartitionPath } from '../helpers/fixtures.js';
import { cli } from '../helpers/cli.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

async function appendValues(dir: string, from: number, to: number): Promise<void> {
  const log = Log.open(dir, { config: { flushMode: 'async' } });
  await log.append(Array.from({ length: to - from }, (_, i) => ({ key: null, value: Buffer.from(`v${from + i}`) })));
  await log.close();
}

describe('consume with a position beyond the log end', () => {
  it('moves the group back to the log end and says so; records appended later are delivered', async () => {
    const dir = tempPartitionPath('lost-0');
    await appendValues(dir, 0, 5);
    // The group had read up to 10 before records 5..9 were lost (the tail was recovered away).
    fs.writeFileSync(path.join(dir, 'consumer-offsets-checkpoint'), '0\n1\ng 10\n');
    const first = await cli('consume', dir, '--group', 'g', '--json');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('');
    expect(first.stderr).toMatch(/group g was at 10, beyond the log end offset 5 .*moved it back 5/);
    expect(fs.readFileSync(path.join(dir, 'consumer-offsets-checkpoint'), 'utf8')).toBe('0\n1\ng 5\n');

    await appendValues(dir, 5, 8);
    const second = await cli('consume', dir, '--group', 'g', '--json');
    expect(second.code).toBe(0);
    expect(second.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { value: string }).value)).toEqual(['v5', 'v6', 'v7']);
    expect(fs.readFileSync(path.join(dir, 'consumer-offsets-checkpoint'), 'utf8')).toBe('0\n1\ng 8\n');
  });

  it('--no-commit reads from the log end and leaves the stored position alone', async () => {
    const dir = tempPartitionPath('lost-0');
    await appendValues(dir, 0, 3);
    fs.writeFileSync(path.join(dir, 'consumer-offsets-checkpoint'), '0\n1\ng 7\n');
    const r = await cli('consume', dir, '--group', 'g', '--no-commit');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/beyond the log end offset 3 .*reading from 3/);
    expect(fs.readFileSync(path.join(dir, 'consumer-offsets-checkpoint'), 'utf8')).toBe('0\n1\ng 7\n');
  });
});
