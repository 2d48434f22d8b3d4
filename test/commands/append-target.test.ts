/**
 * `append`'s target and input (src/commands/append-target.ts), through the built CLI in child
 * processes with real pipes: --value with data on stdin says which it used; a missing parent
 * directory fails (exit 1) without creating anything; a run that appends nothing leaves no new
 * directory behind, while an existing partition stays as it was.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { cli, sh } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const q = (s: string) => JSON.stringify(s);
const values = async (dir: string) => (await cli('read', dir, '--json')).stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l).value as string);

describe('append: --value and stdin', () => {
  it('with data piped on stdin, appends the --value record and says stdin was not read', async () => {
    const dir = path.join(makeTempDir(), 'both-0');
    const r = await sh(`printf 'a\\nb\\n' | "$NODE" "$CLI" append ${q(dir)} --value x`);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^note: appended the one record given by --value; the data on stdin was not read/);
    expect(await values(dir)).toEqual(['x']);
  });

  it('with a non-empty file on stdin, the same note', async () => {
    const dir = path.join(makeTempDir(), 'file-0');
    const input = path.join(path.dirname(dir), 'in.txt');
    fs.writeFileSync(input, 'a\n');
    const r = await sh(`"$NODE" "$CLI" append ${q(dir)} --value x < ${q(input)}`);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('the data on stdin was not read');
  });

  it('with nothing on stdin (/dev/null, an empty pipe) there is no note', async () => {
    const dir = path.join(makeTempDir(), 'none-0');
    const r1 = await sh(`"$NODE" "$CLI" append ${q(dir)} --value x < /dev/null`);
    const r2 = await sh(`printf '' | "$NODE" "$CLI" append ${q(dir)} --value y`);
    expect([r1.code, r2.code]).toEqual([0, 0]);
    expect(r1.stderr + r2.stderr).toBe('');
    expect(await values(dir)).toEqual(['x', 'y']);
  });
});

describe('append: the directory', () => {
  it('a path whose parent does not exist fails with exit 1 naming the parent, and creates nothing', async () => {
    const root = makeTempDir();
    const parent = path.join(root, 'no', 'such');
    const r = await cli('append', path.join(parent, 't-0'), '--value', 'x');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: ${parent}: no such directory: append creates the partition directory but not the log directory it goes in\n`);
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it('a run that fails on its first input line leaves no new directory (exit 2)', async () => {
    const root = makeTempDir();
    const dir = path.join(root, 'bad-0');
    const r = await sh(`printf 'not json\\n{"value":"v"}\\n' | "$NODE" "$CLI" append ${q(dir)}`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('stdin line 1: not valid JSON');
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it('empty input, or a bad --value, into a new directory leaves none either', async () => {
    const root = makeTempDir();
    const empty = await sh(`printf '' | "$NODE" "$CLI" append ${q(path.join(root, 'empty-0'))} --lines`);
    expect(empty.code).toBe(0);
    const badHex = await cli('append', path.join(root, 'hex-0'), '--value', 'zz', '--encoding', 'hex');
    expect(badHex.code).toBe(2);
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it('in a log directory with another partition, a failed new partition leaves the checkpoints and marker as they were', async () => {
    const root = makeTempDir();
    expect((await cli('append', path.join(root, 'other-0'), '--value', 'x')).code).toBe(0);
    const snapshot = () => Object.fromEntries(fs.readdirSync(root).filter((n) => !n.endsWith('-0')).map((n) => [n, fs.readFileSync(path.join(root, n), 'utf8')]));
    const before = snapshot();
    expect(Object.keys(before)).toContain('recovery-point-offset-checkpoint');
    const r = await sh(`printf 'not json\\n' | "$NODE" "$CLI" append ${q(path.join(root, 'new-0'))}`);
    expect(r.code).toBe(2);
    expect(fs.readdirSync(root).filter((n) => n.endsWith('-0'))).toEqual(['other-0']);
    expect(snapshot()).toEqual(before);
  });

  it('an existing partition whose run fails on the first line keeps its records and files', async () => {
    const dir = path.join(makeTempDir(), 'kept-0');
    expect((await cli('append', dir, '--value', 'first')).code).toBe(0);
    const before = fs.readdirSync(dir).sort();
    const r = await sh(`printf 'not json\\n' | "$NODE" "$CLI" append ${q(dir)}`);
    expect(r.code).toBe(2);
    expect(fs.readdirSync(dir).sort()).toEqual(before);
    expect(await values(dir)).toEqual(['first']);
  });
});
