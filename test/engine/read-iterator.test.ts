/**
 * Log.read()'s iterator (record-iterator.ts, a hand-written iterator since issue 15) keeps the
 * behaviour of the generator it replaced, on a real log with a record-level defect in its second
 * batch (a CRC-valid batch declaring one record fewer than it holds: Kafka's "bytes remain"
 * check, kafka-format.md §2.3): nothing runs before the first next(); maxRecords stops before the
 * next record is decoded; an error closes it for good; return() closes it; it is its own iterable.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log, LogtoolError } from '../../src/api.js';
import { crc32c } from '../../src/engine/format/crc32c.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

let dir: string;
const value = (i: number) => Buffer.from(`value-${i}`);

beforeAll(async () => {
  dir = path.join(makeTempDir('logtool-read-iterator-'), 'iter-0');
  const log = Log.open(dir, { config: { flushMode: 'async' }, rememberConfig: false });
  await log.append(Array.from({ length: 10 }, (_, i) => ({ key: null, value: value(i) })));
  const second = await log.append(Array.from({ length: 5 }, (_, i) => ({ key: null, value: value(10 + i) })));
  expect(second.baseOffset).toBe(10);
  await log.close();
  // The second batch declares 4 records of its 5 (CRC recomputed: only the record-level check fails).
  const file = path.join(dir, '00000000000000000000.log');
  const bytes = fs.readFileSync(file);
  const p = 12 + bytes.readInt32BE(8); // after the first batch
  bytes.writeInt32BE(4, p + 57);
  bytes.writeUInt32BE(crc32c(bytes, p + 21, bytes.length), p + 17);
  fs.writeFileSync(file, bytes);
});

/** `fn` on the log opened read-only, closed after. */
async function reading(fn: (log: Log) => void): Promise<void> {
  const log = Log.open(dir, { readOnly: true });
  try {
    fn(log);
  } finally {
    await log.close();
  }
}

describe('Log.read() as an iterator', () => {
  it('stops at maxRecords without decoding further, and is its own iterable', () =>
    reading((log) => {
      const it = log.read({ maxRecords: 10 });
      expect(it[Symbol.iterator]()).toBe(it);
      expect([...it].map((r) => r.value!.toString())).toEqual(Array.from({ length: 10 }, (_, i) => value(i).toString()));
      expect(it.next()).toEqual({ value: undefined, done: true });
    }));

  it('throws the record-level error where it is found, then stays done', () =>
    reading((log) => {
      const it = log.read();
      const seen: number[] = [];
      let error: unknown;
      try {
        for (const r of it) seen.push(r.offset);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(LogtoolError);
      expect((error as LogtoolError).message).toMatch(/remain after 4 records/);
      expect(seen).toEqual([...Array.from({ length: 10 }, (_, i) => i), 10, 11, 12, 13]);
      expect(it.next().done).toBe(true);
    }));

  it('runs nothing before the first next(): a read below the log start fails there', () =>
    reading((log) => {
      const it = log.read({ fromOffset: -1 });
      expect(() => it.next()).toThrow(/below the log start offset/);
      expect(it.next().done).toBe(true);
    }));

  it('return() ends it at once; throw() ends it and throws', () =>
    reading((log) => {
      const a = log.read();
      expect(a.next().value?.offset).toBe(0);
      expect(a.return(undefined)).toEqual({ value: undefined, done: true });
      expect(a.next().done).toBe(true);
      const b = log.read({ fromOffset: 3 });
      expect(b.next().value?.offset).toBe(3);
      expect(() => b.throw(new Error('stop'))).toThrow('stop');
      expect(b.next().done).toBe(true);
      // A read from the middle of the first batch returns from there, and breaks out cleanly.
      const offsets: number[] = [];
      for (const r of log.read({ fromOffset: 7 })) {
        offsets.push(r.offset);
        if (offsets.length === 3) break;
      }
      expect(offsets).toEqual([7, 8, 9]);
    }));
});
