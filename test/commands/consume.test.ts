/**
 * `logtool consume` and `logtool positions` through the built CLI: records after the group's
 * committed position in `read`'s line formats, the position committed after them (not with
 * --no-commit), lag, concurrent consumers of different groups not losing each other's commits,
 * consuming next to a writer holding the partition lock, and usage errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { ensureBuilt } from '../helpers/build.js';
import { removeTempDirs, tempPartitionPath } from '../helpers/fixtures.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

import { cli } from '../helpers/cli.js';

const lines = (s: string) => s.split('\n').filter(Boolean);
const json = (s: string) => lines(s).map((l) => JSON.parse(l) as Record<string, unknown>);

async function partition(n: number, name = 'orders-0'): Promise<string> {
  const dir = tempPartitionPath(name);
  const log = Log.open(dir, { config: { flushMode: 'async' } });
  await log.append(Array.from({ length: n }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), timestamp: 1_700_000_000_000 + i })));
  await log.close();
  return dir;
}

describe('logtool consume / positions', () => {
  it('prints after the committed position and commits after what it printed', async () => {
    const dir = await partition(5);
    let r = await cli('consume', dir, '--group', 'billing', '--max-records', '2', '--json');
    expect(r.code).toBe(0);
    expect(json(r.stdout).map((o) => [o.offset, o.value])).toEqual([
      [0, 'v0'],
      [1, 'v1'],
    ]);
    r = await cli('positions', dir, '--json');
    expect(json(r.stdout)).toEqual([{ group: 'billing', position: 2, logStartOffset: 0, logEndOffset: 5, lag: 3 }]);

    // Text lines are `read`'s.
    const read = await cli('read', dir, '--from-offset', '2');
    r = await cli('consume', dir, '--group', 'billing');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(read.stdout);
    expect(lines(r.stdout)).toHaveLength(3);
    r = await cli('consume', dir, '--group', 'billing');
    expect(r.stdout).toBe('');
    r = await cli('positions', dir);
    expect(lines(r.stdout)).toEqual(['group\tposition\tlog end offset\tlag', 'billing\t5\t5\t0']);
  });

  it('--no-commit leaves the position; groups are independent, also when run concurrently', async () => {
    const dir = await partition(4, 'events-1');
    let r = await cli('consume', dir, '--group', 'a', '--no-commit', '--json');
    expect(json(r.stdout)).toHaveLength(4);
    r = await cli('positions', dir, '--json');
    expect(r.stdout).toBe('');
    const runs = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((g) => cli('consume', dir, '--group', g, '--max-records', '3', '--json')));
    for (const run of runs) expect(json(run.stdout)).toHaveLength(3);
    r = await cli('positions', dir, '--json');
    expect(json(r.stdout).map((o) => [o.group, o.position, o.lag])).toEqual(['a', 'b', 'c', 'd', 'e', 'f'].map((g) => [g, 3, 1]));
  });

  it('works next to a writer holding the partition lock', async () => {
    const dir = await partition(3, 'live-0');
    const writer = Log.open(dir, { config: { flushMode: 'async' } });
    try {
      await writer.append([{ value: Buffer.from('v3') }]);
      const r = await cli('consume', dir, '--group', 'g', '--json');
      expect(r.code).toBe(0);
      expect(json(r.stdout).map((o) => o.value)).toEqual(['v0', 'v1', 'v2', 'v3']);
      const p = await cli('positions', dir, '--json');
      expect(json(p.stdout)[0]).toMatchObject({ group: 'g', position: 4, lag: 0 });
    } finally {
      await writer.close();
    }
  });

  it('fails clearly on usage errors', async () => {
    const dir = await partition(1, 'u-0');
    let r = await cli('consume', dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--group is required/);
    r = await cli('consume', dir, '--group', 'has space');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/consumer group name/);
    r = await cli('consume', `${dir}-missing`, '--group', 'g');
    expect(r.code).toBe(1);
  });
});
