/**
 * `logtool transactions list|find-hanging|abort` through the built CLI:
 *  - on the kafkajs-built partition (test/helpers/txn-partition.ts): the open transaction of P3
 *    (14..15), P2's aborted one, the last stable offset 14, ages from --now, the timeout boundary;
 *  - read-only: works while a writer holds the partition and changes no file;
 *  - a log directory (meta.properties) lists its partitions with the checkpointed high watermark;
 *  - Kafka's fixtures: every partition's last stable offset is its log end, no hanging transaction;
 *  - abort: the ABORT marker's fields (coordinator epoch, leader epoch from leader-epoch-checkpoint),
 *    the .txnindex entry, read_committed moving past it to later committed data, refusals, and the
 *    cleaner removing the aborted records and (past the delete horizon) the marker.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { cli } from '../helpers/cli.js';
import { fixturePath, hasFixtures, makeTempDir, removeTempDirs, segmentCases } from '../helpers/fixtures.js';
import { appendSteps, jsonLines, cliTxnPartition, P2, P3, T0 } from '../helpers/txn-partition.js';

let dir: string;
beforeAll(async () => (dir = await cliTxnPartition()), 120_000);
afterAll(removeTempDirs);
const json = jsonLines;
const P3_LAST_TS = T0 + 14_001;

/** Every file under `d` with its size and mtime (to prove nothing was written). */
function snapshot(d: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of fs.readdirSync(d, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = path.join(e.parentPath, e.name);
    const st = fs.statSync(p);
    out[path.relative(d, p)] = `${st.size}:${st.mtimeMs}`;
  }
  return out;
}

function copyPartition(from = dir): string {
  const logDir = makeTempDir();
  fs.cpSync(path.dirname(from), logDir, { recursive: true });
  return path.join(logDir, path.basename(from));
}

describe('transactions list / find-hanging', () => {
  it('lists the open transaction with its age, the aborted one, and the last stable offset', async () => {
    const before = snapshot(path.dirname(dir));
    const r = await cli('transactions', 'list', dir, '--json', '--now', String(P3_LAST_TS + 1000));
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toEqual([
      {
        partition: dir,
        logStartOffset: 0,
        logEndOffset: 21,
        lastStableOffset: 14,
        openTransactions: [{ producerId: P3.producerId, producerEpoch: P3.producerEpoch, firstOffset: 14, lastOffset: 15, lastTimestamp: P3_LAST_TS, ageMs: 1000 }],
        abortedTransactions: [{ producerId: P2.producerId, firstOffset: 4, lastOffset: 11, lastStableOffset: 12 }],
      },
    ]);
    const text = await cli('transactions', 'list', dir, '--now', String(P3_LAST_TS + 1000));
    expect(text.stdout).toContain(`${dir}\t3000\t1\t14\t15\t`);
    expect(text.stdout).toContain('last stable offset 14, log end offset 21, 1 open, 1 aborted transaction(s)');
    expect(snapshot(path.dirname(dir))).toEqual(before);
  });

  it('find-hanging keeps transactions open longer than --max-transaction-timeout-ms (exit 3 when any)', async () => {
    const at = await cli('transactions', 'find-hanging', dir, '--json', '--now', String(P3_LAST_TS + 900_000));
    expect(at.code).toBe(0);
    expect(at.stdout).toBe('');
    const past = await cli('transactions', 'find-hanging', dir, '--json', '--now', String(P3_LAST_TS + 900_001));
    expect(past.code).toBe(3);
    expect(json(past.stdout).map((p) => p.openTransactions)).toEqual([[{ producerId: 3000, producerEpoch: 1, firstOffset: 14, lastOffset: 15, lastTimestamp: P3_LAST_TS, ageMs: 900_001 }]]);
    expect(past.stderr).toMatch(/1 hanging transaction/);
    const shorter = await cli('transactions', 'find-hanging', dir, '--max-transaction-timeout-ms', '999', '--now', String(P3_LAST_TS + 1000));
    expect(shorter.code).toBe(3);
    expect(shorter.stdout).toContain(`${dir}\t3000\t1\t14\t15\t`);
  });

  it('is read-only: works while a writer holds the partition', async () => {
    const copy = copyPartition();
    const writer = Log.open(copy);
    try {
      const r = await cli('transactions', 'list', copy, '--json', '--now', String(P3_LAST_TS));
      expect(r.code).toBe(0);
      expect(json(r.stdout)[0]!.lastStableOffset).toBe(14);
      const abort = await cli('transactions', 'abort', copy, '--producer-id', '3000');
      expect(abort.code).not.toBe(0);
      expect(abort.stderr).toMatch(/lock|held|writer/i);
    } finally {
      await writer.close();
    }
  });

  it('takes a log directory: every partition, with the checkpointed high watermark', async () => {
    const copy = copyPartition();
    const logDir = path.dirname(copy);
    fs.writeFileSync(path.join(logDir, 'meta.properties'), 'version=1\nnode.id=1\ncluster.id=abc\n');
    fs.writeFileSync(path.join(logDir, 'replication-offset-checkpoint'), '0\n1\ntxn 0 12\n');
    await appendSteps(path.join(logDir, 'plain-0'), [{ kind: 'data', values: ['x'] }]);
    const r = await cli('transactions', 'list', logDir, '--json', '--now', String(P3_LAST_TS));
    expect(r.code).toBe(0);
    expect(json(r.stdout).map((p) => [path.basename(p.partition as string), p.lastStableOffset, p.highWatermark, p.logEndOffset])).toEqual([
      ['plain-0', 1, undefined, 1],
      ['txn-0', 12, 12, 21],
    ]);
  });

  it.skipIf(!hasFixtures)("finds no hanging transaction in Kafka's fixtures: every last stable offset is the log end", async () => {
    const logDirs = segmentCases().map((c) => fixturePath(c.case)).filter((d, i, a) => a.indexOf(d) === i && fs.existsSync(d));
    expect(logDirs.length).toBeGreaterThan(5);
    let partitions = 0;
    for (const src of logDirs) {
      const copy = makeTempDir();
      fs.cpSync(src, copy, { recursive: true });
      const before = snapshot(copy);
      // No open transaction in any partition: `find-hanging` is this same listing filtered by age (its
      // filter is tested above), so a second process per directory would prove nothing more.
      const list = await cli('transactions', 'list', copy, '--json');
      expect(list.code, list.stderr).toBe(0);
      for (const p of json(list.stdout)) {
        partitions++;
        expect(p.openTransactions, `${p.partition}`).toEqual([]);
        expect(p.lastStableOffset, `${p.partition}`).toBe(Math.min(p.logEndOffset as number, (p.highWatermark as number | undefined) ?? Infinity));
      }
      expect(snapshot(copy)).toEqual(before);
    }
    expect(partitions).toBeGreaterThan(100);
  }, 600_000);
});

describe('transactions abort', () => {
  const committedOffsets = async (d: string) => json((await cli('read', d, '--json', '--isolation-level', 'read_committed')).stdout).map((r) => r.offset);
  const batches = async (d: string) => json((await cli('read', d, '--batches', '--json')).stdout);

  it("appends an ABORT marker as a coordinator would, indexes it, and read_committed moves past it", async () => {
    const copy = copyPartition();
    fs.writeFileSync(path.join(copy, 'leader-epoch-checkpoint'), '0\n2\n0 0\n6 15\n');
    const r = await cli('transactions', 'abort', copy, '--producer-id', '3000', '--json');
    expect(r.code).toBe(0);
    // P3 never saw a marker: coordinator epoch 0 (Kafka's tool: orElse(0)); leader epoch: the checkpoint's latest.
    expect(JSON.parse(r.stdout)).toEqual({
      partition: copy,
      producerId: 3000,
      producerEpoch: 1,
      coordinatorEpoch: 0,
      partitionLeaderEpoch: 6,
      firstOffset: 14,
      markerOffset: 21,
      txnIndexEntry: { producerId: 3000, firstOffset: 14, lastOffset: 21, lastStableOffset: 22 },
    });
    const marker = (await batches(copy)).find((b) => b.baseOffset === 21)!;
    expect(marker).toMatchObject({ controlType: 'ABORT', coordinatorEpoch: 0, producerId: 3000, producerEpoch: 1, partitionLeaderEpoch: 6, transactional: true, control: true, baseSequence: -1, count: 1, size: 78, crcValid: true });
    // The marker's timestamp (now) is more than segment.ms after the segment's first batch (2026-01-01):
    // it rolled a segment, as Kafka does, and its .txnindex holds the entry (34 bytes, read by hand).
    expect(fs.statSync(path.join(copy, '00000000000000000000.txnindex')).size).toBe(34);
    const idx = fs.readFileSync(path.join(copy, '00000000000000000021.txnindex'));
    expect(idx.length).toBe(34);
    expect([idx.readInt16BE(0), ...[0, 1, 2, 3].map((k) => Number(idx.readBigInt64BE(2 + k * 8)))]).toEqual([0, 3000, 14, 21, 22]);
    expect(await committedOffsets(copy)).toEqual([0, 1, 2, 3, 6, 7, 12, 13, 16, 17, 19, 20]);
    const list = json((await cli('transactions', 'list', copy, '--json')).stdout)[0]!;
    expect([list.lastStableOffset, list.logEndOffset, list.openTransactions]).toEqual([22, 22, []]);
    // Nothing open any more: a second abort, or an older epoch, is refused without a change.
    const before = snapshot(copy);
    for (const args of [['--producer-id', '3000'], ['--producer-id', '1000']]) {
      const again = await cli('transactions', 'abort', copy, ...args);
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/has no open transaction/);
    }
    expect(snapshot(copy)).toEqual(before);
  });

  it("uses the producer's last coordinator epoch and, without a checkpoint, its last batch's leader epoch; refuses an older producer epoch", async () => {
    const copy = copyPartition();
    await appendSteps(copy, [{ kind: 'data', values: ['t2-late'], ...P2, transactional: true }]);
    const old = await cli('transactions', 'abort', copy, '--producer-id', String(P2.producerId), '--producer-epoch', '2');
    expect(old.code).toBe(2);
    expect(old.stderr).toMatch(/older than the producer's current epoch 3/);
    const r = await cli('transactions', 'abort', copy, '--producer-id', String(P2.producerId), '--producer-epoch', '4', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ producerEpoch: 4, coordinatorEpoch: 9, partitionLeaderEpoch: 5, firstOffset: 21, markerOffset: 22 });
    // P3 is still open: the LSO recorded for P2's abort is P3's first offset.
    expect(JSON.parse(r.stdout).txnIndexEntry).toEqual({ producerId: 2000, firstOffset: 21, lastOffset: 22, lastStableOffset: 14 });
    expect(await committedOffsets(copy)).toEqual([0, 1, 2, 3, 6, 7, 12, 13]);
  });

  it('then the cleaner removes the aborted records, and the markers by Kafka delete-horizon rules', async () => {
    const copy = copyPartition();
    const now0 = Date.now() + 1000;
    expect((await cli('transactions', 'abort', copy, '--producer-id', '3000')).code).toBe(0);
    // Two more records, the last one in a new active segment: everything through offset 22 is cleanable.
    await appendSteps(copy, [{ kind: 'data', values: ['e0'] }]);
    const active = fs.readdirSync(copy).filter((f) => f.endsWith('.log')).sort().pop()!;
    const size = fs.statSync(path.join(copy, active)).size;
    const log = Log.open(copy, { config: { segmentBytes: size + 1 }, rememberConfig: false });
    await log.append([{ key: Buffer.from('k-e1'), value: Buffer.from('e1') }]);
    await log.close();
    const compact = async (now: number, ...extra: string[]) => {
      const r = await cli('compact', copy, '--json', '--now', String(now), ...extra);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as Record<string, number>;
    };
    const aborts = async () => (await batches(copy)).filter((b) => b.controlType === 'ABORT').map((b) => b.baseOffset);
    const c1 = await compact(now0);
    expect(c1.recordsRemoved).toBe(6); // P2's 4, 5, 9, 10 and P3's 14, 15
    expect(json((await cli('read', copy, '--json')).stdout).map((r) => r.offset)).toEqual([0, 1, 2, 3, 6, 7, 12, 13, 16, 17, 19, 20, 22, 23]);
    // A marker whose transaction still had data before this clean stays (and indexed) until a later one.
    expect(await aborts()).toEqual([11, 21]);
    expect(await committedOffsets(copy)).toEqual([0, 1, 2, 3, 6, 7, 12, 13, 16, 17, 19, 20, 22, 23]);
    // Later cleans: the markers of now-empty transactions get a delete horizon, then go once it passed.
    const day = 86_400_000;
    const c2 = await compact(now0 + 2 * day, '--from-start');
    const c3 = await compact(now0 + 4 * day, '--from-start');
    const c4 = await compact(now0 + 6 * day, '--from-start');
    expect(c2.deleteHorizonsSet + c3.deleteHorizonsSet).toBeGreaterThan(0);
    expect(c2.recordsRemoved + c3.recordsRemoved + c4.recordsRemoved).toBeGreaterThanOrEqual(2);
    expect(await aborts()).toEqual([]);
    expect(json((await cli('read', copy, '--json')).stdout).map((r) => r.offset)).toEqual([0, 1, 2, 3, 6, 7, 12, 13, 16, 17, 19, 20, 22, 23]);
    expect(await committedOffsets(copy)).toEqual([0, 1, 2, 3, 6, 7, 12, 13, 16, 17, 19, 20, 22, 23]);
  }, 300_000);
});
