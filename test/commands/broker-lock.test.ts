/**
 * Coexisting with a Kafka broker (engine/logdir/broker-lock.ts): a real JVM takes `.lock` as Kafka
 * does (test/helpers/LockHolder.java, FileChannel.tryLock); while it holds it every writing
 * command exits 1 naming the directory and changes nothing, and read-only commands work. The
 * other way, while logtool holds its shared lock the JVM's tryLock fails. Skipped with a notice
 * where `java` is absent.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerLock } from '../../src/api.js';
import { cli, run } from '../helpers/cli.js';
import { cliPath, ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTempDirs, repoRoot, treeSnapshot } from '../helpers/fixtures.js';

const hasJava = spawnSync('java', ['-version']).status === 0;
if (!hasJava) console.log('broker-lock.test: skipped, `java` is not on PATH (a real JVM is needed to hold Kafka\'s lock)');
const HOLDER = path.join(repoRoot, 'test', 'helpers', 'LockHolder.java');

/** Starts the JVM holding DIR/.lock; resolves once it printed "locked". */
async function startHolder(dir: string): Promise<ChildProcessWithoutNullStreams> {
  const child = spawn('java', [HOLDER, dir], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('locked')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`LockHolder exited ${code}: ${out} ${err}`)));
  });
  return child;
}

async function stopHolder(child: ChildProcessWithoutNullStreams): Promise<void> {
  const exited = new Promise((r) => child.on('exit', r));
  child.stdin.end();
  await exited;
}

/** `java LockHolder.java DIR probe`: "locked" (exit 0) or "busy" (exit 4). */
const probe = (dir: string) => run('java', [HOLDER, dir, 'probe'], {}, 120_000);

let logDir: string;
let partition: string;

beforeAll(async () => {
  if (!hasJava) return;
  ensureBuilt();
  logDir = makeTempDir('logtool-broker-');
  partition = path.join(logDir, 't-0');
  for (let i = 0; i < 4; i++) {
    const r = await cli('append', partition, '--key', `k${i % 2}`, '--value', `v${i}`, '--segment-bytes', '1024');
    expect(r.code, r.stderr).toBe(0);
  }
  expect(fs.existsSync(path.join(logDir, '.lock'))).toBe(false); // logtool never creates it here
  fs.writeFileSync(path.join(logDir, '.lock'), ''); // as in a broker's log directory (Kafka creates it)
}, 120_000);
afterAll(() => removeTempDirs());

describe.skipIf(!hasJava)('a Kafka broker (a real JVM) holding the log directory', () => {
  it('every writing command exits 1 naming the directory and changes nothing; read-only commands work', async () => {
    const holder = await startHolder(logDir);
    try {
      const before = treeSnapshot(logDir);
      const writers: string[][] = [
        ['append', partition, '--key', 'k', '--value', 'v'],
        ['append', path.join(logDir, 't-5'), '--key', 'k', '--value', 'v'],
        ['recover', partition, '--full'],
        ['rebuild-index', partition],
        ['rebuild-index', path.join(partition, '00000000000000000000.log')],
        ['retention', partition, '--retention-ms', '1'],
        ['delete-records', partition, '--before-offset', '2'],
        ['compact', partition],
        ['consume', partition, '--group', 'g'],
        ['transactions', 'abort', partition, '--producer-id', '1'],
      ];
      for (const args of writers) {
        const r = await cli(...args);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(1);
        expect(r.stderr).toContain(`a Kafka broker holds ${logDir}`);
        expect(treeSnapshot(logDir), args.join(' ')).toEqual(before);
      }
      const read = await cli('read', partition, '--json');
      expect(read.code, read.stderr).toBe(0);
      expect(read.stdout.trim().split('\n').map((l) => JSON.parse(l).value)).toEqual(['v0', 'v1', 'v2', 'v3']);
      for (const args of [
        ['verify', partition],
        ['segments', partition],
        ['dump-log', '--files', path.join(partition, '00000000000000000000.log')],
        ['ls', logDir],
        ['retention', partition, '--dry-run', '--retention-ms', '1'],
        ['recover', partition, '--dry-run'],
        ['rebuild-index', partition, '--verify'],
        ['consume', partition, '--group', 'g', '--no-commit'],
        ['transactions', 'list', partition],
      ]) {
        const r = await cli(...args);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      }
      expect(treeSnapshot(logDir)).toEqual(before);
    } finally {
      await stopHolder(holder);
    }
    // The broker is gone (the kernel dropped its lock): writers work again.
    const r = await cli('append', partition, '--key', 'k', '--value', 'after');
    expect(r.code, r.stderr).toBe(0);
  }, 600_000);

  it("while logtool holds its shared lock the JVM's tryLock fails; after release it succeeds", async () => {
    const lock = await BrokerLock.acquire(logDir);
    const second = await BrokerLock.acquire(logDir); // shared in this process, one descriptor
    try {
      const busy = await probe(logDir);
      expect(busy.stdout.trim()).toBe('busy');
      expect(busy.code).toBe(4);
      await second.release();
      expect((await probe(logDir)).stdout.trim()).toBe('busy'); // still held by `lock`
    } finally {
      await lock.release();
    }
    const free = await probe(logDir);
    expect(free.stdout.trim(), free.stderr).toBe('locked');
  }, 600_000);

  it('a running `append` holds the lock for its whole run: a broker starting meanwhile fails to lock', async () => {
    const child = spawn(process.execPath, [cliPath, 'append', partition, '--lines'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, CI: '1' } });
    const exited = new Promise<number | null>((r) => child.on('exit', r));
    child.stdin.write('one\n');
    // The child holds a POSIX READ lock once /proc/locks lists it under its pid.
    const held = new RegExp(`POSIX\\s+ADVISORY\\s+READ\\s+${child.pid}\\s`);
    const deadline = Date.now() + 60_000;
    while (!held.test(fs.readFileSync('/proc/locks', 'utf8'))) {
      if (Date.now() > deadline) throw new Error('the append never took its lock');
      await new Promise((r) => setTimeout(r, 50));
    }
    const busy = await probe(logDir);
    expect(busy.stdout.trim()).toBe('busy');
    child.stdin.end('two\n');
    expect(await exited).toBe(0);
    expect((await probe(logDir)).stdout.trim()).toBe('locked');
  }, 600_000);
});
