/**
 * The append boundary of `Log` (issue 9, items 2 and 3): `roll(n)` never moves offsets backwards
 * or reuses a segment's files, and `appendEncoded` accepts only batches Kafka's LogValidator would
 * accept from a client; a refused batch leaves the log unchanged and usable.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/index.js';
import { LogtoolError } from '../../src/engine/errors.js';
import { segmentFileName } from '../../src/engine/segment.js';
import { removeTempDirs, tempPartitionPath } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

const rec = (v: string) => ({ key: Buffer.from(`k${v}`), value: Buffer.from(v), timestamp: 1_700_000_000_000 });
const values = (log: Log) => [...log.read()].map((r) => `${r.offset}:${r.value!.toString()}`);

function expectRefused(fn: () => unknown, kind: string, message: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(LogtoolError);
  expect((caught as LogtoolError).kind).toBe(kind);
  expect((caught as LogtoolError).message).toMatch(message);
}

describe('Log.roll', () => {
  it('refuses an offset below the log end and keeps every acknowledged record', async () => {
    const dir = tempPartitionPath('roll-back-0');
    const log = Log.open(dir);
    await log.append([rec('a'), rec('b'), rec('c')]);
    const bytes = fs.readFileSync(path.join(dir, segmentFileName(0, '.log')));
    expectRefused(() => log.roll(0), 'usage', /below the log end offset 3/);
    expectRefused(() => log.roll(2), 'usage', /below the log end offset 3/);
    expect(log.segments.map((s) => s.baseOffset)).toEqual([0]);
    expect(fs.readFileSync(path.join(dir, segmentFileName(0, '.log')))).toEqual(bytes);
    // Still usable, offsets continue.
    await log.append([rec('d')]);
    await log.close();
    const again = Log.open(dir, { readOnly: true });
    expect(values(again)).toEqual(['0:a', '1:b', '2:c', '3:d']);
    await again.close();
  });

  it('a second roll at the same offset is refused: no duplicate segment in memory', async () => {
    const dir = tempPartitionPath('roll-twice-0');
    const log = Log.open(dir);
    await log.append([rec('a')]);
    log.roll();
    expectRefused(() => log.roll(), 'usage', /segment 00000000000000000001\.log already starts there/);
    expect(log.segments.map((s) => s.baseOffset)).toEqual([0, 1]);
    await log.append([rec('b')]);
    // Above the log end offset the next record (offset 2) would land below the segment's base.
    expectRefused(() => log.roll(5), 'usage', /above the log end offset 2/);
    log.roll(2);
    await log.append([rec('c')]);
    expect(log.segments.map((s) => s.baseOffset)).toEqual([0, 1, 2]);
    await log.close();
    const again = Log.open(dir, { readOnly: true });
    expect(values(again)).toEqual(['0:a', '1:b', '2:c']);
    await again.close();
  });

  it('never truncates a .log file it did not create', async () => {
    const dir = tempPartitionPath('roll-stray-0');
    const log = Log.open(dir);
    await log.append([rec('a')]);
    // A file at the next base offset that the open log does not know (another tool put it there).
    const stray = path.join(dir, segmentFileName(1, '.log'));
    fs.writeFileSync(stray, 'not mine');
    expect(() => log.roll()).toThrow(/open failed: EEXIST/);
    expect(fs.readFileSync(stray, 'utf8')).toBe('not mine');
    expect(log.segments.map((s) => s.baseOffset)).toEqual([0]);
    log.abandon();
  });
});
