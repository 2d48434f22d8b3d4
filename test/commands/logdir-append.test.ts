/**
 * `append --topic T --partition N <logdir>` (issue 12): the partition is created inside the log
 * directory under Kafka's name; topic names are checked as Kafka checks them, so hostile names
 * (`../x`, an absolute path, `a/b`, 300 characters, `..`) are refused with exit 2 and create nothing
 * anywhere.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { parseRun, treeStamps } from '../helpers/logdirs.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

/** Every path under `root`, directories included (treeStamps lists files only). */
function allPaths(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      out.push(path.relative(root, path.join(d, e.name)));
      if (e.isDirectory()) walk(path.join(d, e.name));
    }
  };
  walk(root);
  return out.sort();
}

describe('append into a log directory', () => {
  it('creates <logdir>/<topic>-<partition> and appends there; a missing log directory is not created (exit 1)', async () => {
    const root = makeTempDir('logtool-append-logdir-');
    const logDir = path.join(root, 'data');
    const missing = await cli('append', logDir, '--topic', 'orders', '--partition', '3', '--value', 'v');
    expect(missing.code, missing.stderr).toBe(1);
    expect(fs.readdirSync(root)).toEqual([]);
    fs.mkdirSync(logDir);
    const r = await cli('append', logDir, '--topic', 'orders.v2_x-y', '--partition', '3', '--key', 'k', '--value', 'hello', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ baseOffset: 0, count: 1 });
    expect(fs.readdirSync(logDir).filter((n) => fs.statSync(path.join(logDir, n)).isDirectory())).toEqual(['orders.v2_x-y-3']);
    const again = await cli('append', logDir, '--topic', 'orders.v2_x-y', '--partition', '3', '--value', 'second');
    expect(again.code, again.stderr).toBe(0);
    const read = await cli('read', path.join(logDir, 'orders.v2_x-y-3'), '--json');
    expect(read.stdout.trim().split('\n').map((l) => JSON.parse(l).value)).toEqual(['hello', 'second']);
    // The new partition is one of the log directory's partitions for every other command.
    const verify = await cli('verify', logDir, '--json');
    expect(verify.code, verify.stderr).toBe(0);
    expect(parseRun<{ topic: string; partition: number }>(verify.stdout).lines.map((l) => [l.topic, l.partition])).toEqual([['orders.v2_x-y', 3]]);
  });

  it('hostile or invalid topic names are exit 2 and create nothing, inside or outside the log directory', async () => {
    const root = makeTempDir('logtool-append-hostile-');
    const logDir = path.join(root, 'data');
    fs.mkdirSync(logDir);
    fs.mkdirSync(path.join(logDir, 'ok-0'));
    const before = allPaths(root);
    const outside = path.join(makeTempDir('logtool-append-abs-'), 'victim');
    const hostile = ['../x', '../../x', outside, 'a/b', 'x'.repeat(250), 'y'.repeat(300), '..', '.', '', 'a b', 'a\nb', 'é'];
    for (const topic of hostile) {
      const r = await cli('append', logDir, '--topic', topic, '--partition', '0', '--value', 'v');
      expect(r.code, `${JSON.stringify(topic)}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/topic name|cannot be empty/);
      expect(allPaths(root), JSON.stringify(topic)).toEqual(before);
    }
    expect(fs.existsSync(outside)).toBe(false);
    expect(fs.readdirSync(path.dirname(outside))).toEqual([]);
    // 249 characters is Kafka's limit: allowed.
    const longest = await cli('append', logDir, '--topic', 'z'.repeat(249), '--partition', '0', '--value', 'v');
    expect(longest.code, longest.stderr).toBe(0);
    expect(fs.existsSync(path.join(logDir, `${'z'.repeat(249)}-0`))).toBe(true);
  });

  it('--topic without --partition, a partition directory with --topic, a log directory without them: exit 2, nothing written', async () => {
    const root = makeTempDir('logtool-append-usage-');
    const logDir = path.join(root, 'data');
    fs.mkdirSync(logDir);
    const seed = await cli('append', logDir, '--topic', 'a', '--partition', '0', '--value', 'v');
    expect(seed.code, seed.stderr).toBe(0);
    const before = treeStamps(root);
    for (const args of [
      [logDir, '--topic', 'a', '--value', 'v'],
      [logDir, '--partition', '0', '--value', 'v'],
      [path.join(logDir, 'a-0'), '--topic', 'a', '--partition', '1', '--value', 'v'],
      [logDir, '--value', 'v'],
    ]) {
      const r = await cli('append', ...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
    }
    expect(treeStamps(root)).toEqual(before);
  });
});
