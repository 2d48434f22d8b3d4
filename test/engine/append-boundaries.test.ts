/**
 * The append boundary of `Log` (issue 9, items 2 and 3): `roll(n)` never moves offsets backwards
 * or reuses a segment's files, and `appendEncoded` accepts only batches Kafka's LogValidator would
 * accept from a client; a refused batch leaves the log unchanged and usable.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, type AppendOptions } from '../../src/api.js';
import { computeBatchCrc, encodeBatch, writeInt64, type EncodeBatchOptions } from '../../src/engine/format/record-batch.js';
import { LogtoolError } from '../../src/engine/errors.js';
import { segmentFileName } from '../../src/engine/segment/segment.js';
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
    expectRefused(() => log.roll(0), 'invalid-argument', /below the log end offset 3/);
    expectRefused(() => log.roll(2), 'invalid-argument', /below the log end offset 3/);
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
    expectRefused(() => log.roll(), 'invalid-state', /segment 00000000000000000001\.log already starts there/);
    expect(log.segments.map((s) => s.baseOffset)).toEqual([0, 1]);
    await log.append([rec('b')]);
    // Above the log end offset the next record (offset 2) would land below the segment's base.
    expectRefused(() => log.roll(5), 'invalid-argument', /above the log end offset 2/);
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

describe('Log.appendEncoded validates as Kafka LogValidator does', () => {
  const T = 1_700_000_000_000;
  const good = (n: number, opts: Partial<EncodeBatchOptions> = {}) =>
    encodeBatch(Array.from({ length: n }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), timestamp: T + i })), { baseOffset: 0, ...opts });
  /** Changes a header field and recomputes the CRC, so only the named rule can catch it. */
  const withField = (b: Buffer, write: (b: Buffer) => void) => {
    const out = Buffer.from(b);
    write(out);
    out.writeUInt32BE(computeBatchCrc(out, 0, out.length), 17);
    return out;
  };

  const invalid: [string, () => Buffer, RegExp, AppendOptions?][] = [
    ['a wrong CRC', () => { const b = good(2); b[b.length - 1]! ^= 1; return b; }, /byte 17: CRC-32C is \d+ but the batch says/],
    ['a negative lastOffsetDelta', () => withField(good(1), (b) => b.writeInt32BE(-5, 23)), /byte 23: negative last offset delta -5/],
    ['a lastOffsetDelta disagreeing with the count', () => withField(good(2), (b) => b.writeInt32BE(4, 23)), /byte 23: last offset delta 4 spans 5 offsets but the batch counts 2/],
    ['a count disagreeing with the records', () => withField(good(2), (b) => { b.writeInt32BE(2, 23); b.writeInt32BE(3, 57); }), /the batch counts 3 records but holds 2/],
    ['a zero record count', () => withField(good(1), (b) => { b.writeInt32BE(-1, 23); b.writeInt32BE(0, 57); }), /byte 23: negative last offset delta|invalid record count 0/],
    ['an undeclared control batch', () => good(1, { control: true, producerId: 7, producerEpoch: 0, transactional: true }), /byte 21: control batches are written by the transaction coordinator/],
    ['a producer id without a sequence', () => good(1, { producerId: 7, producerEpoch: 0, baseSequence: -1 }), /byte 53: invalid sequence number -1 with producer id 7/],
    ['a max timestamp that is not the records\' maximum', () => withField(good(2), (b) => writeInt64(b, 35, T + 99)), /byte 35: max timestamp \d+ is not the records' maximum \d+/],
    ['LogAppendTime the append did not ask for', () => good(1, { logAppendTime: true }), /byte 21: the batch says LogAppendTime/],
    ['an unknown codec', () => withField(good(1), (b) => b.writeInt16BE(6, 21)), /byte 21: unknown compression codec 6/],
    ['a gzip batch whose count disagrees with its records', () => withField(good(3, { compression: 1 }), (b) => { b.writeInt32BE(3, 23); b.writeInt32BE(4, 57); }), /byte 61: the batch counts 4 records but holds 3/],
    ['records with offset deltas that skip', () => good(2, { offsetDeltas: [0, 2] } as Partial<EncodeBatchOptions>), /offset delta 2; the records of a batch take consecutive offsets|spans 3 offsets but the batch counts 2/],
  ];

  for (const [what, make, message, options] of invalid) {
    it(`refuses ${what} (exit 3), appends nothing, and keeps the log usable`, async () => {
      const dir = tempPartitionPath('validate-0');
      const log = Log.open(dir);
      await log.append([rec('a')]);
      const sizeBefore = log.activeSegment.size;
      let caught: unknown;
      try {
        await log.appendEncoded(make(), options);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(LogtoolError);
      expect((caught as LogtoolError).kind).toBe('corrupt');
      expect((caught as LogtoolError).exitCode).toBe(3);
      expect((caught as LogtoolError).message).toMatch(message);
      expect((caught as LogtoolError).describe()).toContain(dir);
      expect(log.nextOffset).toBe(1);
      expect(log.activeSegment.size).toBe(sizeBefore);
      const r = await log.appendEncoded(good(2));
      expect(r).toMatchObject({ baseOffset: 1, lastOffset: 2, status: 'flushed' });
      // A crash now: recovery keeps every acknowledged batch, nothing is cut.
      log.abandon();
      fs.rmSync(path.join(path.dirname(dir), 'recovery-point-offset-checkpoint'), { force: true }); // recover everything
      const warnings: string[] = [];
      const again = Log.open(dir, { onWarning: (w) => warnings.push(w.message) });
      expect(again.nextOffset).toBe(3);
      expect(values(again)).toEqual(['0:a', '1:v0', '2:v1']);
      expect(warnings).toEqual([]);
      await again.close();
    });
  }

  it('accepts valid batches as they are: compressed, declared control, LogAppendTime, with producer state', async () => {
    const dir = tempPartitionPath('validate-ok-0');
    const log = Log.open(dir);
    await log.appendEncoded(good(3, { compression: 1 }));
    await log.appendEncoded(good(2, { producerId: 9, producerEpoch: 1, baseSequence: 0, transactional: true }));
    await log.appendEncoded(encodeBatch([{ key: Buffer.from([0, 0, 0, 1]), value: Buffer.from([0, 0, 0, 0, 0, 0]), timestamp: T }], { baseOffset: 0, control: true, producerId: 9, producerEpoch: 1, transactional: true }), { control: true });
    await log.appendEncoded(good(1, { logAppendTime: true }), { logAppendTime: true });
    expect(log.nextOffset).toBe(7);
    await log.close();
  });
});
