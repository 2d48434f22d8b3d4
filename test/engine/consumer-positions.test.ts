/**
 * ConsumerPositions: Kafka checkpoint text format in the partition directory, monotonic commits
 * (unless force), bounds checked against the log start and end offsets, group-name validation,
 * persistence across reopen, commits while the log writer holds the partition lock, and a clear
 * corrupt error for a mangled file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, ConsumerPositions, CONSUMER_OFFSETS_CHECKPOINT, LogtoolError } from '../../src/api.js';
import { tempPartitionPath, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

const rec = (v: string) => ({ key: null, value: Buffer.from(v) });

async function logWith(n: number, name = 'orders-0'): Promise<Log> {
  const log = Log.open(tempPartitionPath(name), { config: { flushMode: 'async' } });
  if (n > 0) await log.append(Array.from({ length: n }, (_, i) => rec(`v${i}`)));
  return log;
}

function expectError(fn: () => unknown, kind: string, re: RegExp): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LogtoolError);
    expect((e as LogtoolError).kind).toBe(kind);
    expect((e as LogtoolError).message).toMatch(re);
    return;
  }
  throw new Error('expected an error');
}

describe('ConsumerPositions', () => {
  it('commits, lists and writes Kafka checkpoint format', async () => {
    const log = await logWith(10);
    const p = new ConsumerPositions(log);
    expect(p.get('billing')).toBeUndefined();
    expect(p.list()).toEqual([]);
    p.commit('billing', 5);
    p.commit('audit', 10);
    expect(p.get('billing')).toBe(5);
    expect(p.list()).toEqual([
      { group: 'audit', offset: 10 },
      { group: 'billing', offset: 5 },
    ]);
    expect(fs.readFileSync(path.join(log.dir, CONSUMER_OFFSETS_CHECKPOINT), 'utf8')).toBe('0\n2\naudit 10\nbilling 5\n');
    expect(fs.existsSync(path.join(log.dir, `${CONSUMER_OFFSETS_CHECKPOINT}.tmp`))).toBe(false);
    await log.close();
  });

  it('is monotonic unless forced, and bounded by the log start and end offsets', async () => {
    const log = await logWith(10);
    const p = new ConsumerPositions(log);
    p.commit('g', 7);
    expectError(() => p.commit('g', 3), 'out-of-range', /back from 7 to 3 without force/);
    expect(p.get('g')).toBe(7);
    p.commit('g', 3, { force: true });
    expect(p.get('g')).toBe(3);
    expectError(() => p.commit('g', 11), 'out-of-range', /beyond the log end offset 10/);
    log.deleteRecordsBefore(4, { deleteDelayMs: 0 });
    expectError(() => p.commit('h', 2), 'out-of-range', /below the log start offset 4/);
    expectError(() => p.commit('g', -1), 'invalid-argument', /non-negative integer/);
    p.commit('g', 10);
    expect(p.get('g')).toBe(10);
    await log.close();
  });

  it('rejects group names the file cannot hold', async () => {
    const log = await logWith(1);
    const p = new ConsumerPositions(log);
    for (const bad of ['', 'two words', 'tab\tx', 'x'.repeat(250), 'é']) expectError(() => p.commit(bad, 0), 'invalid-argument', /consumer group name/);
    await log.close();
  });

  it('persists across reopen and commits while the writer holds the partition lock', async () => {
    const log = await logWith(6);
    // A read-only open in the same process while the writer holds the flock on the directory:
    // commits lock the sibling .lock file, so they neither block nor fail.
    const reader = Log.open(log.dir, { readOnly: true });
    new ConsumerPositions(reader).commit('cli', 4);
    await reader.close();
    new ConsumerPositions(log).commit('app', 6);
    await log.close();
    const again = Log.open(log.dir);
    expect(new ConsumerPositions(again).list()).toEqual([
      { group: 'app', offset: 6 },
      { group: 'cli', offset: 4 },
    ]);
    await again.close();
    // The loader leaves the files alone (Kafka ignores unknown files the same way).
    expect(fs.readdirSync(log.dir)).toEqual(expect.arrayContaining([CONSUMER_OFFSETS_CHECKPOINT, `${CONSUMER_OFFSETS_CHECKPOINT}.lock`]));
  });

  it('reports a mangled file as corrupt instead of dropping positions', async () => {
    const log = await logWith(3);
    fs.writeFileSync(path.join(log.dir, CONSUMER_OFFSETS_CHECKPOINT), '0\n2\ng 1\n');
    const p = new ConsumerPositions(log);
    expectError(() => p.get('g'), 'corrupt', /expected 2 entries, found 1/);
    expectError(() => p.commit('g', 2), 'corrupt', /expected 2 entries/);
    fs.writeFileSync(path.join(log.dir, CONSUMER_OFFSETS_CHECKPOINT), '0\n1\ng x\n');
    expectError(() => p.list(), 'corrupt', /malformed position/);
    await log.close();
  });
});
