/**
 * A checkpoint file of the log directory that exists but does not parse stops every writable
 * command before anything changes, with an error naming the file and the line (exit 3): taken as
 * empty and rewritten, it would lose every other partition's entry (logdir/dir-checkpoints.ts).
 * Read-only commands still work.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTempDirs, treeSnapshot } from '../helpers/fixtures.js';

const WRITABLE: [string, (dir: string) => string[]][] = [
  ['append', (dir) => ['append', dir, '--key', 'k', '--value', 'v']],
  ['append to a new partition', (dir) => ['append', path.join(path.dirname(dir), 't-9'), '--key', 'k', '--value', 'v']],
  ['recover', (dir) => ['recover', dir]],
  ['recover --full', (dir) => ['recover', dir, '--full']],
  ['rebuild-index', (dir) => ['rebuild-index', dir]],
  ['retention', (dir) => ['retention', dir, '--retention-ms', '1']],
  ['delete-records', (dir) => ['delete-records', dir, '--before-offset', '3']],
  ['compact', (dir) => ['compact', dir]],
];

let template: string;

beforeAll(async () => {
  ensureBuilt();
  template = makeTempDir('logtool-badcp-');
  for (const p of ['t-0', 't-1']) {
    for (let i = 0; i < 3; i++) {
      const r = await cli('append', path.join(template, p), '--key', `k${i % 2}`, '--value', `v${i}`, '--segment-bytes', '1024');
      expect(r.code, r.stderr).toBe(0);
    }
  }
});
afterAll(() => removeTempDirs());

function copyWith(file: string, content: string): string {
  const logDir = makeTempDir('logtool-badcp-case-');
  fs.cpSync(template, logDir, { recursive: true });
  fs.writeFileSync(path.join(logDir, file), content);
  return path.join(logDir, 't-0');
}

describe('a malformed checkpoint of the log directory', () => {
  for (const [file, content, line] of [
    ['recovery-point-offset-checkpoint', '0\n2\nt 0 3\nt 1 x\n', 4],
    ['log-start-offset-checkpoint', '0\n3\nt 0 1\n', 2],
  ] as const) {
    for (const [name, args] of WRITABLE) {
      it(`${file}: ${name} stops with exit 3 naming the file and line ${line}, and changes no byte`, async () => {
        const dir = copyWith(file, content);
        const logDir = path.dirname(dir);
        const before = treeSnapshot(logDir);
        const r = await cli(...args(dir));
        expect(r.code, r.stderr).toBe(3);
        expect(r.stderr).toContain(`${path.join(logDir, file)}: line ${line}:`);
        expect(treeSnapshot(logDir)).toEqual(before);
      });
    }
  }

  it('read-only commands still work beside it and report it (exit 3)', async () => {
    const dir = copyWith('recovery-point-offset-checkpoint', '0\n2\nt 0 3\nt 1 x\n');
    const file = path.join(path.dirname(dir), 'recovery-point-offset-checkpoint');
    const before = treeSnapshot(path.dirname(dir));
    const read = await cli('read', dir, '--json');
    expect(read.stdout.trim().split('\n').map((l) => JSON.parse(l).value)).toEqual(['v0', 'v1', 'v2']);
    expect(read.stderr).toContain(`${file}: unreadable checkpoint treated as empty: line 4:`);
    const segments = await cli('segments', dir);
    expect(segments.stdout.trim().split('\n').length).toBeGreaterThan(1); // a header and a row per segment
    expect(treeSnapshot(path.dirname(dir))).toEqual(before);
  });
});
