/**
 * Records read from a log carry their keys, values and header values as views of the bytes read
 * (RecordBatch v2, Kafka's DefaultRecord): views that stay valid for as long as a caller holds them,
 * however far it reads on (the read buffer is never refilled in place once records came from it).
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

describe('records kept while the read goes on', () => {
  it('keep their keys, values and header values (2 MiB read past them)', async () => {
    const dir = path.join(makeTempDir(), 'views-0');
    const log = Log.open(dir, { config: { flushMode: 'async' }, rememberConfig: false });
    const text = (i: number, what: string): Buffer => Buffer.from(`${what}-${i}-`.padEnd(100, what[0]));
    for (let b = 0; b < 200; b++) {
      await log.append(Array.from({ length: 100 }, (_, k) => {
        const i = b * 100 + k;
        return { key: text(i, 'key'), value: text(i, 'value'), headers: [{ key: 'h', value: text(i, 'header') }] };
      }));
    }
    await log.close();
    const reader = Log.open(dir, { readOnly: true });
    try {
      const all = [...reader.read()];
      expect(all).toHaveLength(20_000);
      const damaged = all.filter((r, i) => !r.value?.equals(text(i, 'value')) || !r.key?.equals(text(i, 'key')) || !r.headers[0]?.value?.equals(text(i, 'header')));
      expect(damaged.map((r) => r.offset)).toEqual([]);
    } finally {
      await reader.close();
    }
  });
});

describe('the views a read returns', () => {
  it('are Buffers in every respect, and records without headers share one frozen empty array (Kafka\'s Record.EMPTY_HEADERS)', async () => {
    const dir = path.join(makeTempDir(), 'views-1');
    const log = Log.open(dir, { config: { flushMode: 'async' }, rememberConfig: false });
    await log.append([{ key: Buffer.from('k'), value: Buffer.from('héllo') }, { key: null, value: Buffer.from('x'), headers: [{ key: 'h', value: Buffer.from('hv') }] }]);
    await log.close();
    const reader = Log.open(dir, { readOnly: true });
    try {
      const [a, b] = [...reader.read()];
      for (const v of [a!.key!, a!.value!, b!.headers[0]!.value!]) {
        expect(Buffer.isBuffer(v)).toBe(true);
        expect(v).toBeInstanceOf(Buffer);
        expect(v.constructor).toBe(Buffer);
        expect(v.subarray(0, 1).constructor).toBe(Buffer);
      }
      expect(a!.value).toEqual(Buffer.from('héllo'));
      expect(a!.value!.toString('utf8')).toBe('héllo');
      expect(a!.value!.toString('base64')).toBe(Buffer.from('héllo').toString('base64'));
      expect(JSON.stringify(a!.key)).toBe(JSON.stringify(Buffer.from('k')));
      expect(a!.headers).toEqual([]);
      expect(Object.isFrozen(a!.headers)).toBe(true);
      expect(b!.headers).toEqual([{ key: 'h', value: Buffer.from('hv') }]);
      expect(Object.isFrozen(b!.headers)).toBe(false);
    } finally {
      await reader.close();
    }
  });
});
