/**
 * An empty partition directory is an empty log everywhere; a directory without segments that is
 * not a partition directory (a broker's log directory, an empty folder) is never reported as a
 * healthy empty log (issue 9, item 20). Through the built CLI.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const lines = (s: string) => s.split('\n').filter(Boolean);
const json = (s: string) => lines(s).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('directories without segments', () => {
  it('an empty partition directory is an empty log for every read-only command, and none writes a file', async () => {
    const dir = path.join(makeTempDir(), 'orders-0');
    fs.mkdirSync(dir);
    const [verify, positions, consume, compact, read, segments] = await Promise.all([
      cli('verify', dir, '--json'),
      cli('positions', dir, '--json'),
      cli('consume', dir, '--group', 'billing', '--json'),
      cli('compact', dir, '--dry-run', '--json'),
      cli('read', dir, '--json'),
      cli('segments', dir, '--json'),
    ]);
    for (const r of [verify, positions, consume, compact, read, segments]) expect(r.stderr).not.toMatch(/internal error/);
    expect(verify.code).toBe(0);
    expect(json(verify.stdout)[0]).toMatchObject({ ok: true, segments: 0, batches: 0, logStartOffset: 0, logEndOffset: 0 });
    expect([positions.code, positions.stdout]).toEqual([0, '']);
    expect([consume.code, consume.stdout]).toEqual([0, '']);
    expect(compact.code).toBe(0);
    expect(json(compact.stdout)[0]).toMatchObject({ ok: true, dryRun: true, recordsRemoved: 0, bytesRemoved: 0 });
    expect([read.code, read.stdout]).toEqual([0, '']);
    expect(segments.code).toBe(0);
    expect(json(segments.stdout)).toEqual([{ summary: true, leaderEpochs: [], segments: 0, logStartOffset: 0, logEndOffset: 0, sizeBytes: 0 }]);
    // Nothing consumed, nothing committed: no file appeared.
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('read and positions refuse (exit 2) a broker log directory or a folder that is not a partition directory; verify checks the partitions in it', async () => {
    const root = makeTempDir();
    const brokerLogDir = path.join(root, 'kafka-logs');
    fs.mkdirSync(path.join(brokerLogDir, 'orders-0'), { recursive: true });
    fs.writeFileSync(path.join(brokerLogDir, 'meta.properties'), 'version=1\n');
    // A log directory whose own name looks like a partition's.
    const dataDir = path.join(root, 'data-1');
    fs.mkdirSync(path.join(dataDir, 'orders-3'), { recursive: true });
    const empty = path.join(root, 'some-folder');
    fs.mkdirSync(empty);
    for (const dir of [brokerLogDir, dataDir, empty]) {
      const before = fs.readdirSync(dir).sort();
      // verify takes a log directory (issue 12): it checks each partition in it, never the folder as one log.
      const verifyArgs = dir === empty ? [['verify', dir, '--json'], ['verify', dir]] : [];
      if (dir !== empty) {
        const r = await cli('verify', dir, '--json');
        expect(r.code, r.stderr).toBe(0);
        const [partition, summary] = json(r.stdout);
        expect(partition).toMatchObject({ outcome: 'ok', dir: path.join(dir, fs.readdirSync(dir).find((n) => n.includes('orders'))!), segments: 0 });
        expect(summary).toMatchObject({ summary: true, partitions: 1 });
      }
      for (const args of [...verifyArgs, ['read', dir], ['positions', dir]]) {
        const r = await cli(...args);
        expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(2);
        expect(r.stdout).not.toMatch(/"ok":\s*true|checks out/);
        expect(lines(r.stderr)).toHaveLength(1);
        expect(r.stderr).toContain(dir);
        expect(r.stderr).toMatch(/not a partition directory/);
      }
      expect(fs.readdirSync(dir).sort()).toEqual(before);
    }
  });
});
