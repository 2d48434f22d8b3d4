/**
 * Channel put commits larger than one batch (issue 13; src/engine/queue/put-batches.ts): written as
 * a logtool transaction — transactional batches, then a COMMIT marker — and taken whole; a commit
 * that fits one batch stays one plain batch without a marker; a transaction a crash left open is
 * invisible to takes and ended (ABORT) by Channel.open. Real files, in process; the SIGKILL test is
 * channel-kill.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Channel, Log } from '../../src/api.js';
import { LogTransaction } from '../../src/engine/partition-state/log-transaction.js';
import { scanProducerState } from '../../src/engine/partition-state/isolation.js';
import { isControl, isTransactional } from '../../src/engine/format/batch-header.js';
import { tempPartitionPath, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

const config = { flushMode: 'sync' as const, maxMessageBytes: 2048 };
const record = (i: number) => ({ key: null, value: Buffer.from(`${i}:${'y'.repeat(300)}`) });
const options = { group: 'g', capacity: 10_000, transactionCapacity: 1000 };

function batchesOf(log: Log) {
  return [...log.reader().batches()].map(({ entry: e }) => ({ base: e.baseOffset, last: e.lastOffset, transactional: isTransactional(e.header!), control: isControl(e.header!) }));
}

function takeAll(ch: Channel): number[] {
  const t = ch.takeTransaction();
  const out: number[] = [];
  for (let r = t.take(); r; r = t.take()) out.push(Number(r.value!.toString().split(':')[0]));
  t.commit();
  return out;
}

describe('channel put commits of several batches', () => {
  it('a commit above max.message.bytes is transactional batches and a COMMIT marker; takes see it whole', async () => {
    const log = Log.open(tempPartitionPath('q-0'), { config });
    try {
      const ch = await Channel.open(log, options);
      const small = ch.putTransaction();
      for (let i = 0; i < 3; i++) small.put(record(i));
      expect(await small.commit()).toMatchObject({ baseOffset: 0, lastOffset: 2, count: 3 });
      const big = ch.putTransaction();
      for (let i = 3; i < 40; i++) big.put(record(i));
      const r = await big.commit();
      expect(r).toEqual({ baseOffset: 3, lastOffset: 39, count: 37, status: 'flushed' });
      const batches = batchesOf(log);
      expect(batches[0]).toEqual({ base: 0, last: 2, transactional: false, control: false }); // one plain batch, no marker
      const data = batches.slice(1, -1);
      expect(data.length).toBeGreaterThan(5); // 37 records of ~310 bytes in batches of at most 2048 bytes
      expect(data.every((b) => b.transactional && !b.control)).toBe(true);
      expect(batches[batches.length - 1]).toEqual({ base: 40, last: 40, transactional: true, control: true });
      expect(log.nextOffset).toBe(41);
      expect(takeAll(ch)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      expect(ch.committedTakePosition).toBe(40); // the marker is not taken: the next take skips it
    } finally {
      await log.close();
    }
  });

  it('a transaction left open is invisible to takes, and Channel.open ends it', async () => {
    const dir = tempPartitionPath('q-0');
    let log = Log.open(dir, { config });
    const ch = await Channel.open(log, options);
    const p = ch.putTransaction();
    p.put(record(0));
    await p.commit();
    // What a crash in the middle of a put commit leaves: transactional batches, no marker.
    const tx = await LogTransaction.begin(log);
    await tx.append([record(1), record(2)]);
    await tx.append([record(3)]);
    await log.flush();
    // A channel made now (without Channel.open, which would end it) takes around it.
    expect(takeAll(new Channel(log, { ...options, group: 'other' }))).toEqual([0]);
    await log.close();
    log = Log.open(dir, { config });
    try {
      expect(scanProducerState(log.segments).openTransactions()).toHaveLength(1);
      const again = await Channel.open(log, options);
      expect(scanProducerState(log.segments).openTransactions()).toEqual([]);
      const after = again.putTransaction();
      after.put(record(4));
      await after.commit();
      expect(takeAll(again)).toEqual([0, 4]); // the aborted records are never taken
    } finally {
      await log.close();
    }
  });
});
