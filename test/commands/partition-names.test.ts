/**
 * issue 9 item 14: `t-1`, `t-01` and `t-000000001` share the checkpoint key `t 1`. logtool never
 * creates a name with leading zeros; two directories naming one partition is exit 2 naming both,
 * for readers and writers alike; a lone `t-01` (unambiguous) is still readable.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { cli } from '../helpers/cli.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

describe('partition directory names', () => {
  it('append refuses to create t-01 or t-000000001 (exit 2) and creates nothing', async () => {
    const logDir = makeTempDir('logtool-names-');
    for (const name of ['t-01', 't-000000001']) {
      const r = await cli('append', path.join(logDir, name), '--value', 'x');
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/leading zeros.*t-1/);
      expect(fs.existsSync(path.join(logDir, name))).toBe(false);
    }
    expect(fs.readdirSync(logDir)).toEqual([]);
  });

  it('t-1 beside t-01: every command on either exits 2 naming both; no checkpoint is written', async () => {
    const logDir = makeTempDir('logtool-names-');
    expect((await cli('append', path.join(logDir, 't-1'), '--value', 'one')).code).toBe(0);
    // A leading-zero directory that logtool did not create (copied in by hand).
    fs.cpSync(path.join(logDir, 't-1'), path.join(logDir, 't-01'), { recursive: true });
    const before = fs.readFileSync(path.join(logDir, 'recovery-point-offset-checkpoint'), 'utf8');
    for (const name of ['t-1', 't-01']) {
      for (const args of [['append', '--value', 'two'], ['read'], ['verify'], ['recover']]) {
        const r = await cli(args[0]!, path.join(logDir, name), ...args.slice(1));
        expect(r.code, `${args[0]} ${name}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toMatch(/t-0?1 and t-0?1 both name partition 1 of topic t/);
        expect(r.stderr).toContain(name === 't-1' ? 't-01' : 't-1');
      }
    }
    expect(fs.readFileSync(path.join(logDir, 'recovery-point-offset-checkpoint'), 'utf8')).toBe(before);
  });

  it('a lone t-01 that Kafka-style tools left is still readable and writable', async () => {
    const logDir = makeTempDir('logtool-names-');
    const log = Log.open(path.join(logDir, 't-2'));
    await log.append([{ value: Buffer.from('a') }]);
    await log.close();
    fs.renameSync(path.join(logDir, 't-2'), path.join(logDir, 't-02'));
    expect((await cli('append', path.join(logDir, 't-02'), '--value', 'b')).code).toBe(0);
    const r = await cli('read', path.join(logDir, 't-02'), '--json');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { value: string }).value)).toEqual(['a', 'b']);
  });
});
