/**
 * `logtool read` through the built CLI, against values computed from the bytes by an independent
 * reader (kafka-oracle.ts) and against the expectations the fixtures' source repositories state:
 *
 *  - `read --batches --json`: every field of every batch of broker segments (idempotent producer
 *    ids, LogAppendTime + lz4), of legacy wrappers (first inner offset and record count, which the
 *    wrapper header does not carry) and of a COMMIT marker (controlType, coordinatorEpoch);
 *  - `read --json` over legacy and mixed v0/v1/v2 message sets written as a `.log`;
 *  - control records are skipped unless `--control`;
 *  - `--encoding base64|hex`, and non-UTF-8 keys, values and header values surviving
 *    `read --json | append` byte for byte (utf8 and hex);
 *  - `segments --json` naming the first inner offset of a segment that starts with a compressed
 *    legacy wrapper.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { ensureBuilt } from '../helpers/build.js';
import { fixturePath, hasFixtures, loadCases, makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { CODEC_NAMES, records, walk, WORKED_EXAMPLE_A, WORKED_EXAMPLE_B, type OracleEntry } from './kafka-oracle.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const LOG0 = '00000000000000000000.log';

import { cli, sh } from '../helpers/cli.js';

import { requireFixtures } from '../helpers/fixtures.js';
requireFixtures(import.meta.url);

const jsonLines = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** `<tmp>/t-0/00000000000000000000.log` holding `bytes`. */
function partitionWith(bytes: Buffer): string {
  const dir = path.join(makeTempDir('logtool-read-'), 't-0');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, LOG0), bytes);
  return dir;
}

/** What `read --batches --json` should print for one entry, from the oracle's reading. */
function expectedBatchJson(segment: number, e: OracleEntry): Record<string, unknown> {
  const rs = records(e);
  const control = e.isControl ? (['ABORT', 'COMMIT'] as const)[rs![0]!.key!.readInt16BE(2)] : undefined;
  return {
    segment,
    // A legacy wrapper's header offset is its last inner offset; its first comes from the inner messages.
    baseOffset: e.magic < 2 ? rs![0]!.offset : e.baseOffset,
    lastOffset: e.lastOffset,
    count: e.magic < 2 ? rs!.length : e.count,
    position: e.position,
    size: e.size,
    magic: e.magic,
    codec: CODEC_NAMES[e.codec],
    timestampType: e.timestampType,
    maxTimestamp: e.maxTimestamp,
    producerId: e.producerId,
    producerEpoch: e.producerEpoch,
    baseSequence: e.baseSequence,
    partitionLeaderEpoch: e.partitionLeaderEpoch,
    transactional: e.isTransactional,
    control: e.isControl,
    ...(control ? { controlType: control } : {}),
    // An end-transaction marker's value: version int16, coordinatorEpoch int32.
    ...(control ? { coordinatorEpoch: rs![0]!.value!.readInt32BE(2) } : {}),
    crcValid: e.crcValid,
  };
}

/** What `read --json` should print for a segment's records (utf8 encoding, all valid UTF-8 here). */
function expectedRecordsJson(file: string, includeControl = false): Record<string, unknown>[] {
  return walk(fs.readFileSync(file))
    .entries.filter((e) => includeControl || !e.isControl)
    .flatMap((e) => records(e)!)
    .map((r) => ({ offset: r.offset, timestamp: r.timestamp, key: r.key?.toString('utf8') ?? null, value: r.value?.toString('utf8') ?? null, headers: r.headerKeys.map((k) => ({ key: k })) }));
}

/** Header values are not in the oracle's summary; compare headers by key only. */
const headerKeysOnly = (rows: Record<string, unknown>[]) => rows.map((r) => ({ ...r, headers: (r.headers as { key: string }[]).map((h) => ({ key: h.key })) }));

// ---------------------------------------------------------------------------------------------

describe.skipIf(!hasFixtures).concurrent('read --batches --json', () => {
  const PARTITIONS = [
    'segments/kraft-idempotent-ldipoc-2026/TestTopicPatient-0',
    'segments/cp512-lz4-logappendtime-mscaldas-2019/_confluent-controlcenter-5-1-2-1-monitoring-message-rekey-0',
  ];
  for (const p of PARTITIONS) {
    it(`every field of every batch: ${p}`, async () => {
      const r = await cli('read', fixturePath(p), '--batches', '--json');
      const { entries } = walk(fs.readFileSync(fixturePath(p, LOG0)));
      expect(entries.length).toBeGreaterThan(1);
      expect(jsonLines(r.stdout)).toEqual(entries.map((e) => expectedBatchJson(0, e)));
      expect(r.code).toBe(0);
    });
  }

  it('the partitions cover producer ids, LogAppendTime and lz4', () => {
    const all = PARTITIONS.flatMap((p) => walk(fs.readFileSync(fixturePath(p, LOG0))).entries);
    expect(new Set(all.filter((e) => e.producerId >= 0).map((e) => e.producerId)).size).toBeGreaterThan(1);
    expect(all.some((e) => e.timestampType === 'LogAppendTime' && CODEC_NAMES[e.codec] === 'lz4')).toBe(true);
  });

  it('legacy wrappers: first inner offset and record count; plain messages count 1', async () => {
    const dir = partitionWith(fs.readFileSync(fixturePath('legacy', 'kafkago-v1c-v1-v1c.bin')));
    const r = await cli('read', dir, '--batches', '--json');
    const { entries } = walk(fs.readFileSync(path.join(dir, LOG0)));
    const rows = jsonLines(r.stdout);
    expect(rows).toEqual(entries.map((e) => expectedBatchJson(0, e)));
    // The first wrapper carries offset 1 in its header but holds offsets 0 and 1.
    expect(rows[0]).toMatchObject({ baseOffset: 0, lastOffset: 1, count: 2, magic: 1, codec: 'gzip', timestampType: 'CreateTime', partitionLeaderEpoch: -1 });
    expect(r.code).toBe(0);
  });

  it('a COMMIT marker: transactional, control, controlType COMMIT', async () => {
    const dir = partitionWith(Buffer.concat([WORKED_EXAMPLE_A, WORKED_EXAMPLE_B]));
    const rows = jsonLines((await cli('read', dir, '--batches', '--json')).stdout);
    expect(rows).toEqual(walk(Buffer.concat([WORKED_EXAMPLE_A, WORKED_EXAMPLE_B])).entries.map((e) => expectedBatchJson(0, e)));
    expect(rows[1]).toMatchObject({ baseOffset: 10, producerId: 1000, producerEpoch: 0, partitionLeaderEpoch: 3, transactional: true, control: true, controlType: 'COMMIT', crcValid: true });
    expect(rows[1]!.coordinatorEpoch).toEqual(expect.any(Number));
  });
});

// ---------------------------------------------------------------------------------------------

describe.skipIf(!hasFixtures).concurrent('read --json over legacy and mixed message sets', () => {
  // v1 and v2, each compressed and not, interleaved; and a magic-1 set followed by v2 batches.
  const FILES = ['mixed/kafkago-v1-v1c-v2-v2c-v2b-v2b-v2b-v2bc-v1b-v1bc.bin', 'mixed/kafkajs-fetch-v4-mixed-magic1-then-v2.bin'];
  const messagesInOrder = (name: string) =>
    (loadCases().cases.find((c) => c.case === name) as { expect_from_test?: { messagesInOrder?: { key: string; value: string }[] } } | undefined)?.expect_from_test?.messagesInOrder;

  for (const name of FILES) {
    it(name, async () => {
      const dir = partitionWith(fs.readFileSync(fixturePath(name)));
      const r = await cli('read', dir, '--json');
      const rows = jsonLines(r.stdout);
      expect(headerKeysOnly(rows)).toEqual(expectedRecordsJson(path.join(dir, LOG0)));
      // Offsets are consecutive from 0, as the source repos' tests read them.
      expect(rows.map((x) => x.offset)).toEqual(rows.map((_, i) => i));
      const expected = messagesInOrder(name);
      if (expected) expect(rows.map((x) => ({ key: x.key, value: x.value }))).toEqual(expected);
      else expect(rows).toHaveLength(2425); // kafkajs: offsets 0–2424 (header walk)
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    });
  }
});

// ---------------------------------------------------------------------------------------------

describe.concurrent('control records', () => {
  it('are skipped by read --json unless --control', async () => {
    const dir = partitionWith(Buffer.concat([WORKED_EXAMPLE_A, WORKED_EXAMPLE_B]));
    const [plain, withControl] = await Promise.all([cli('read', dir, '--json'), cli('read', dir, '--json', '--control', '--encoding', 'hex')]);
    expect(jsonLines(plain.stdout)).toEqual([
      { offset: 0, timestamp: 1700000000000, key: 'k', value: 'v1', headers: [] },
      { offset: 1, timestamp: 1700000000005, key: null, value: 'v2', headers: [{ key: 'h', value: 'x' }] },
    ]);
    const rows = jsonLines(withControl.stdout);
    expect(rows.map((x) => x.offset)).toEqual([0, 1, 10]);
    // §19 B: key = version 0, type 1 (COMMIT); value = version 0, coordinatorEpoch 5.
    expect(rows[2]).toEqual({ offset: 10, timestamp: 1700000000000, key: '00000001', value: '000000000005', headers: [] });
    expect(plain.code).toBe(0);
  });

  it.skipIf(!hasFixtures)('a KRaft LEADER_CHANGE record appears only with --control', async () => {
    const dir = fixturePath('segments/kraft-idempotent-ldipoc-2026/__cluster_metadata-0');
    const [plain, withControl] = await Promise.all([cli('read', dir, '--json', '-n', '3'), cli('read', dir, '--json', '--control', '-n', '3', '--encoding', 'hex')]);
    const first = walk(fs.readFileSync(path.join(dir, LOG0))).entries[0]!;
    expect(first.isControl).toBe(true);
    expect(jsonLines(plain.stdout).map((x) => x.offset)).toEqual([1, 2, 3]);
    const rows = jsonLines(withControl.stdout);
    expect(rows.map((x) => x.offset)).toEqual([0, 1, 2]);
    expect(rows[0]!.key).toBe(records(first)![0]!.key!.toString('hex'));
    expect((rows[0]!.key as string).slice(4, 8)).toBe('0002'); // control type LEADER_CHANGE
  });
});

// ---------------------------------------------------------------------------------------------

describe.concurrent('encodings and non-UTF-8 bytes', () => {
  // Keys, values and header values that are not UTF-8 (lone continuation bytes, 0xff, a NUL, a
  // truncated sequence), next to plain text, an empty value, a null key and a tombstone.
  const RECORDS = [
    { key: Buffer.from([0xff, 0xfe, 0x00, 0x41]), value: Buffer.from([0x80, 0x81, 0xc3]), headers: [{ key: 'bin', value: Buffer.from([0xde, 0xad, 0xbe, 0xef]) }], timestamp: 1_700_000_000_001 },
    { key: Buffer.from('plain'), value: Buffer.from('héllo wörld'), headers: [{ key: 'h', value: null }], timestamp: 1_700_000_000_002 },
    { key: null, value: Buffer.alloc(0), headers: [], timestamp: 1_700_000_000_003 },
    { key: Buffer.from([0xe2, 0x82]), value: null, headers: [{ key: 'x', value: Buffer.from([0xc0, 0xaf]) }], timestamp: 1_700_000_000_004 },
  ];
  const hexOrNull = (b: Buffer | null) => (b === null ? null : b.toString('hex'));
  const asHex = RECORDS.map((r, i) => ({ offset: i, timestamp: r.timestamp, key: hexOrNull(r.key), value: hexOrNull(r.value), headers: r.headers.map((h) => ({ key: h.key, value: hexOrNull(h.value) })) }));

  let source: string;
  beforeAll(async () => {
    source = path.join(makeTempDir('logtool-read-enc-'), 'src-0');
    const log = Log.open(source, { rememberConfig: false });
    try {
      await log.append(RECORDS);
    } finally {
      await log.close();
    }
  });

  it('--encoding hex and base64 print the exact bytes', async () => {
    const [hex, b64] = await Promise.all([cli('read', source, '--json', '--encoding', 'hex'), cli('read', source, '--json', '--encoding', 'base64')]);
    expect(jsonLines(hex.stdout)).toEqual(asHex);
    const b64of = (b: Buffer | null) => (b === null ? null : b.toString('base64'));
    expect(jsonLines(b64.stdout)).toEqual(RECORDS.map((r, i) => ({ offset: i, timestamp: r.timestamp, key: b64of(r.key), value: b64of(r.value), headers: r.headers.map((h) => ({ key: h.key, value: b64of(h.value) })) })));
  });

  it('utf8 (default) keeps text as text and writes other bytes as {"base64": …}', async () => {
    const rows = jsonLines((await cli('read', source, '--json')).stdout);
    expect(rows[0]).toEqual({ offset: 0, timestamp: RECORDS[0]!.timestamp, key: { base64: '//4AQQ==' }, value: { base64: 'gIHD' }, headers: [{ key: 'bin', value: { base64: '3q2+7w==' } }] });
    expect(rows[1]).toEqual({ offset: 1, timestamp: RECORDS[1]!.timestamp, key: 'plain', value: 'héllo wörld', headers: [{ key: 'h', value: null }] });
    expect(rows[2]).toMatchObject({ key: null, value: '' });
    expect(rows[3]).toMatchObject({ key: { base64: '4oI=' }, value: null });
  });

  for (const encoding of ['utf8', 'hex']) {
    it(`read --json --encoding ${encoding} | append --encoding ${encoding}: the copy holds the same bytes`, async () => {
      const copy = path.join(makeTempDir('logtool-read-copy-'), 'copy-0');
      const p = await sh(`"$NODE" "$CLI" read '${source}' --json --encoding ${encoding} | "$NODE" "$CLI" append '${copy}' --encoding ${encoding}`);
      expect(p.stderr).toBe('');
      expect(p.code).toBe(0);
      const log = Log.open(copy, { readOnly: true });
      try {
        const got = [...log.read()].map((r) => ({ offset: r.offset, timestamp: r.timestamp, key: hexOrNull(r.key), value: hexOrNull(r.value), headers: r.headers.map((h) => ({ key: h.key, value: hexOrNull(h.value) })) }));
        expect(got).toEqual(asHex);
      } finally {
        await log.close();
      }
    });
  }
});

// ---------------------------------------------------------------------------------------------

describe.skipIf(!hasFixtures).concurrent('segments --json', () => {
  it('a segment starting with a compressed legacy wrapper reports its first inner offset', async () => {
    const dir = partitionWith(fs.readFileSync(fixturePath('legacy', 'kafkago-v1c-v1c.bin')));
    const first = walk(fs.readFileSync(path.join(dir, LOG0))).entries[0]!;
    const inner = records(first)!;
    expect(first.lastOffset).toBe(1); // the wrapper's header offset …
    expect(inner[0]!.offset).toBe(0); // … is not its first offset
    const [seg] = jsonLines((await cli('segments', dir, '--json')).stdout);
    expect(seg).toMatchObject({ baseOffset: 0, firstOffset: 0, lastOffset: 3, firstTimestamp: inner[0]!.timestamp });
  });
});
