/**
 * Writers exclude each other per partition whether they are a LogManager (one flock on each log
 * directory, partition locks only while loading) or a writer of one partition (its partition's
 * flock, then a check of the log directory's): log/lock.ts. The other writer is a real process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log, LogManager, LogtoolError } from '../../../src/api.js';
import { makeTempDir, removeTempDirs } from '../../helpers/fixtures.js';
import { engineEntry, ensureBuilt } from '../../helpers/build.js';

/** Opens a LogManager over a log directory, or a Log of one partition, says "open", and holds it until stdin closes. */
const HOLDER = (engineUrl: string) => `
import { Log, LogManager } from ${JSON.stringify(engineUrl)};
const [what, target] = process.argv.slice(2);
const held = what === 'manager' ? await LogManager.open([target]) : Log.open(target, { rememberConfig: false });
process.stdout.write('open\\n');
process.stdin.resume();
process.stdin.on('end', async () => { await held.close(); process.exit(0); });
`;

let script: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  ensureBuilt();
  script = path.join(makeTempDir('logtool-writer-locks-'), 'holder.mjs');
  fs.writeFileSync(script, HOLDER(pathToFileURL(engineEntry).href));
});
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  removeTempDirs();
});

/** Starts a holder and resolves once it holds what it opened. */
function hold(what: 'manager' | 'partition', target: string): Promise<ChildProcess> {
  const c = spawn(process.execPath, [script, what, target], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(c);
  return new Promise((resolve, reject) => {
    let err = '';
    c.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    c.stdout!.on('data', (d: Buffer) => d.toString().includes('open') && resolve(c));
    c.on('exit', (code) => reject(new Error(`holder exited ${code}: ${err}`)));
  });
}

async function release(c: ChildProcess): Promise<void> {
  const exited = new Promise((r) => c.on('exit', r));
  c.stdin!.end();
  await exited;
}

async function logDirWithPartitions(): Promise<string> {
  const logDir = makeTempDir('logtool-locks-logdir-');
  for (const p of ['t-0', 't-1']) {
    const log = Log.open(path.join(logDir, p), { rememberConfig: false });
    await log.append([{ value: Buffer.from(p) }]);
    await log.close();
  }
  return logDir;
}

const lockError = (fn: () => unknown): LogtoolError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof LogtoolError) return e;
    throw e;
  }
  throw new Error('expected a lock error');
};

describe('writer locks', () => {
  it('while a LogManager in another process holds the log directory, a writer of one of its partitions is refused, and admitted after', async () => {
    const logDir = await logDirWithPartitions();
    const manager = await hold('manager', logDir);
    const e = lockError(() => Log.open(path.join(logDir, 't-1')));
    expect(e.kind).toBe('lock');
    expect(e.message).toMatch(/a LogManager holds the log directory/);
    // Readers take no lock.
    const reader = Log.open(path.join(logDir, 't-1'), { readOnly: true });
    expect(reader.nextOffset).toBe(1);
    await reader.close();
    await release(manager);
    const log = Log.open(path.join(logDir, 't-1'));
    expect(log.nextOffset).toBe(1);
    await log.close();
  }, 60_000);

  it('while a writer in another process holds a partition, a LogManager over its directory fails to open and holds nothing after', async () => {
    const logDir = await logDirWithPartitions();
    const writer = await hold('partition', path.join(logDir, 't-0'));
    await expect(LogManager.open([logDir])).rejects.toMatchObject({ kind: 'lock' });
    // The failed manager released its log-directory lock: the other partition is writable.
    const other = Log.open(path.join(logDir, 't-1'));
    await other.close();
    await release(writer);
    const m = await LogManager.open([logDir]);
    expect(m.allLogs().length).toBe(2);
    await m.close();
  }, 60_000);

  it("two LogManagers over one log directory exclude each other; the same process's writer of one partition is refused too", async () => {
    const logDir = await logDirWithPartitions();
    const m = await LogManager.open([logDir]);
    await expect(LogManager.open([logDir])).rejects.toMatchObject({ kind: 'lock' });
    expect(lockError(() => Log.open(path.join(logDir, 't-0'))).kind).toBe('lock');
    // Its own logs append and checkpoint under its hold (no wait on its own flock).
    for (const log of m.allLogs()) await log.append([{ value: Buffer.from('x') }]);
    await m.close();
    const log = Log.open(path.join(logDir, 't-0'));
    expect(log.nextOffset).toBe(2);
    await log.close();
  }, 60_000);
});
