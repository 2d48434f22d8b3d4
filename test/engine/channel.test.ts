/**
 * Channel: put transactions append one batch on commit (rollback discards), take transactions
 * hand out records after the group's committed position (rollback re-delivers), capacity waits
 * and failures (records and bytes), transaction capacities, Flume counters, concurrent put
 * commits appending in commit order, persistence across reopen, and take after a crash: the
 * positions file survives and uncommitted takes are delivered again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Channel, Log, LogtoolError, type ChannelOptions } from '../../src/api.js';
import { tempPartitionPath, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

const rec = (v: string) => ({ key: null, value: Buffer.from(v) });
const val = (r: { value: Buffer | null } | undefined) => r?.value?.toString();

function open(dir = tempPartitionPath('queue-0')): Log {
  return Log.open(dir, { config: { flushMode: 'async' } });
}

function channel(log: Log, opts: Partial<ChannelOptions> = {}): Channel {
  return new Channel(log, { group: 'g', keepAliveMs: 50, ...opts });
}

async function put(ch: Channel, ...values: string[]) {
  const tx = ch.putTransaction();
  for (const v of values) tx.put(rec(v));
  return tx.commit();
}

function takeAll(ch: Channel, commit = true): string[] {
  const tx = ch.takeTransaction();
  const out: string[] = [];
  while (tx.takenRecords < ch.transactionCapacity) {
    const r = tx.take();
    if (!r) break;
    out.push(val(r)!);
  }
  if (commit) tx.commit();
  else tx.rollback();
  return out;
}

async function rejects(p: Promise<unknown>, kind: string, re: RegExp): Promise<void> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(LogtoolError);
  expect((e as LogtoolError).kind).toBe(kind);
  expect((e as LogtoolError).message).toMatch(re);
}

describe('Channel', () => {
  it('commits a put transaction as one batch; rollback discards', async () => {
    const log = open();
    const ch = channel(log);
    const res = await put(ch, 'a', 'b', 'c');
    expect(res).toMatchObject({ baseOffset: 0, lastOffset: 2, count: 3 });
    expect([...log.reader().batches()].length).toBe(1);
    const tx = ch.putTransaction();
    tx.put(rec('x'));
    tx.rollback();
    expect(() => tx.put(rec('y'))).toThrow(/rolled-back/);
    expect(log.nextOffset).toBe(3);
    expect(takeAll(ch)).toEqual(['a', 'b', 'c']);
    await log.close();
  });

  it('take rollback leaves the position: the same records are taken again', async () => {
    const log = open();
    const ch = channel(log);
    await put(ch, 'a', 'b', 'c', 'd');
    let tx = ch.takeTransaction();
    expect(val(tx.take())).toBe('a');
    expect(val(tx.take())).toBe('b');
    tx.rollback();
    expect(ch.positions.get('g')).toBeUndefined();
    tx = ch.takeTransaction();
    expect(() => ch.takeTransaction()).toThrow(/already open/);
    expect(val(tx.take())).toBe('a');
    tx.commit();
    expect(ch.positions.get('g')).toBe(1);
    expect(takeAll(ch)).toEqual(['b', 'c', 'd']);
    expect(ch.positions.get('g')).toBe(4);
    expect(takeAll(ch)).toEqual([]);
    await log.close();
  });

  it('a full channel fails a put commit after keepAliveMs; the transaction can be rolled back', async () => {
    const log = open();
    const ch = channel(log, { capacity: 5, transactionCapacity: 5, keepAliveMs: 40 });
    await put(ch, '1', '2', '3', '4', '5');
    const tx = ch.putTransaction();
    tx.put(rec('6'));
    const t0 = Date.now();
    await rejects(tx.commit(), 'too-large', /channel is full: 5 of 5 records/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(35);
    expect(log.nextOffset).toBe(5);
    tx.rollback();
    expect(ch.counters()).toMatchObject({ putAttempts: 6, putSuccesses: 5, rollbacks: 1, sizeRecords: 5, capacityRecords: 5 });
    await log.close();
  });

  it('a put commit waits for takes to free room', async () => {
    const log = open();
    const ch = channel(log, { capacity: 3, transactionCapacity: 3, keepAliveMs: 2000 });
    await put(ch, 'a', 'b', 'c');
    const waiting = put(ch, 'd', 'e');
    let done = false;
    void waiting.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    const tx = ch.takeTransaction();
    tx.take();
    tx.commit(); // one free: not enough for two
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    const tx2 = ch.takeTransaction();
    tx2.take();
    tx2.commit();
    expect((await waiting).baseOffset).toBe(3);
    expect(takeAll(ch)).toEqual(['c', 'd', 'e']);
    await log.close();
  });

  it('capacityBytes bounds the log bytes between the take position and the end', async () => {
    const log = open();
    const probe = channel(log, { group: 'probe' });
    await put(probe, 'x'.repeat(100));
    const batchBytes = log.positions().bytes.committed;
    const ch = channel(log, { group: 'bytes', capacityBytes: batchBytes * 2 + 10, keepAliveMs: 20 });
    expect(ch.counters().sizeBytes).toBe(batchBytes);
    await put(ch, 'y'.repeat(100));
    expect(ch.sizeBytes()).toBe(2 * batchBytes);
    await rejects(put(ch, 'z'.repeat(100)), 'too-large', /bytes are in the channel/);
    const tx = ch.takeTransaction();
    tx.take();
    tx.commit();
    expect(ch.sizeBytes()).toBe(batchBytes);
    await put(ch, 'z'.repeat(100));
    await rejects(put(channel(log, { group: 'tiny', capacityBytes: 50 }), 'w'.repeat(100)), 'too-large', /can never fit/);
    await log.close();
  });

  it('enforces transactionCapacity and transactionCapacityBytes', async () => {
    const log = open();
    const ch = channel(log, { transactionCapacity: 2, transactionCapacityBytes: 10 });
    const tx = ch.putTransaction();
    tx.put(rec('12345'));
    expect(() => tx.put(rec('123456'))).toThrow(/transactionCapacityBytes \(10\)/);
    tx.put(rec('1'));
    expect(() => tx.put(rec('1'))).toThrow(/transactionCapacity \(2\)/);
    await tx.commit();
    await put(ch, 'a');
    const take = ch.takeTransaction();
    take.take();
    take.take();
    expect(() => take.take()).toThrow(/take transaction is full/);
    take.commit();
    expect(takeAll(ch)).toEqual(['a']);
    expect(() => new Channel(log, { group: 'g', capacity: 1, transactionCapacity: 2 })).toThrow(/must not exceed capacity/);
    await log.close();
  });

  it('takeWait waits up to keepAliveMs for a put', async () => {
    const log = open();
    const ch = channel(log, { keepAliveMs: 1000 });
    const tx = ch.takeTransaction();
    const t0 = Date.now();
    expect(await tx.takeWait(30)).toBeUndefined();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
    setTimeout(() => void put(ch, 'late'), 20);
    expect(val(await tx.takeWait())).toBe('late');
    tx.commit();
    expect(ch.committedTakePosition).toBe(1);
    await log.close();
  });

  it('counts like Flume', async () => {
    const log = open();
    const ch = channel(log);
    await put(ch, 'a', 'b');
    await put(ch, 'c');
    const p = ch.putTransaction();
    p.put(rec('d'));
    p.rollback();
    takeAll(ch, false); // 3 takes + 1 empty take, rolled back
    const t = ch.takeTransaction();
    t.take();
    t.commit();
    expect(ch.counters()).toEqual({
      putAttempts: 4,
      putSuccesses: 3,
      takeAttempts: 5,
      takeSuccesses: 1,
      rollbacks: 2,
      sizeRecords: 2,
      sizeBytes: ch.sizeBytes(),
      capacityRecords: 10_000,
      capacityBytes: 64 * 1024 * 1024,
    });
    await log.close();
  });

  it('concurrent put commits append in commit order, also while waiting for room', async () => {
    const log = open();
    const ch = channel(log, { capacity: 6, transactionCapacity: 3, keepAliveMs: 5000 });
    const expected: string[] = [];
    const commits: Promise<unknown>[] = [];
    for (let t = 0; t < 12; t++) {
      const tx = ch.putTransaction();
      const n = 1 + (t % 3);
      for (let i = 0; i < n; i++) {
        tx.put(rec(`${t}.${i}`));
        expected.push(`${t}.${i}`);
      }
      commits.push(tx.commit());
    }
    const got: string[] = [];
    while (got.length < expected.length) {
      got.push(...takeAll(ch));
      await new Promise((r) => setTimeout(r, 2));
    }
    await Promise.all(commits);
    expect(got).toEqual(expected);
    expect(ch.counters().putSuccesses).toBe(expected.length);
    await log.close();
  });

  it('keeps positions across reopen; after a crash uncommitted takes are delivered again', async () => {
    const dir = tempPartitionPath('queue-3');
    let log = open(dir);
    let ch = channel(log);
    await put(ch, 'a', 'b', 'c', 'd', 'e');
    let tx = ch.takeTransaction();
    tx.take();
    tx.take();
    tx.commit();
    await log.close();

    log = open(dir);
    ch = channel(log);
    expect(ch.committedTakePosition).toBe(2);
    expect(ch.sizeRecords()).toBe(3);
    tx = ch.takeTransaction();
    expect(val(tx.take())).toBe('c');
    tx.commit();
    tx = ch.takeTransaction();
    expect(val(tx.take())).toBe('d');
    expect(val(tx.take())).toBe('e');
    log.abandon(); // crash with 'd' and 'e' taken but not committed

    log = open(dir);
    ch = channel(log);
    expect(ch.committedTakePosition).toBe(3);
    expect(takeAll(ch)).toEqual(['d', 'e']);
    await log.close();
  });

  it('restarts at the log start when retention deleted the records at the position', async () => {
    const dir = tempPartitionPath('queue-4');
    const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 200 } });
    const ch = channel(log);
    for (let i = 0; i < 6; i++) await put(ch, `r${i}`.padEnd(60, '.'));
    log.deleteRecordsBefore(4, { deleteDelayMs: 0 });
    expect(ch.sizeRecords()).toBe(2);
    expect(takeAll(ch).map((v) => v.slice(0, 2))).toEqual(['r4', 'r5']);
    expect(ch.positions.get('g')).toBe(6);
    await log.close();
  });
});
