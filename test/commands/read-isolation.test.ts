/**
 * `read --isolation-level` and `consume` (read_committed) through the built CLI, on the kafkajs-built
 * partition of test/helpers/txn-partition.ts (committed, aborted and open transactions): exactly the
 * offsets Kafka's rules give (written by hand), `--batches` showing markers' coordinator epochs,
 * usage errors, and consume committing no further than the last stable offset.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { removeTempDirs } from '../helpers/fixtures.js';
import { jsonLines, cliTxnPartition } from '../helpers/txn-partition.js';

let dir: string;
beforeAll(async () => (dir = await cliTxnPartition()), 120_000);
afterAll(removeTempDirs);
const json = jsonLines;

describe('read --isolation-level', () => {
  it('read_uncommitted (the default) and read_committed return what Kafka consumers see', async () => {
    const unc = await cli('read', dir, '--json');
    expect(unc.code).toBe(0);
    expect(json(unc.stdout).map((r) => r.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 13, 14, 15, 16, 17, 19, 20]);
    const explicit = await cli('read', dir, '--json', '--isolation-level', 'read_uncommitted');
    expect(explicit.stdout).toBe(unc.stdout);
    const rc = await cli('read', dir, '--json', '--isolation-level', 'read_committed');
    expect(rc.code).toBe(0);
    expect(json(rc.stdout).map((r) => [r.offset, r.value])).toEqual([
      [0, 'a0'],
      [1, 'a1'],
      [2, 't1-0'],
      [3, 't1-1'],
      [6, 'b0'],
      [7, 'b1'],
      [12, 'c0'],
      [13, 'c1'],
    ]);
    const text = await cli('read', dir, '--isolation-level', 'read_committed', '--from-offset', '4', '--max-records', '1');
    expect(text.stdout.split('\t').slice(0, 1)).toEqual(['6']);
  });

  it('refuses an unknown level, and read_committed with --control or --batches (exit 2)', async () => {
    for (const args of [['--isolation-level', 'committed'], ['--isolation-level', 'read_committed', '--control'], ['--isolation-level', 'read_committed', '--batches']]) {
      const r = await cli('read', dir, ...args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/isolation-level/);
      expect(r.stdout).toBe('');
    }
  });

  it('--batches shows each marker type and coordinator epoch', async () => {
    const r = await cli('read', dir, '--batches', '--json');
    const markers = json(r.stdout).filter((b) => b.control);
    expect(markers.map((b) => [b.baseOffset, b.controlType, b.coordinatorEpoch, b.producerId])).toEqual([
      [8, 'COMMIT', 7, 1000],
      [11, 'ABORT', 9, 2000],
      [18, 'COMMIT', 7, 1000],
    ]);
    expect(json(r.stdout).filter((b) => !b.control).every((b) => !('coordinatorEpoch' in b))).toBe(true);
    const text = await cli('read', dir, '--batches', '--from-offset', '11', '-n', '1');
    expect(text.stdout).toMatch(/isControl: true controlType: ABORT coordinatorEpoch: 9 crcValid: true/);
  });
});

describe('consume reads committed', () => {
  it('prints what read_committed returns and commits the last stable offset, not beyond', async () => {
    const r = await cli('consume', dir, '--group', 'g', '--json');
    expect(r.code).toBe(0);
    expect(json(r.stdout).map((x) => x.offset)).toEqual([0, 1, 2, 3, 6, 7, 12, 13]);
    const p = await cli('positions', dir, '--json');
    expect(json(p.stdout)).toEqual([{ group: 'g', position: 14, logStartOffset: 0, logEndOffset: 21, lag: 7 }]);
    const again = await cli('consume', dir, '--group', 'g', '--json');
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('');
  });
});
