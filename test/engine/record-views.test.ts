/**
 * Log.readViews() (format/record-view.ts): the records of Log.read() shown one at a time in one
 * reused RecordView. For random logs (every codec, null keys and values, headers, transactions
 * committed and aborted, their control batches) the views give, through toRecord(), exactly read()'s
 * records under every read option; the view object is one; damaged bytes give read()'s error at the
 * same record; legacy (v0/v1) messages from real Kafka clients read alike.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, LogtoolError, type ReadOptions, type RecordView } from '../../src/api.js';
import type { LogRecord } from '../../src/engine/format/record-batch.js';
import { crc32c } from '../../src/engine/format/crc32c.js';
import { CompressionType } from '../../src/engine/format/compression.js';
import { encodeBatch } from '../../src/engine/format/record-batch.js';
import { endTxnMarkerRecord } from '../../src/engine/partition-state/abort-transaction.js';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../../src/engine/partition-state/producer-state.js';
import { fixturePath, hasFixtures, makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { plain, recordArb } from './arbitraries.js';

afterAll(removeTempDirs);

const CODECS = [CompressionType.none, CompressionType.gzip, CompressionType.snappy, CompressionType.lz4, CompressionType.zstd];

/** One append of a random log: plain records, or a transaction's records then (maybe at once) its marker. */
const stepArb = fc.record({
  records: fc.array(recordArb({ maxBytes: 40, tsSpread: 100_000 }), { minLength: 1, maxLength: 6 }),
  codec: fc.constantFrom(...CODECS),
  txn: fc.constantFrom('none', 'commit', 'abort', 'open'),
  roll: fc.boolean(),
});

/** Everything read() says about a read: its records (by content, timestamp type kept), or its error. */
function readAll<T>(it: Iterable<T>, toRecord: (x: T) => LogRecord): { records: unknown[]; error?: string } {
  const records: unknown[] = [];
  try {
    for (const x of it) {
      const r = toRecord(x);
      records.push({ ...plain(r), timestampType: typeof r.timestamp, emptyHeadersShared: r.headers.length === 0 && Object.isFrozen(r.headers) });
    }
  } catch (e) {
    return { records, error: e instanceof LogtoolError ? `${e.kind}: ${e.message}` : String(e) };
  }
  return { records };
}

/** The view's own fields agree with the record it makes. */
function checkedView(v: RecordView): LogRecord {
  const r = v.toRecord();
  expect([v.offset, v.timestamp, v.headerCount]).toEqual([r.offset, r.timestamp, r.headers.length]);
  expect(v.keyLength).toBe(r.key === null ? -1 : r.key.length);
  expect(v.valueLength).toBe(r.value === null ? -1 : r.value.length);
  if (r.value !== null) expect(v.bytes.subarray(v.valueStart, v.valueStart + v.valueLength).equals(r.value)).toBe(true);
  if (r.key !== null) expect(v.bytes.subarray(v.keyStart, v.keyStart + v.keyLength).equals(r.key)).toBe(true);
  expect(v.key()?.equals(r.key!) ?? r.key).toBe(r.key === null ? null : true);
  return r;
}

describe('Log.readViews()', () => {
  it('gives read()\'s records through toRecord(), for random logs and read options', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 8 }), fc.nat(40), fc.integer({ min: 1, max: 30 }), async (steps, from, max) => {
        const dir = path.join(makeTempDir('logtool-record-views-'), `views-${run++}`);
        const log = Log.open(dir, { config: { flushMode: 'async' }, rememberConfig: false });
        let pid = 100;
        for (const s of steps) {
          if (s.txn === 'none') await log.append(s.records, { compression: s.codec });
          else {
            const producerId = pid++;
            await log.append(s.records, { compression: s.codec, producerId, producerEpoch: 0, baseSequence: 0, transactional: true });
            if (s.txn !== 'open') {
              const marker = encodeBatch([endTxnMarkerRecord(s.txn === 'commit' ? CONTROL_COMMIT : CONTROL_ABORT, 2, Date.now())], { baseOffset: 0, producerId, producerEpoch: 0, baseSequence: -1, transactional: true, control: true });
              await log.appendEncoded(marker, { control: true });
            }
          }
          if (s.roll) log.roll();
        }
        await log.close();
        const reader = Log.open(dir, { readOnly: true });
        try {
          const fromOffset = Math.min(from, reader.nextOffset);
          const options: ReadOptions[] = [{}, { includeControl: true }, { isolationLevel: 'read_committed' }, { fromOffset, maxRecords: max }, { fromOffset, toOffset: fromOffset + max, includeControl: true }];
          for (const o of options) {
            const expected = readAll(reader.read(o), (r) => r);
            expect(expected.error).toBeUndefined();
            expect(readAll(reader.readViews(o), checkedView)).toEqual(expected);
          }
          expect(readAll(reader.read({ includeControl: true }), (r) => r).records.length).toBeGreaterThan(0);
        } finally {
          await reader.close();
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  it('yields one view object, refilled at each step, which is not a record', async () => {
    const dir = path.join(makeTempDir('logtool-record-views-'), 'reuse-0');
    const log = Log.open(dir, { config: { flushMode: 'async' }, rememberConfig: false });
    await log.append([{ key: Buffer.from('k0'), value: Buffer.from('v0') }, { key: null, value: null, headers: [{ key: 'h', value: Buffer.from('hv') }] }]);
    await log.append([{ key: null, value: Buffer.from('v2') }], { compression: CompressionType.gzip });
    await log.close();
    const reader = Log.open(dir, { readOnly: true });
    try {
      const it = reader.readViews();
      const first = it.next().value!;
      const offsets = [first.offset];
      const values = [first.value()?.toString()];
      for (let r = it.next(); !r.done; r = it.next()) {
        expect(r.value).toBe(first);
        offsets.push(r.value.offset);
        values.push(r.value.value()?.toString());
        if (r.value.offset === 1) expect(r.value.headers().map((h) => [h.key, h.value?.toString()])).toEqual([['h', 'hv']]);
      }
      expect(offsets).toEqual([0, 1, 2]);
      expect(values).toEqual(['v0', undefined, 'v2']);
      expect(first.batch).toMatchObject({ baseOffset: 2, recordsCount: 1 });
      // Its fields are numbers and positions: spreading it gives no key or value to mistake for a record's.
      expect(Object.keys({ ...first })).not.toContain('value');
    } finally {
      await reader.close();
    }
  });

  it('damaged bytes give read()\'s error at the same record', async () => {
    const dir = path.join(makeTempDir('logtool-record-views-'), 'corrupt-0');
    const log = Log.open(dir, { config: { flushMode: 'async' }, rememberConfig: false });
    await log.append(Array.from({ length: 10 }, (_, i) => ({ key: null, value: Buffer.from(`value-${i}`) })));
    await log.append(Array.from({ length: 5 }, (_, i) => ({ key: null, value: Buffer.from(`value-${10 + i}`), headers: [{ key: 'h', value: null }] })));
    await log.close();
    const file = path.join(dir, '00000000000000000000.log');
    const good = fs.readFileSync(file);
    const second = 12 + good.readInt32BE(8);
    /** The log with the second batch changed by `damage`, its CRC recomputed (only record-level checks fail). */
    const damaged = (damage: (b: Buffer) => void, keepCrc: boolean): void => {
      const bytes = Buffer.from(good);
      damage(bytes);
      if (!keepCrc) bytes.writeUInt32BE(crc32c(bytes, second + 21, bytes.length), second + 17);
      fs.writeFileSync(file, bytes);
    };
    const cases: [string, (b: Buffer) => void, RegExp][] = [
      ['one record fewer declared', (b) => b.writeInt32BE(4, second + 57), /bytes remain after 4 records/],
      ['one record more declared', (b) => b.writeInt32BE(6, second + 57), /premature end of records: 5 of 6/],
      ['a header key longer than its record', (b) => (b[b.length - 3] = 0x7e), /record 4 header 0 key is invalid/],
      // A batch whose CRC fails ends the read there (a warning), the records before it read.
      ['a CRC mismatch', (b) => (b[b.length - 1] ^= 1), /^10 records$/],
    ];
    for (const [name, damage, message] of cases) {
      damaged(damage, name === 'a CRC mismatch');
      const reader = Log.open(dir, { readOnly: true });
      try {
        const expected = readAll(reader.read(), (r) => r);
        const views = readAll(reader.readViews(), checkedView);
        expect(views, name).toEqual(expected);
        expect(views.error ?? `${views.records.length} records`, name).toMatch(message);
      } finally {
        await reader.close();
      }
    }
  });

  it.skipIf(!hasFixtures)('reads legacy and mixed Kafka client fixtures (v0/v1 messages, compressed wrappers) as read() does', async () => {
    const files = [...fs.readdirSync(fixturePath('legacy')).map((n) => fixturePath('legacy', n)), ...fs.readdirSync(fixturePath('mixed')).map((n) => fixturePath('mixed', n))];
    let records = 0;
    for (const [i, f] of files.entries()) {
      const dir = path.join(makeTempDir('logtool-record-views-'), `legacy-${i}`);
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, '00000000000000000000.log'), fs.readFileSync(f));
      const reader = Log.open(dir, { readOnly: true });
      try {
        const expected = readAll(reader.read({ includeControl: true }), (r) => r);
        expect(readAll(reader.readViews({ includeControl: true }), checkedView), f).toEqual(expected);
        records += expected.records.length;
      } finally {
        await reader.close();
      }
    }
    expect(records).toBeGreaterThan(20);
  });
});
