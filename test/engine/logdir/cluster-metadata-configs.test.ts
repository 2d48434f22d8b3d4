/**
 * Topic configs decoded from a KRaft broker's `__cluster_metadata-0` (issue 12): on the corpus'
 * KRaft broker directories the result equals what `dump-log --cluster-metadata-decoder` / `read
 * --decode metadata` shows for their TopicRecords and ConfigRecords (written here by hand from that
 * output), and on a hand-made metadata log and snapshot a config is set, changed, deleted, a
 * cluster default set, and a topic removed as Kafka's ConfigurationsDelta / TopicsDelta replay them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LogtoolError } from '../../../src/engine/errors.js';
import { readClusterMetadataConfigs, type ClusterMetadataConfigs } from '../../../src/engine/logdir/cluster-metadata-configs.js';
import { fixturePath, makeTempDir, removeTempDirs, requireFixtures } from '../../helpers/fixtures.js';
import { configRecord, removeTopicRecord, topicRecord, writeMetadataLog } from '../../helpers/metadata-records.js';

afterAll(removeTempDirs);

const plain = (r: ClusterMetadataConfigs): { topics: Record<string, Record<string, string>>; brokers: Record<string, Record<string, string>> } => ({
  topics: Object.fromEntries([...r.topics].map(([k, v]) => [k, Object.fromEntries(v)])),
  brokers: Object.fromEntries([...r.brokers].map(([k, v]) => [k, Object.fromEntries(v)])),
});

// What the decoder prints for __consumer_offsets' three ConfigRecords in every one of these brokers.
const OFFSETS = { 'compression.type': 'producer', 'cleanup.policy': 'compact', 'segment.bytes': '104857600' };

describe.runIf(requireFixtures(import.meta.url))('the corpus’ KRaft broker directories', () => {
  const expected: Record<string, { snapshot: string | undefined; topics: Record<string, Record<string, string>>; brokers: Record<string, Record<string, string>> }> = {
    'kraft-confluentgo-mashakosher-2025': {
      snapshot: '00000000000000651683-0000000049.checkpoint',
      topics: { __consumer_offsets: OFFSETS, dailyTasks: {}, gameSettings: {}, seasons: {}, jwtCheckAnswer: {}, jwtCheckRequest: {} },
      brokers: {},
    },
    'kraft-idempotent-ldipoc-2026': {
      snapshot: undefined,
      topics: { __consumer_offsets: OFFSETS, 'batch2.work.notification.SHR_PROD.persistence': {}, 'subscription.matching.SHR_PROD.persistence': {}, TestTopicPatient: {}, 'Retry.TestTopicPatient': {} },
      brokers: {},
    },
    'kraft-idempotent-multisegment-erickimm-2025': {
      snapshot: '00000000000000194445-0000000015.checkpoint',
      topics: { __consumer_offsets: OFFSETS, 'my-topic': {}, 'stock-ticks': {}, 'stock-trades': {}, testing: {} },
      brokers: {},
    },
    // Its snapshot, then the log's records after the snapshot's end offset; a cluster default (BROKER, name "").
    'kraft-multisegment-rupia-2026': {
      snapshot: '00000000000001734780-0000000001.checkpoint',
      topics: { __consumer_offsets: OFFSETS, topic_transactions: {} },
      brokers: { '': { 'min.insync.replicas': '1' } },
    },
  };
  it.each(Object.keys(expected))('%s: topics and configs as the decoder shows them', (name) => {
    const dir = path.join(makeTempDir('logtool-cmc-'), 'logdir');
    fs.cpSync(fixturePath('segments', name, '__cluster_metadata-0'), path.join(dir, '__cluster_metadata-0'), { recursive: true });
    const r = readClusterMetadataConfigs(path.join(dir, '__cluster_metadata-0'));
    const e = expected[name]!;
    expect(r.snapshot).toBe(e.snapshot);
    expect(plain(r)).toEqual({ topics: e.topics, brokers: e.brokers });
    expect(r.records).toBeGreaterThan(0);
  });
});

describe('a hand-made metadata log', () => {
  it('a config set, changed and deleted; a cluster default; a removed topic; other resources ignored', async () => {
    const dir = path.join(makeTempDir('logtool-cmc-hand-'), '__cluster_metadata-0');
    await writeMetadataLog(dir, [
      topicRecord('orders', 1),
      configRecord(2, 'orders', 'retention.ms', '1000'),
      configRecord(2, 'orders', 'cleanup.policy', 'compact'),
      configRecord(2, 'orders', 'retention.ms', '2000'), // changed
      configRecord(2, 'orders', 'cleanup.policy', null), // deleted
      topicRecord('gone', 2),
      configRecord(2, 'gone', 'retention.ms', '5'),
      removeTopicRecord(2),
      configRecord(4, '', 'log.retention.ms', '3600000'),
      configRecord(4, '1', 'log.retention.ms', '7'),
      configRecord(8, 'some-group', 'session.timeout.ms', '1'), // GROUP: not kept
    ]);
    const r = readClusterMetadataConfigs(dir);
    expect(r.snapshot).toBeUndefined();
    expect(r.records).toBe(11);
    expect(plain(r)).toEqual({
      topics: { orders: { 'retention.ms': '2000' } },
      brokers: { '': { 'log.retention.ms': '3600000' }, '1': { 'log.retention.ms': '7' } },
    });
  });

  it('starts from the newest snapshot and replays only the log records at and after its end offset', async () => {
    const parent = makeTempDir('logtool-cmc-snap-');
    const dir = path.join(parent, '__cluster_metadata-0');
    // The log: offsets 0-1 are covered by the snapshot (the snapshot's values win), 2-3 come after it.
    await writeMetadataLog(dir, [
      topicRecord('orders', 1),
      configRecord(2, 'orders', 'cleanup.policy', 'delete'), // not replayed: the snapshot says compact
      configRecord(2, 'orders', 'segment.bytes', '1048576'),
      configRecord(2, 'orders', 'retention.ms', null),
    ]);
    // A snapshot ending at offset 2, and an older one that must not be read.
    const snapSrc = path.join(parent, 'snapsrc-0');
    await writeMetadataLog(snapSrc, [topicRecord('orders', 1), configRecord(2, 'orders', 'retention.ms', '60000'), configRecord(2, 'orders', 'cleanup.policy', 'compact')]);
    fs.copyFileSync(path.join(snapSrc, '00000000000000000000.log'), path.join(dir, '00000000000000000002-0000000003.checkpoint'));
    const oldSrc = path.join(parent, 'oldsrc-0');
    await writeMetadataLog(oldSrc, [topicRecord('stale', 9)]);
    fs.copyFileSync(path.join(oldSrc, '00000000000000000000.log'), path.join(dir, '00000000000000000001-0000000002.checkpoint'));
    const r = readClusterMetadataConfigs(dir);
    expect(r.snapshot).toBe('00000000000000000002-0000000003.checkpoint');
    // Snapshot: retention.ms=60000, cleanup.policy=compact; log after it: segment.bytes set, retention.ms deleted.
    expect(plain(r).topics).toEqual({ orders: { 'cleanup.policy': 'compact', 'segment.bytes': '1048576' } });
  });

  it('a torn log tail ends the replay; a torn snapshot is an error naming it', async () => {
    const parent = makeTempDir('logtool-cmc-torn-');
    const dir = path.join(parent, '__cluster_metadata-0');
    await writeMetadataLog(dir, [topicRecord('orders', 1), configRecord(2, 'orders', 'retention.ms', '1000')]);
    const logFile = path.join(dir, '00000000000000000000.log');
    fs.truncateSync(logFile, fs.statSync(logFile).size - 3);
    expect(plain(readClusterMetadataConfigs(dir)).topics).toEqual({ orders: {} });
    fs.copyFileSync(logFile, path.join(dir, '00000000000000000002-0000000001.checkpoint'));
    let message = '';
    try {
      readClusterMetadataConfigs(dir);
    } catch (err) {
      message = (err as LogtoolError).describe();
    }
    expect(message).toMatch(/00000000000000000002-0000000001\.checkpoint/);
  });

  it('a record that does not decode is an error naming the file and byte position', async () => {
    const dir = path.join(makeTempDir('logtool-cmc-bad-'), '__cluster_metadata-0');
    await writeMetadataLog(dir, [topicRecord('orders', 1), Buffer.from([1, 4, 0, 2])]);
    let message = '';
    try {
      readClusterMetadataConfigs(dir);
    } catch (err) {
      message = (err as LogtoolError).describe();
    }
    expect(message).toMatch(/^\S*00000000000000000000\.log.*byte \d+.*metadata record at offset 1 does not decode/);
  });
});
