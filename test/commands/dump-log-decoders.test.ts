/**
 * `dump-log --offsets-decoder`, `--transaction-log-decoder`, `--cluster-metadata-decoder` and
 * `--json` through the built CLI: the record lines DumpLogSegments' OffsetsMessageParser,
 * TransactionLogMessageParser and ClusterMetadataLogMessageParser print
 * (` key: {"type":"1","data":{…}} payload: {"version":"3","data":{…}}`, `<DELETE>` for a
 * tombstone), compared character for character for records whose fields were read by hand from
 * the fixtures' bytes; every record of every fixture __consumer_offsets log and of a KRaft metadata
 * log decodes; a record that does not decode is reported on its line (exit 3), never a crash.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { fixturePath, makeTempDir, removeTempDirs, requireFixtures } from '../helpers/fixtures.js';
import { Log } from '../../src/engine/log/log.js';
import { h } from '../helpers/kafka-internal.js';
import { records, walk } from './kafka-oracle.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);
const hasFixtures = requireFixtures(import.meta.url);

const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');
const LOG0 = '00000000000000000000.log';

describe('dump-log --offsets-decoder', () => {
  it('prints the lines Kafka prints for hand-checked records (yuanliubei __consumer_offsets-17)', async () => {
    // Read by hand from 00000000000000000000.log (see test/engine/format/internal-topics.expected.ts):
    // offset 56: key 28 bytes, value 24 bytes, batch first timestamp 0x17de298add3, producer id -1 but
    // baseSequence 0 (bytes 0x35–0x38 are zero, so Kafka prints sequence 0), committed offset 0x2949f4;
    // offset 57: GroupMetadata key 16 bytes, value 32 bytes, timestamp 0x17de2992422.
    const dir = fixturePath('segments', 'zk-multisegment-yuanliubei-2022', '__consumer_offsets-17');
    const r = await cli('dump-log', '--offsets-decoder', '--files', `${path.join(dir, LOG0)},${path.join(dir, '00000000000000000058.log')}`);
    expect(r.code).toBe(0);
    const records = lines(r.stdout).filter((l) => l.startsWith('| '));
    expect(records).toEqual([
      '| offset: 56 CreateTime: 1640184196563 keySize: 28 valueSize: 24 sequence: 0 headerKeys: [] key: {"type":"1","data":{"group":"DemoConsumer","topic":"topic1","partition":0}} payload: {"version":"3","data":{"offset":2705908,"leaderEpoch":-1,"metadata":"","commitTimestamp":1640184196562}}',
      '| offset: 57 CreateTime: 1640184226850 keySize: 16 valueSize: 32 sequence: -1 headerKeys: [] key: {"type":"2","data":{"group":"DemoConsumer"}} payload: {"version":"2","data":{"protocolType":"consumer","generation":5,"protocol":null,"leader":null,"currentStateTimestamp":1640184226850,"members":[]}}',
      '| offset: 58 CreateTime: 1640830085673 keySize: 28 valueSize: -1 sequence: -1 headerKeys: [] key: {"type":"1","data":{"group":"DemoConsumer","topic":"topic1","partition":0}} payload: <DELETE>',
      '| offset: 59 CreateTime: 1640830085673 keySize: 16 valueSize: -1 sequence: -1 headerKeys: [] key: {"type":"2","data":{"group":"DemoConsumer"}} payload: <DELETE>',
    ]);
  });

  it('a flexible OffsetCommitValue v4 (rupia __consumer_offsets-44, offset 6), with --skip-record-metadata', async () => {
    const file = fixturePath('segments', 'kraft-multisegment-rupia-2026', '__consumer_offsets-44', LOG0);
    const r = await cli('dump-log', '--offsets-decoder', '--skip-record-metadata', '--files', file);
    expect(r.code).toBe(0);
    expect(lines(r.stdout).filter((l) => l.startsWith('| '))[0]).toBe(
      '| key: {"type":"1","data":{"group":"rupia-transaction-group","topic":"topic_transactions","partition":0}} payload: {"version":"4","data":{"offset":5,"leaderEpoch":-1,"metadata":"","commitTimestamp":1765883866522}}',
    );
  });

  it('every record of every fixture __consumer_offsets log decodes (one run over all files)', async () => {
    if (!hasFixtures) return;
    const root = fixturePath('segments');
    const files = fs
      .readdirSync(root)
      .flatMap((c) => fs.readdirSync(path.join(root, c)).filter((d) => d.startsWith('__consumer_offsets-')).map((d) => path.join(root, c, d)))
      .flatMap((d) => fs.readdirSync(d).filter((f) => f.endsWith('.log') && fs.statSync(path.join(d, f)).size > 0).map((f) => path.join(d, f)));
    expect(files.length).toBeGreaterThan(30);
    const r = await cli('dump-log', '--offsets-decoder', '--files', files.join(','));
    expect(r.code).toBe(0);
    const records = lines(r.stdout).filter((l) => l.startsWith('| ') && !/isControl|endTxnMarker/.test(l));
    expect(records.length).toBeGreaterThan(8000);
    for (const l of records) expect(l).toMatch(/ key: \{"type":"[012]","data":\{"group":"[^"]*"[^]*\} payload: (<DELETE>|\{"version":"[0-4]","data":\{.*\}\})$/);
  });

  it('--json: one decoded object per record, nothing else on stdout', async () => {
    const file = fixturePath('segments', 'kraft-multisegment-rupia-2026', '__consumer_offsets-44', LOG0);
    const r = await cli('dump-log', '--offsets-decoder', '--json', '--files', file);
    expect(r.code).toBe(0);
    const objs = lines(r.stdout).map((l) => JSON.parse(l) as { offset: number; key: { type: string; data: { group: string } }; value: { version: string; data: Record<string, unknown> } | null });
    expect(objs.map((o) => o.offset)).toEqual([6, 8]);
    expect(objs[0]).toEqual({
      offset: 6,
      timestamp: 1765883866524,
      key: { type: '1', data: { group: 'rupia-transaction-group', topic: 'topic_transactions', partition: 0 } },
      value: { version: '4', data: { offset: 5, leaderEpoch: -1, metadata: '', commitTimestamp: 1765883866522 } },
    });
    expect(objs[1]!.value!.data.protocolType).toBe('consumer');
  });

  it('--json without a decoder is a usage error (exit 2)', async () => {
    const r = await cli('dump-log', '--json', '--files', fixturePath('segments', 'kraft-multisegment-rupia-2026', '__consumer_offsets-44', LOG0));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
  });

  it('a record that is not an offsets record is reported on its line, exit 3, no stack trace', async () => {
    const dir = path.join(makeTempDir(), '__consumer_offsets-0');
    const log = Log.open(dir);
    await log.append([
      { key: h('0063 0000'), value: h('0000'), timestamp: 1000 },
      { key: h('0001 ffff'), value: null, timestamp: 1000 },
      { key: null, value: h('00'), timestamp: 1000 },
    ]);
    await log.close();
    const r = await cli('dump-log', '--offsets-decoder', '--files', path.join(dir, LOG0));
    expect(r.code).toBe(3);
    const records = lines(r.stdout).filter((l) => l.startsWith('| '));
    expect(records[0]).toMatch(/ key: Unknown record type 99 at offset 0, skipping\.$/);
    expect(records[1]).toMatch(/ key: Error at offset 1, skipping\. Could not read record with version 1 from key's buffer due to: non-nullable field group was serialized as null\.$/);
    expect(records[2]).toMatch(/ key: Failed to decode message at offset 2 using offset topic decoder \(message had a missing key\)$/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('dump-log --transaction-log-decoder and --cluster-metadata-decoder', () => {
  it('__transaction_state records print as TransactionLog.formatRecordKeyAndValue', async () => {
    const dir = path.join(makeTempDir(), '__transaction_state-0');
    const log = Log.open(dir);
    // TransactionLogKey v0 "tx"; TransactionLogValue v0: producerId 7, epoch 1, timeout 60000, state 4
    // CompleteCommit, partitions [{orders,[2]}], last update 200, start 100 (classic encoding).
    const key = h('0000 0002 7478');
    const value = h('0000 0000000000000007 0001 0000ea60 04 00000001 0006 6f7264657273 00000001 00000002 00000000000000c8 0000000000000064');
    await log.append([{ key, value, timestamp: 1000 }, { key, value: null, timestamp: 1001 }]);
    await log.close();
    const r = await cli('dump-log', '--transaction-log-decoder', '--files', path.join(dir, LOG0));
    expect(r.code).toBe(0);
    const records = lines(r.stdout).filter((l) => l.startsWith('| '));
    expect(records[0]).toMatch(/ key: transaction_metadata::transactionalId=tx payload: producerId:7,producerEpoch:1,state=CompleteCommit,partitions=\[orders-2\],txnLastUpdateTimestamp=200,txnTimeoutMs=60000$/);
    expect(records[1]).toMatch(/ key: transaction_metadata::transactionalId=tx payload: <DELETE>$/);
  });

  it("a transaction's partitions print in the iteration order of Kafka's Scala mutable.HashSet", async () => {
    const dir = path.join(makeTempDir(), '__transaction_state-1');
    const log = Log.open(dir);
    // TransactionLogValue v0, state 1 Ongoing, partitions orders [2,0,1], payments [0..19], audit [5].
    const topics: [string, number[]][] = [['orders', [2, 0, 1]], ['payments', [...Array(20).keys()]], ['audit', [5]]];
    const parts = topics.map(([t, ids]) => {
      const b = Buffer.alloc(2 + t.length + 4 + 4 * ids.length);
      b.writeInt16BE(t.length, 0);
      b.write(t, 2, 'latin1');
      b.writeInt32BE(ids.length, 2 + t.length);
      ids.forEach((id, i) => b.writeInt32BE(id, 6 + t.length + 4 * i));
      return b;
    });
    const value = Buffer.concat([h('0000 0000000000000007 0001 0000ea60 01'), h('00000003'), ...parts, h('00000000000000c8 0000000000000064')]);
    await log.append([{ key: h('0000 0002 7478'), value, timestamp: 1000 }]);
    await log.close();
    const r = await cli('dump-log', '--transaction-log-decoder', '--files', path.join(dir, LOG0));
    expect(r.code).toBe(0);
    // Derived outside logtool: a line-by-line Python transcription of Scala 2.13.15's
    // mutable.HashSet (addAll/sizeHint/add/addElem/growTable) fed TopicPartition hashCodes (Java's
    // String.hashCode values checked with jshell). 24 elements: the table grows 16 → 32 → 64.
    const order =
      'payments-4,payments-6,payments-0,payments-2,payments-12,payments-14,payments-8,payments-10,payments-19,payments-15,payments-17,orders-1,' +
      'payments-3,payments-5,payments-1,payments-11,payments-13,payments-7,payments-9,payments-16,payments-18,orders-0,audit-5,orders-2';
    const record = lines(r.stdout).find((l) => l.startsWith('| '))!;
    expect(record.endsWith(` payload: producerId:7,producerEpoch:1,state=Ongoing,partitions=[${order}],txnLastUpdateTimestamp=200,txnTimeoutMs=60000`)).toBe(true);
  });

  it('--json shows a KRaft snapshot\'s control records (SnapshotHeader, KRaftVersion, KRaftVoters, SnapshotFooter) as Kafka prints them', async () => {
    const file = fixturePath('segments', 'kraft-multisegment-rupia-2026', '__cluster_metadata-0', '00000000000000945423-0000000001.checkpoint');
    const controls = walk(fs.readFileSync(file)).entries.filter((e) => e.isControl).flatMap((e) => records(e)!);
    expect(controls.length).toBeGreaterThanOrEqual(2);
    const [json, text] = await Promise.all([
      cli('dump-log', '--cluster-metadata-decoder', '--json', '--files', file),
      cli('dump-log', '--cluster-metadata-decoder', '--files', file),
    ]);
    expect(json.code).toBe(0);
    const objects = lines(json.stdout).map((l) => JSON.parse(l) as { offset: number; control?: string; data?: unknown });
    const shown = objects.filter((o) => o.control !== undefined);
    expect(shown.map((o) => o.offset)).toEqual(controls.map((r) => r.offset));
    // From the bytes: SnapshotHeader v0 = int16 version, int64 lastContainedLogTimestamp; SnapshotFooter v0 = int16 version.
    const header = controls[0]!;
    expect(header.key!.readInt16BE(2)).toBe(3);
    expect(shown[0]).toEqual({ offset: header.offset, timestamp: header.timestamp, control: 'SnapshotHeader', data: { version: 0, lastContainedLogTimestamp: Number(header.value!.readBigInt64BE(2)) } });
    expect(shown.at(-1)).toEqual({ offset: controls.at(-1)!.offset, timestamp: controls.at(-1)!.timestamp, control: 'SnapshotFooter', data: { version: 0 } });
    // The same label and JSON as the record line of Kafka's text output.
    const recordLines = lines(text.stdout).filter((l) => l.startsWith('| '));
    for (const o of shown) {
      const line = recordLines.find((l) => l.startsWith(`| offset: ${o.offset} `))!;
      expect(line.endsWith(` headerKeys: [] ${o.control} ${JSON.stringify(o.data)}`)).toBe(true);
    }
  });

  it('a KRaft metadata log: every record a known type, control records as before', async () => {
    const file = fixturePath('segments', 'kraft-idempotent-ldipoc-2026', '__cluster_metadata-0', LOG0);
    const r = await cli('dump-log', '--cluster-metadata-decoder', '--files', file);
    expect(r.code).toBe(0);
    const records = lines(r.stdout).filter((l) => l.startsWith('| '));
    expect(records.length).toBeGreaterThan(4900);
    const data = records.filter((l) => l.includes(' payload: '));
    for (const l of data) expect(l).toMatch(/ keySize: -1 .* payload: \{"type":"[A-Z_]+","version":\d+,"data":\{.*\}\}$/);
    expect(data.some((l) => l.includes('"type":"REGISTER_BROKER_RECORD","version":3,'))).toBe(true);
    expect(r.stdout).not.toContain('Error at');
  });
});
