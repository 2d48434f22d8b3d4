/**
 * `read` on Kafka's internal topics through the built CLI: text output decodes partitions of
 * __consumer_offsets / __transaction_state / __cluster_metadata by the directory's name (the
 * key and payload kafka-dump-log.sh's decoders print), `--raw` turns that off, `--json` stays raw
 * unless `--decode` is given (so `read --json | append` still copies a partition byte for byte),
 * and `--decode` decodes a directory of any name.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { cli, sh } from '../helpers/cli.js';
import { fixturePath, makeTempDir, removeTempDirs, requireFixtures } from '../helpers/fixtures.js';
import { Log } from '../../src/engine/log/log.js';
import { h } from '../helpers/kafka-internal.js';
import { records, walk } from './kafka-oracle.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);
requireFixtures(import.meta.url);

const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');
const OFFSETS_44 = () => fixturePath('segments', 'kraft-multisegment-rupia-2026', '__consumer_offsets-44');

async function recordsOf(dir: string) {
  const log = Log.open(dir, { readOnly: true });
  try {
    return [...log.read({ fromOffset: 0 })].map((r) => ({ offset: r.offset, timestamp: r.timestamp, key: r.key?.toString('hex'), value: r.value?.toString('hex') }));
  } finally {
    await log.close();
  }
}

describe('read on internal topics', () => {
  it('text output of a __consumer_offsets partition is decoded by default', async () => {
    const r = await cli('read', OFFSETS_44());
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      '6\t2025-12-16T11:17:46.524Z\t{"type":"1","data":{"group":"rupia-transaction-group","topic":"topic_transactions","partition":0}}\t{"version":"4","data":{"offset":5,"leaderEpoch":-1,"metadata":"","commitTimestamp":1765883866522}}',
      '8\t2025-12-17T04:10:15.543Z\t{"type":"2","data":{"group":"rupia-transaction-group"}}\t{"version":"3","data":{"protocolType":"consumer","generation":5,"protocol":null,"leader":null,"currentStateTimestamp":1765944615541,"members":[]}}',
      '9\t2025-12-24T04:21:46.107Z\t{"type":"1","data":{"group":"rupia-transaction-group","topic":"topic_transactions","partition":0}}\t<DELETE>',
      '10\t2025-12-24T04:21:46.107Z\t{"type":"2","data":{"group":"rupia-transaction-group"}}\t<DELETE>',
    ]);
  });

  it('--raw prints the bytes, as for any partition', async () => {
    const r = await cli('read', OFFSETS_44(), '--raw', '-n', '1');
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual(['6\t2025-12-16T11:17:46.524Z\t\\0\\x01\\0\\x17rupia-transaction-group\\0\\x12topic_transactions\\0\\0\\0\\0\t\\0\\x04\\0\\0\\0\\0\\0\\0\\0\\x05\\xff\\xff\\xff\\xff\\x01\\0\\0\\x01\\x9b&\\xe1m\\x9a\\0']);
  });

  it('--json stays raw, so read --json | append copies the partition exactly', async () => {
    const copy = path.join(makeTempDir(), '__consumer_offsets-44');
    const r = await sh(`"$NODE" "$CLI" read ${JSON.stringify(OFFSETS_44())} --json | "$NODE" "$CLI" append ${JSON.stringify(copy)}`);
    expect(r.code).toBe(0);
    const [src, dst] = [await recordsOf(OFFSETS_44()), await recordsOf(copy)];
    expect(dst.map(({ offset: _o, ...rest }) => rest)).toEqual(src.map(({ offset: _o, ...rest }) => rest));
  });

  it('--json --decode offsets prints the decoded objects', async () => {
    const r = await cli('read', OFFSETS_44(), '--json', '--decode', 'offsets');
    expect(r.code).toBe(0);
    const objs = lines(r.stdout).map((l) => JSON.parse(l) as { offset: number; key: { data: { group: string } }; value: unknown });
    expect(objs.map((o) => [o.offset, o.key.data.group, o.value === null])).toEqual([
      [6, 'rupia-transaction-group', false],
      [8, 'rupia-transaction-group', false],
      [9, 'rupia-transaction-group', true],
      [10, 'rupia-transaction-group', true],
    ]);
  });

  it('--decode with --raw is a usage error; an unknown --decode value too', async () => {
    expect((await cli('read', OFFSETS_44(), '--raw', '--decode', 'offsets')).code).toBe(2);
    expect((await cli('read', OFFSETS_44(), '--decode', 'groups')).code).toBe(2);
  });

  it('a record the decoder cannot read is shown as Kafka reports it, and read exits 3', async () => {
    const dir = path.join(makeTempDir(), '__consumer_offsets-9');
    const log = Log.open(dir);
    await log.append([{ key: h('0063 0000'), value: h('0000'), timestamp: 0 }]);
    await log.close();
    const r = await cli('read', dir);
    expect(r.code).toBe(3);
    expect(lines(r.stdout)).toEqual(['0\t1970-01-01T00:00:00.000Z\tUnknown record type 99 at offset 0, skipping.\t']);
  });

  it('a __transaction_state partition is decoded by name; any directory with --decode transactions', async () => {
    const parent = makeTempDir();
    const key = h('0000 0002 7478');
    const value = h('0000 0000000000000007 0001 0000ea60 00 00000000 00000000000000c8 0000000000000064');
    for (const name of ['__transaction_state-3', 'txcopy-0']) {
      const log = Log.open(path.join(parent, name));
      await log.append([{ key, value, timestamp: 0 }]);
      await log.close();
    }
    const expected = '0\t1970-01-01T00:00:00.000Z\ttransaction_metadata::transactionalId=tx\tproducerId:7,producerEpoch:1,state=Empty,partitions=[],txnLastUpdateTimestamp=200,txnTimeoutMs=60000';
    expect(lines((await cli('read', path.join(parent, '__transaction_state-3'))).stdout)).toEqual([expected]);
    expect(lines((await cli('read', path.join(parent, 'txcopy-0'), '--decode', 'transactions')).stdout)).toEqual([expected]);
    expect((await cli('read', path.join(parent, 'txcopy-0'))).stdout).not.toContain('transaction_metadata');
  });
});

describe('read --decode metadata: KRaft control records', () => {
  it('a LeaderChange control record shows as its label and JSON, the same object as dump-log --json', async () => {
    const dir = fixturePath('segments', 'kraft-idempotent-ldipoc-2026', '__cluster_metadata-0');
    const control = walk(fs.readFileSync(path.join(dir, '00000000000000000000.log'))).entries.find((e) => e.isControl)!;
    const r0 = records(control)![0]!;
    expect(r0.key!.readInt16BE(2)).toBe(2); // LEADER_CHANGE
    const [text, json, dump] = await Promise.all([
      cli('read', dir, '--to-offset', String(r0.offset + 1)),
      cli('read', dir, '--decode', 'metadata', '--json', '--to-offset', String(r0.offset + 1)),
      cli('dump-log', '--cluster-metadata-decoder', '--json', '--files', path.join(dir, '00000000000000000000.log')),
    ]);
    expect(text.code).toBe(0);
    const fromDump = lines(dump.stdout).map((l) => JSON.parse(l) as { offset: number }).find((o) => o.offset === r0.offset)!;
    expect(fromDump).toMatchObject({ control: 'LeaderChange', data: { version: 0 } });
    expect(lines(json.stdout).map((l) => JSON.parse(l) as unknown)).toContainEqual(fromDump);
    const line = lines(text.stdout).find((l) => l.startsWith(`${r0.offset}\t`))!;
    expect(line.split('\t').slice(2)).toEqual(['LeaderChange', JSON.stringify((fromDump as unknown as { data: unknown }).data)]);
  });
});

