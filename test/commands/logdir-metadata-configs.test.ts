/**
 * Topic configs of a broker's log directory decoded from its `__cluster_metadata-0` (issue 12), on
 * a hand-made KRaft broker directory: a topic's dynamic configs win over this broker's dynamic
 * configs (ConfigRecord BROKER, name = node.id), which win over the cluster-wide ones (name ""),
 * which win over Kafka's defaults for the keys none sets; explicit --config wins over all; a topic absent from the metadata is skipped with a
 * notice; `ls` shows the decoded cleanup policy; nothing is written by the dry run or the listing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { parseRun, treeStamps, type PartitionLine } from '../helpers/logdirs.js';
import { configRecord, topicRecord, writeMetadataLog } from '../helpers/metadata-records.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

type Line = PartitionLine & { retentionMs?: number; retentionBytes?: number };
const FAR_FUTURE = String(Date.parse('2100-01-01T00:00:00Z'));
const KAFKA_DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000;

async function brokerDir(): Promise<string> {
  const dir = path.join(makeTempDir('logtool-logdir-md-'), 'data');
  for (const name of ['orders-0', 'users-0', 'plain-0', 'absent-0']) {
    const log = Log.open(path.join(dir, name), { config: { flushMode: 'async', segmentBytes: 200 } });
    for (let i = 0; i < 10; i++) await log.append([{ key: Buffer.from(`k${i % 3}`), value: Buffer.from(`value ${i}`), timestamp: 1_700_000_000_000 + i }]);
    await log.close();
    // As a broker's partition: no logtool.properties, its config lives in the metadata.
    fs.rmSync(path.join(dir, name, 'logtool.properties'), { force: true });
  }
  await writeMetadataLog(path.join(dir, '__cluster_metadata-0'), [
    topicRecord('orders', 1),
    configRecord(2, 'orders', 'retention.ms', '1000'),
    configRecord(2, 'orders', 'compression.type', 'zstd'), // a config logtool does not use
    topicRecord('users', 2),
    configRecord(2, 'users', 'retention.ms', '5000'),
    configRecord(2, 'users', 'cleanup.policy', 'compact'),
    configRecord(2, 'users', 'retention.ms', null), // deleted: Kafka's default again
    topicRecord('plain', 3),
    configRecord(4, '', 'log.retention.bytes', '123456'), // the cluster-wide default
    configRecord(4, '1', 'log.retention.bytes', '7'), // another broker's: not this one's
    configRecord(4, '2', 'log.retention.bytes', '99999'), // this broker's (node.id=2): over the cluster default
  ]);
  fs.writeFileSync(path.join(dir, 'meta.properties'), 'version=1\nnode.id=2\ncluster.id=abc\n');
  return dir;
}

describe('configs from __cluster_metadata in a broker’s log directory', () => {
  it('retention --dry-run: topic configs over the cluster default over Kafka’s; absent topic skipped; explicit wins', async () => {
    const dir = await brokerDir();
    const before = treeStamps(dir);
    const r = await cli('retention', dir, '--dry-run', '--json', '--now', FAR_FUTURE);
    expect(r.code, r.stderr).toBe(0);
    const byTopic = new Map(parseRun<Line>(r.stdout).lines.map((l) => [l.topic, l]));
    expect(byTopic.get('orders')).toMatchObject({ outcome: 'ok', configSource: 'metadata', cleanupPolicy: 'delete', retentionMs: 1000, retentionBytes: 99999 });
    expect(byTopic.get('users')).toMatchObject({ outcome: 'ok', configSource: 'metadata', cleanupPolicy: 'compact', retentionMs: KAFKA_DEFAULT_RETENTION_MS, retentionBytes: 99999 });
    expect(byTopic.get('users')!.deleted).toEqual([]);
    expect(byTopic.get('plain')).toMatchObject({ outcome: 'ok', configSource: 'metadata', cleanupPolicy: 'delete', retentionMs: KAFKA_DEFAULT_RETENTION_MS, retentionBytes: 99999 });
    expect(byTopic.get('orders')!.deleted!.length).toBeGreaterThan(0);
    expect(byTopic.get('absent')).toMatchObject({ outcome: 'skipped' });
    expect(byTopic.get('absent')!.note).toMatch(/topic config unknown/);
    expect(treeStamps(dir)).toEqual(before);

    const explicit = await cli('retention', dir, '--topic', 'orders', '--config', 'retention.ms=60000', '--dry-run', '--json', '--now', FAR_FUTURE);
    expect(explicit.code, explicit.stderr).toBe(0);
    expect(parseRun<Line>(explicit.stdout).lines[0]).toMatchObject({ configSource: 'explicit', retentionMs: 60000, retentionBytes: 99999 });
  }, 120_000);

  it('ls shows the decoded cleanup policy, unknown only for the topic the metadata lacks', async () => {
    const dir = await brokerDir();
    const before = treeStamps(dir);
    const r = await cli('ls', dir, '--json');
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { topic?: string; cleanupPolicy?: string; summary?: true })
      .filter((row) => !row.summary);
    expect(Object.fromEntries(rows.map((row) => [row.topic, row.cleanupPolicy]))).toEqual({ absent: 'unknown', orders: 'delete', plain: 'delete', users: 'compact' });
    expect(treeStamps(dir)).toEqual(before);
  }, 120_000);

  it('a metadata record that does not decode is a data problem (exit 3) naming the file, never defaults; nothing changed', async () => {
    const dir = await brokerDir();
    const log = Log.open(path.join(dir, '__cluster_metadata-0'), { config: { flushMode: 'async' } });
    await log.append([{ key: null, value: Buffer.from([1, 4, 0, 2]), timestamp: 1_700_000_000_000 }]);
    await log.close();
    const before = treeStamps(dir);
    const r = await cli('retention', dir, '--dry-run', '--json', '--now', FAR_FUTURE);
    expect(r.code, r.stderr).toBe(3);
    const { lines } = parseRun<Line>(r.stdout);
    expect(lines).toHaveLength(4);
    for (const l of lines) {
      expect(l.outcome, l.dir).toBe('problem');
      expect(l.error, l.dir).toMatchObject({ kind: 'corrupt', file: path.join(dir, '__cluster_metadata-0', '00000000000000000000.log') });
      expect(l.error!.message).toMatch(/metadata record at offset 11 does not decode/);
    }
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(treeStamps(dir)).toEqual(before);
  }, 120_000);
});
