/**
 * `logtool groups` through the built CLI: the committed offsets it lists for every fixture log
 * directory holding __consumer_offsets partitions equal the tables derived by hand from the bytes
 * (test/engine/format/internal-topics.expected.ts); a single partition directory, --group and the
 * text table; tombstones remove; transactional offset commits count only after their COMMIT
 * marker; a record that does not decode is exit 3; another topic's partition is exit 2; nothing
 * is written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { fileStamps, fixturePath, hasFixtures, makeTempDir, removeTempDirs, requireFixtures } from '../helpers/fixtures.js';
import { Log } from '../../src/engine/log/log.js';
import { encodeBatch } from '../../src/engine/format/record-batch.js';
import { EXPECTED_COMMITTED } from '../engine/format/internal-topics.expected.js';
import { h, commitKey, commitValue } from '../helpers/kafka-internal.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);
requireFixtures(import.meta.url);

const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');

interface GroupJson {
  group: string;
  partition: string;
  offsets: { topic: string; partition: number; offset: number }[];
}

describe('groups on the fixtures', () => {
  const cases = hasFixtures ? [...new Set(Object.keys(EXPECTED_COMMITTED).map((k) => k.split('/')[0]!))] : [];

  it.each(cases)('%s: committed offsets equal the expected tables', async (c) => {
    const r = await cli('groups', fixturePath('segments', c), '--json');
    expect(r.code).toBe(0);
    const got: Record<string, Record<string, Record<string, number>>> = {};
    for (const g of lines(r.stdout).map((l) => JSON.parse(l) as GroupJson)) {
      const byGroup = (got[`${c}/${g.partition}`] ??= {});
      byGroup[g.group] = Object.fromEntries(g.offsets.map((o) => [`${o.topic}-${o.partition}`, o.offset]));
    }
    const expected = Object.fromEntries(Object.entries(EXPECTED_COMMITTED).filter(([k, v]) => k.startsWith(`${c}/`) && Object.keys(v).length > 0));
    expect(got).toEqual(expected);
  });

  it('one partition directory, --group, the text table; nothing written', async () => {
    const dir = fixturePath('segments', 'zk-cleanshutdown-volodymyrzee-2020', '__consumer_offsets-12');
    const before = fileStamps(dir);
    const r = await cli('groups', dir, '--group', 'my-second-application');
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      'group\tstate\ttopic\tpartition\tcommitted offset\tcommit time\tmetadata',
      'my-second-application\tconsumer/0 members\tfirst_topic\t0\t11\t2020-04-22T18:54:01.133Z\t',
      'my-second-application\tconsumer/0 members\tfirst_topic\t1\t12\t2020-04-22T18:54:01.133Z\t',
      'my-second-application\tconsumer/0 members\tfirst_topic\t2\t18\t2020-04-22T18:54:01.133Z\t',
    ]);
    expect(fileStamps(dir)).toEqual(before);
    expect((await cli('groups', dir, '--group', 'nobody')).stdout).toBe('');
  });

  it("another topic's partition is a usage error (exit 2)", async () => {
    const r = await cli('groups', fixturePath('segments', 'zk-cleanshutdown-volodymyrzee-2020', 'first_topic-0'));
    expect(r.code).toBe(2);
  });
});

describe('groups on written partitions', () => {
  it('tombstones remove; transactional commits count after COMMIT, never after ABORT or while open', async () => {
    const dir = path.join(makeTempDir(), '__consumer_offsets-0');
    const log = Log.open(dir);
    await log.append([
      { key: commitKey('g', 'a', 0), value: commitValue(10), timestamp: 1 },
      { key: commitKey('g', 'a', 1), value: commitValue(11), timestamp: 1 },
      { key: commitKey('g', 'a', 1), value: null, timestamp: 2 },
    ]);
    const txn = (producerId: number, records: { key: Buffer; value: Buffer | null }[], control = false) =>
      log.appendEncoded(encodeBatch(records.map((r) => ({ ...r, timestamp: 3 })), { baseOffset: 0, producerId, producerEpoch: 0, baseSequence: control ? -1 : 0, transactional: true, control }), { control });
    const marker = (type: number) => ({ key: h(`0000 ${type.toString(16).padStart(4, '0')}`), value: h('0000 00000000') });
    await txn(7, [{ key: commitKey('g', 'b', 0), value: commitValue(70) }]);
    await txn(8, [{ key: commitKey('g', 'c', 0), value: commitValue(80) }]);
    await txn(9, [{ key: commitKey('g', 'd', 0), value: commitValue(90) }]);
    await txn(7, [marker(1)], true); // COMMIT
    await txn(8, [marker(0)], true); // ABORT; producer 9 stays open
    await log.close();
    const r = await cli('groups', dir, '--json');
    expect(r.code).toBe(0);
    const groups = lines(r.stdout).map((l) => JSON.parse(l) as GroupJson);
    expect(groups.map((g) => [g.group, g.offsets.map((o) => `${o.topic}-${o.partition}=${o.offset}`)])).toEqual([['g', ['a-0=10', 'b-0=70']]]);
  });

  it('a partition that cannot be opened is named on stderr, the others still listed, exit 3 (as ls)', async () => {
    const logDir = makeTempDir();
    fs.writeFileSync(path.join(logDir, 'meta.properties'), 'version=1\n');
    fs.mkdirSync(path.join(logDir, '__consumer_offsets-5', '00000000000000000000.log'), { recursive: true });
    const log = Log.open(path.join(logDir, '__consumer_offsets-6'));
    await log.append([{ key: commitKey('g', 'a', 0), value: commitValue(42), timestamp: 1 }]);
    await log.close();
    const r = await cli('groups', logDir, '--json');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(path.join(logDir, '__consumer_offsets-5'));
    expect(lines(r.stdout).map((l) => (JSON.parse(l) as GroupJson).offsets.map((o) => o.offset))).toEqual([[42]]);
  });

  it('a batch whose records cannot be decoded is named with its file and byte, later batches still folded, exit 3', async () => {
    const dir = path.join(makeTempDir(), '__consumer_offsets-2');
    const log = Log.open(dir);
    await log.append([{ key: commitKey('g', 'a', 0), value: commitValue(1), timestamp: 1 }]);
    await log.append([{ key: commitKey('g', 'b', 0), value: commitValue(2), timestamp: 1 }]);
    await log.close();
    const file = path.join(dir, '00000000000000000000.log');
    const bytes = fs.readFileSync(file);
    bytes.fill(0xff, 61, 66); // the first batch's first record length: a varint longer than 5 bytes
    fs.writeFileSync(file, bytes);
    const r = await cli('groups', dir, '--json');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`${file} at byte 0`);
    expect(r.stderr).not.toMatch(/^error:/m);
    expect(lines(r.stdout).map((l) => (JSON.parse(l) as GroupJson).offsets.map((o) => `${o.topic}=${o.offset}`))).toEqual([['b=2']]);
  });

  it('a record that is not an offsets record is reported and exit 3, the rest still listed', async () => {
    const dir = path.join(makeTempDir(), '__consumer_offsets-1');
    const log = Log.open(dir);
    await log.append([
      { key: h('0001 ffff'), value: null, timestamp: 1 },
      { key: commitKey('g', 'a', 0), value: commitValue(5), timestamp: 1 },
    ]);
    await log.close();
    const r = await cli('groups', dir, '--json');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/record at offset 0 is not a __consumer_offsets record: Could not read record with version 1 from key's buffer due to: non-nullable field group was serialized as null/);
    expect(lines(r.stdout).map((l) => (JSON.parse(l) as GroupJson).offsets[0]!.offset)).toEqual([5]);
    expect(fs.existsSync(path.join(dir, '00000000000000000000.log'))).toBe(true);
  });
});
