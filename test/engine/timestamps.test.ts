/**
 * issue 9 item 10: any int64 is a valid Kafka timestamp. The engine stores exactly what it is given
 * (a bigint beyond ±2^53) and reads it back exactly; the CLI parses --timestamp as a 64-bit
 * integer (exit 2 only outside int64), prints ISO-8601 only when a Date can hold the value and the
 * integer otherwise, and prints it exactly in JSON (a string beyond 2^53). A corrupt .timeindex
 * never crashes the display.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log, encodeBatch, readBatchHeader, decodeRecords } from '../../src/api.js';
import { CompressionType } from '../../src/engine/format/compression.js';
import { ensureBuilt } from '../helpers/build.js';
import { removeTempDirs, tempPartitionPath } from '../helpers/fixtures.js';
import { cli, sh } from '../helpers/cli.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

describe('timestamps in the engine', () => {
  it.each([
    ['one batch of far-apart int64 timestamps (deltas beyond ±2^53)', [0n, (1n << 62n) + 1n, INT64_MIN, INT64_MAX, 1_700_000_000_000n]],
    ['timestamps just beyond 2^53', [9007199254740993n, 9007199254740995n]],
  ])('%s: encode → decode is exact, uncompressed and compressed', (_name, stamps) => {
    for (const compression of [CompressionType.none, CompressionType.gzip]) {
      const records = stamps.map((t, i) => ({ key: null, value: Buffer.from(`v${i}`), timestamp: t, headers: i === 1 ? [{ key: 'h', value: null }] : [] }));
      const batch = encodeBatch(records, { baseOffset: 0, compression });
      const h = readBatchHeader(batch, 0);
      expect(batch.readBigInt64BE(27)).toBe(stamps[0]);
      expect(batch.readBigInt64BE(35)).toBe(stamps.reduce((m, t) => (t > m ? t : m), -1n));
      const back = decodeRecords(batch, 0, h).map((r) => BigInt(r.timestamp));
      expect(back).toEqual(stamps);
    }
  });

  it('numbers within ±2^53 stay numbers; beyond, records read back as bigints; a log round-trips them', async () => {
    const dir = tempPartitionPath('ts-0');
    const log = Log.open(dir, { config: { flushMode: 'async' } });
    await log.append([{ value: Buffer.from('a'), timestamp: 1_700_000_000_000 }, { value: Buffer.from('b'), timestamp: 99999999999999999n }]);
    await log.append([{ value: Buffer.from('c'), timestamp: INT64_MAX }]);
    await log.close();
    const ro = Log.open(dir, { readOnly: true });
    try {
      expect([...ro.read()].map((r) => r.timestamp)).toEqual([1_700_000_000_000, 99999999999999999n, INT64_MAX]);
    } finally {
      await ro.close();
    }
  });

  it('rejects what is not an int64: a fractional or unsafe number, a bigint beyond int64', async () => {
    expect(() => encodeBatch([{ value: null, timestamp: 1.5 }], { baseOffset: 0 })).toThrow(/not an integer within ±2\^53/);
    expect(() => encodeBatch([{ value: null, timestamp: 2 ** 60 }], { baseOffset: 0 })).toThrow(/not an integer within ±2\^53/);
    expect(() => encodeBatch([{ value: null, timestamp: INT64_MAX + 1n }], { baseOffset: 0 })).toThrow(/outside the int64 range/);
  });
});

describe('timestamps through the CLI', () => {
  it('append --timestamp keeps any int64 exactly; read, read --json, segments print it without crashing', async () => {
    const dir = tempPartitionPath('ts-0');
    for (const t of ['9007199254740991', '99999999999999999', '-9223372036854775808', '9223372036854775807', '2026-01-01T00:00:00Z']) {
      const r = await cli('append', dir, '--value', `v${t}`, '--timestamp', t);
      expect(r.code, r.stderr).toBe(0);
    }
    const text = await cli('read', dir);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.trim().split('\n').map((l) => l.split('\t')[1])).toEqual([
      '9007199254740991',
      '99999999999999999',
      '-9223372036854775808',
      '9223372036854775807',
      '2026-01-01T00:00:00.000Z',
    ]);
    const json = await cli('read', dir, '--json');
    expect(json.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { timestamp: unknown }).timestamp)).toEqual([
      9007199254740991,
      '99999999999999999',
      '-9223372036854775808',
      '9223372036854775807',
      1767225600000,
    ]);
    const segs = await cli('segments', dir);
    expect(segs.code, segs.stderr).toBe(0);
    expect(segs.stdout).toContain('99999999999999999\t99999999999999999');
    expect(segs.stdout).toContain('9223372036854775807\t9223372036854775807');
    const segsJson = await cli('segments', dir, '--json');
    expect(segsJson.code).toBe(0);
    expect(segsJson.stdout).toContain('"maxTimestamp":"9223372036854775807"');
    const batches = await cli('read', dir, '--batches', '--json');
    expect(batches.stdout).toContain('"maxTimestamp":"99999999999999999"');
  });

  it('--timestamp outside int64 exits 2 and appends nothing', async () => {
    const dir = tempPartitionPath('ts-0');
    for (const t of ['9223372036854775808', '-9223372036854775809']) {
      const r = await cli('append', dir, '--value', 'x', '--timestamp', t);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/outside the int64 range/);
    }
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('NDJSON: read --json | append reproduces exact timestamps; a raw number beyond 2^53 is not rounded', async () => {
    const src = tempPartitionPath('ts-0');
    const r = await sh(`printf '%s\\n' '{"timestamp":99999999999999999,"value":"a"}' '{"timestamp":"-9223372036854775808","value":"b"}' '{"timestamp":5,"value":"c"}' | "$NODE" "$CLI" append ${src}`);
    expect(r.code, r.stderr).toBe(0);
    const copy = path.join(path.dirname(src), 'copy-0');
    const piped = await sh(`"$NODE" "$CLI" read ${src} --json | "$NODE" "$CLI" append ${copy} && "$NODE" "$CLI" read ${copy} --json`);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { timestamp: unknown }).timestamp)).toEqual(['99999999999999999', '-9223372036854775808', 5]);
    const bad = await sh(`printf '%s\\n' '{"timestamp":1e30,"value":"x"}' | "$NODE" "$CLI" append ${copy}`);
    expect(bad.code).toBe(2);
  });

  it('a corrupt .timeindex entry beyond the Date range is printed as an integer, not a crash', async () => {
    const dir = tempPartitionPath('ts-0');
    const log = Log.open(dir, { config: { flushMode: 'async', indexIntervalBytes: 1 } });
    for (let i = 0; i < 3; i++) await log.append([{ value: Buffer.from(`v${i}`), timestamp: 1_700_000_000_000 + i }]);
    await log.close();
    const ti = path.join(dir, '00000000000000000000.timeindex');
    const buf = fs.readFileSync(ti);
    expect(buf.length).toBeGreaterThanOrEqual(12);
    buf.writeBigInt64BE(1n << 60n, buf.length - 12); // the last entry: far beyond a Date
    fs.writeFileSync(ti, buf);
    const r = await cli('segments', dir);
    expect(r.stderr).not.toMatch(/internal error/);
    expect([0, 3]).toContain(r.code);
    expect(r.stdout).toContain(String(1n << 60n));
  });

  it('compact keeps timestamps beyond ±2^53 exact in rebuilt batches', async () => {
    const dir = tempPartitionPath('ts-0');
    const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 200, cleanupPolicy: 'compact' } });
    const big = 99999999999999999n;
    // One batch of three keys; k1 is overwritten later, so the batch is rebuilt with k2 and k3 only.
    await log.append([
      { key: Buffer.from('k1'), value: Buffer.from('old'), timestamp: big },
      { key: Buffer.from('k2'), value: Buffer.from('b'), timestamp: big + 2n },
      { key: Buffer.from('k3'), value: Buffer.from('c'), timestamp: -(1n << 62n) - 1n },
    ]);
    await log.append([{ key: Buffer.from('k1'), value: Buffer.from('new'), timestamp: 5 }]);
    await log.append([{ key: Buffer.from('k4'), value: Buffer.from('active'), timestamp: 6 }]);
    await log.close();
    const r = await cli('compact', dir);
    expect(r.code, r.stderr).toBe(0);
    const ro = Log.open(dir, { readOnly: true });
    try {
      expect([...ro.read()].map((x) => [x.key!.toString(), x.timestamp])).toEqual([
        ['k2', big + 2n],
        ['k3', -(1n << 62n) - 1n],
        ['k1', 5],
        ['k4', 6],
      ]);
    } finally {
      await ro.close();
    }
    const batches = await cli('read', dir, '--batches', '--json');
    expect(JSON.parse(batches.stdout.split('\n')[0]!)).toMatchObject({ count: 2, maxTimestamp: String(big + 2n) });
  });
});
