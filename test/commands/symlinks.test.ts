/**
 * issue 9 item 13: logtool never writes through a symbolic link inside a partition directory — a
 * `.log` that is a symlink is not truncated or appended to, a `lost+found` that is a symlink does
 * not receive cut bytes. The command exits 1 naming the link; the outside target is unchanged.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { cli } from '../helpers/cli.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const sha = (file: string): string => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const SEG = '00000000000000000000.log';

async function partitionWith(values: string[]): Promise<{ dir: string; outside: string }> {
  const root = makeTempDir('logtool-symlink-');
  const dir = path.join(root, 'logs', 't-0');
  const outside = path.join(root, 'outside');
  fs.mkdirSync(outside);
  const log = Log.open(dir, { config: { flushMode: 'async' } });
  await log.append(values.map((v) => ({ key: null, value: Buffer.from(v) })));
  await log.close();
  return { dir, outside };
}

describe('symbolic links inside a partition', () => {
  it('append refuses a .log that is a symlink: exit 1 naming it, the outside file unchanged', async () => {
    const { dir, outside } = await partitionWith(['a', 'b']);
    const target = path.join(outside, 'elsewhere.log');
    fs.renameSync(path.join(dir, SEG), target);
    fs.appendFileSync(target, Buffer.alloc(40, 0xee)); // a torn tail recovery would cut
    fs.symlinkSync(target, path.join(dir, SEG));
    const before = sha(target);
    const r = await cli('append', dir, '--value', 'c');
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`${path.join(dir, SEG)}: is a symbolic link`);
    expect(sha(target)).toBe(before);
    // Reading through it is fine.
    const read = await cli('read', dir, '--json');
    expect(read.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { value: string }).value)).toEqual(['a', 'b']);
  });

  it('recover refuses a lost+found that is a symlink: nothing lands outside, the .log is not cut', async () => {
    const { dir, outside } = await partitionWith(['a', 'b', 'c']);
    fs.appendFileSync(path.join(dir, SEG), Buffer.alloc(100, 0xee));
    fs.symlinkSync(outside, path.join(dir, 'lost+found'));
    const before = sha(path.join(dir, SEG));
    const r = await cli('recover', dir, '--full');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^error: ${path.join(dir, 'lost\\+found')}: .*is a symbolic link`));
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(sha(path.join(dir, SEG))).toBe(before);
  });

  it('a checkpoint-style .tmp that is a symlink is refused, not written through (logtool.properties.tmp)', async () => {
    const { dir, outside } = await partitionWith(['a']);
    const target = path.join(outside, 'victim');
    fs.writeFileSync(target, 'keep');
    fs.symlinkSync(target, path.join(dir, 'logtool.properties.tmp'));
    const r = await cli('append', dir, '--value', 'b', '--segment-bytes', '2000000');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${path.join(dir, 'logtool.properties.tmp')}: is a symbolic link`);
    expect(fs.readFileSync(target, 'utf8')).toBe('keep');
  });
});
