/**
 * The flush pipeline (docs/durability.md) with real files and real fsyncs: group commit really
 * groups, a stalled fdatasync gives the timed-out result and the log keeps working, ackBeforeSync,
 * the async flusher's thresholds and interval, the buffered committer by interval and by bytes,
 * written ≥ committed ≥ flushed, the order of fsyncs, the thorough flush, close, and a failing
 * fdatasync. Nothing here asserts a duration: waits are "until it happens" with a generous cap.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, realIO, type FileIO, type LogConfig, type LogOptions } from '../../src/api.js';
import type { LogPositions } from '../../src/engine/log/log.js';
import { LogtoolError } from '../../src/engine/errors.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

const value = (i: number, bytes = 100): Buffer => Buffer.from(`${i}:`.padEnd(bytes, String.fromCharCode(97 + (i % 26))));

function open(config: Partial<LogConfig>, extra: LogOptions = {}): Log {
  return Log.open(path.join(makeTempDir('logtool-flush-'), 't-0'), { config, rememberConfig: false, ...extra });
}

/** Polls until cond() holds (checked every 5 ms, gives up after capMs). Never a timing assertion. */
async function until(cond: () => boolean, what: string, capMs = 20_000): Promise<void> {
  const stop = Date.now() + capMs;
  while (!cond()) {
    if (Date.now() > stop) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function expectOrdered(p: LogPositions): void {
  expect(p.written.offset).toBeGreaterThanOrEqual(p.committed.offset);
  expect(p.committed.offset).toBeGreaterThanOrEqual(p.flushed.offset);
  expect(p.bytes.written).toBeGreaterThanOrEqual(p.bytes.committed);
  expect(p.bytes.committed).toBeGreaterThanOrEqual(p.bytes.flushed);
  expect(p.flushed.offset).toBeGreaterThanOrEqual(p.recoveryPoint);
  expect(p.recoveryPoint).toBeGreaterThanOrEqual(p.checkpointedRecoveryPoint);
}

/** A FileIO over the real one that records fsyncs by path and can stall or fail datasyncAsync. */
class InstrumentedIO {
  readonly paths = new Map<number, string>();
  readonly syncs: string[] = [];
  datasyncAsyncCalls = 0;
  private stall: Promise<void> | undefined;
  private releaseStall: (() => void) | undefined;
  failWith: Error | undefined;
  /** When set, write(2) of the .log fails with it. */
  failWritesWith: Error | undefined;
  readonly io: FileIO;

  constructor() {
    const self = this;
    this.io = {
      ...realIO,
      open(p, flags) {
        const fd = realIO.open(p, flags);
        self.paths.set(fd, p);
        return fd;
      },
      close(fd) {
        self.paths.delete(fd);
        realIO.close(fd);
      },
      write(fd, buf, offset, length, position) {
        if (self.failWritesWith && self.paths.get(fd)?.endsWith('.log')) throw self.failWritesWith;
        return realIO.write(fd, buf, offset, length, position);
      },
      datasync(fd) {
        self.syncs.push(path.basename(self.paths.get(fd) ?? `fd${fd}`));
        realIO.datasync(fd);
      },
      async datasyncAsync(fd) {
        self.datasyncAsyncCalls++;
        const name = path.basename(self.paths.get(fd) ?? `fd${fd}`);
        if (self.stall) await self.stall;
        if (self.failWith) throw self.failWith;
        await realIO.datasyncAsync(fd);
        self.syncs.push(name);
      },
      syncDir(p) {
        self.syncs.push(`dir:${path.basename(p)}`);
        realIO.syncDir(p);
      },
      async syncDirAsync(p) {
        await realIO.syncDirAsync(p);
        self.syncs.push(`dir:${path.basename(p)}`);
      },
    };
  }

  /** Every datasyncAsync from now on waits until release(). */
  stallFsync(): void {
    this.stall = new Promise((r) => (this.releaseStall = r));
  }

  release(): void {
    this.releaseStall?.();
    this.stall = undefined;
  }
}

describe('sync mode: group commit', () => {
  it('N concurrent sync appends are all flushed with far fewer than N fsyncs', async () => {
    const rec = new InstrumentedIO();
    const log = open({ flushMode: 'sync' }, { io: rec.io });
    const N = 400;
    const results = await Promise.all(Array.from({ length: N }, (_, i) => log.append([{ value: value(i) }])));
    expect(results.every((r) => r.status === 'flushed')).toBe(true);
    expect(results.map((r) => r.baseOffset)).toEqual(Array.from({ length: N }, (_, i) => i));
    const s = log.flushStats;
    expect(s.groupedAppends).toBe(N);
    // The engine's own counter, and the file-I/O layer's count of data fsyncs, are far below N.
    expect(s.fsyncs).toBeLessThan(N / 10);
    expect(rec.datasyncAsyncCalls).toBeLessThan(N / 10);
    expect(s.largestGroup).toBeGreaterThan(1);
    const p = log.positions();
    expect(p.flushed.offset).toBe(N);
    expectOrdered(p);
    await log.close();
  });

  it('producers that re-append on acknowledgement share fsyncs too', async () => {
    const log = open({ flushMode: 'sync' });
    const producers = 32;
    const perProducer = 20;
    let next = 0;
    await Promise.all(
      Array.from({ length: producers }, async () => {
        for (let k = 0; k < perProducer; k++) {
          const r = await log.append([{ value: value(next++) }]);
          expect(r.status).toBe('flushed');
          expect(log.positions().flushed.offset).toBeGreaterThan(r.lastOffset);
        }
      }),
    );
    const total = producers * perProducer;
    expect(log.flushStats.groupedAppends).toBe(total);
    expect(log.flushStats.fsyncs).toBeLessThan(total / 4);
    await log.close();
  });

  it('a group also closes by maxWaitMs, maxGroupRecords and maxGroupBytes when flushWhenQueueEmpty is off', async () => {
    for (const knobs of [{ maxWaitMs: 1 }, { maxWaitMs: 60_000, maxGroupRecords: 10 }, { maxWaitMs: 60_000, maxGroupBytes: 1000 }]) {
      const log = open({ flushMode: 'sync', flushWhenQueueEmpty: false, ...knobs });
      const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => log.append([{ value: value(i) }])));
      expect(rs.every((r) => r.status === 'flushed')).toBe(true);
      expect(log.flushStats.fsyncs).toBeLessThan(50);
      await log.close();
    }
  });

  it('a sync append is visible to readers once committed, and written ≥ committed ≥ flushed holds throughout', async () => {
    const log = open({ flushMode: 'sync' });
    const pending = log.append([{ value: value(0) }, { value: value(1) }]);
    // Accepted, not yet committed: the group commits at the end of this tick.
    let p = log.positions();
    expect(p.written.offset).toBe(2);
    expect(p.committed.offset).toBe(0);
    expectOrdered(p);
    expect([...log.read()]).toHaveLength(0);
    const r = await pending;
    expect(r.status).toBe('flushed');
    p = log.positions();
    expect(p.flushed.offset).toBe(2);
    expectOrdered(p);
    expect([...log.read()].map((x) => x.offset)).toEqual([0, 1]);
    await log.close();
  });
});

describe('sync mode: a stalled fsync', () => {
  it('resolves timed-out after syncTimeoutMs, and later appends still work', async () => {
    const rec = new InstrumentedIO();
    // The stall is explicit, so the time limit only has to exceed a real fdatasync on a busy
    // machine (50 ms did not always): the two timed-out appends cost twice this.
    const log = open({ flushMode: 'sync', syncTimeoutMs: 1500 }, { io: rec.io });
    expect((await log.append([{ value: value(0) }])).status).toBe('flushed');
    rec.stallFsync();
    const stalled = await log.append([{ value: value(1) }]);
    expect(stalled.status).toBe('timed-out');
    expect(stalled.baseOffset).toBe(1);
    expect(log.flushStats.timedOut).toBe(1);
    // Accepted while the disk is stuck: the append is taken, and waits (then times out too).
    const during = log.append([{ value: value(2) }]);
    expect((await during).status).toBe('timed-out');
    rec.release();
    // The disk is back: later appends are flushed, and carry the timed-out ones with them.
    const later = await log.append([{ value: value(3) }]);
    expect(later.status).toBe('flushed');
    expect(later.baseOffset).toBe(3);
    const p = log.positions();
    expect(p.flushed.offset).toBe(4);
    expectOrdered(p);
    await log.close();
    const again = Log.open(log.dir);
    expect([...again.read()].map((r) => r.value!.toString())).toEqual([0, 1, 2, 3].map((i) => value(i).toString()));
    await again.close();
  });

  it("writes the next group to the file while the previous group's fdatasync is in flight, and acknowledges it only after its own", async () => {
    const rec = new InstrumentedIO();
    // The buffered committer's interval is out of the way: only the group commit writes here; no
    // zeros ahead of the data (preallocation), so the file's size is what was written.
    const log = open({ flushMode: 'sync', syncTimeoutMs: 60_000, commitIntervalMs: 600_000, preallocateBytes: 0 }, { io: rec.io });
    const logFile = path.join(log.dir, '00000000000000000000.log');
    rec.stallFsync();
    const first = log.append([{ value: value(0) }]);
    await until(() => rec.datasyncAsyncCalls === 1, "the first group's fdatasync");
    const sizeWithFirst = fs.statSync(logFile).size;
    let acked = 0;
    const next = [1, 2, 3].map((i) => log.append([{ value: value(i) }]).then((r) => (acked++, r)));
    // BookKeeper's journal: the group formed during the fdatasync reaches the file (one write at
    // the end of the tick) before that fdatasync returns, so the next flush has only to sync it.
    await until(() => log.positions().bytes.committed > sizeWithFirst, 'the next group written during the stalled fdatasync', 5000);
    expect(fs.statSync(logFile).size).toBe(log.positions().bytes.committed);
    expect(log.positions().committed.offset).toBe(4);
    expect(log.positions().flushed.offset).toBe(0);
    expect(acked).toBe(0);
    expect(log.flushStats.commits).toBe(2); // one write per group
    rec.release();
    expect((await first).status).toBe('flushed');
    const rs = await Promise.all(next);
    expect(rs.map((r) => r.status)).toEqual(['flushed', 'flushed', 'flushed']);
    expect(log.positions().flushed.offset).toBe(4);
    expect(rec.datasyncAsyncCalls).toBe(2);
    expectOrdered(log.positions());
    await log.close();
  });

  it("a write failing during the previous group's fdatasync rejects the appends it held; that fdatasync's appends still resolve", async () => {
    const rec = new InstrumentedIO();
    const log = open({ flushMode: 'sync', syncTimeoutMs: 60_000, commitIntervalMs: 600_000 }, { io: rec.io });
    rec.stallFsync();
    const first = log.append([{ value: value(0) }]);
    await until(() => rec.datasyncAsyncCalls === 1, "the first group's fdatasync");
    rec.failWritesWith = Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    const next = [1, 2].map((i) => log.append([{ value: value(i) }]));
    await Promise.all(next.map((p) => expect(p).rejects.toThrow(/EIO/)));
    expect(() => log.append([{ value: value(3) }])).toThrow(/EIO/); // the log is failed
    rec.failWritesWith = undefined;
    rec.release();
    expect((await first).status).toBe('flushed');
    await log.close();
    const again = Log.open(log.dir);
    expect([...again.read()].map((r) => r.value!.toString())).toEqual([value(0).toString()]);
    await again.close();
  });

  it('a failing fdatasync rejects the waiting appends and fails the log (reopen recovers)', async () => {
    const rec = new InstrumentedIO();
    const log = open({ flushMode: 'sync' }, { io: rec.io });
    expect((await log.append([{ value: value(0) }])).status).toBe('flushed');
    rec.failWith = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    await expect(log.append([{ value: value(1) }])).rejects.toThrow(/EIO/);
    expect(() => log.append([{ value: value(2) }])).toThrow(/EIO/);
    await log.close(); // releases the lock without pretending a clean shutdown
    expect(fs.existsSync(path.join(path.dirname(log.dir), '.kafka_cleanshutdown'))).toBe(false);
    const again = Log.open(log.dir);
    expect(again.loadReport.cleanShutdown).toBe(false);
    expect([...again.read()][0]!.value!.toString()).toBe(value(0).toString());
    await again.close();
  });
});

describe('sync mode: ackBeforeSync', () => {
  it('acknowledges after commit; the data rides the next fsync', async () => {
    const log = open({ flushMode: 'sync' });
    const r = await log.append([{ value: value(0) }], { ackBeforeSync: true });
    expect(r.status).toBe('committed');
    const p = log.positions();
    expect(p.committed.offset).toBe(1);
    expectOrdered(p);
    expect([...log.read()]).toHaveLength(1);
    await until(() => log.positions().flushed.offset === 1, 'the flush after ackBeforeSync');
    expect(log.flushStats.fsyncs).toBeGreaterThanOrEqual(1);
    // A later sync append in the same log is flushed as usual.
    expect((await log.append([{ value: value(1) }])).status).toBe('flushed');
    await log.close();
  });
});

describe('async mode', () => {
  it('acknowledges committed; flush.bytes triggers a flush', async () => {
    const log = open({ flushMode: 'async', flushMs: 3_600_000, flushBytes: 2000 });
    const first = await log.append([{ value: value(0) }]);
    expect(first.status).toBe('committed');
    expect(log.positions().flushed.offset).toBe(0);
    for (let i = 1; i < 30; i++) expect((await log.append([{ value: value(i) }])).status).toBe('committed');
    await until(() => log.flushStats.flushes > 0 && log.positions().flushed.offset > 0, 'a flush at flush.bytes');
    expectOrdered(log.positions());
    await log.close();
  });

  it('flush.messages triggers a flush', async () => {
    const log = open({ flushMode: 'async', flushMs: 3_600_000, flushMessages: 10 });
    for (let i = 0; i < 3; i++) await log.append([{ value: value(i) }]);
    await new Promise((r) => setTimeout(r, 20));
    expect(log.flushStats.flushes).toBe(0); // 3 < 10 records: nothing asked for a flush
    await log.append(Array.from({ length: 8 }, (_, i) => ({ value: value(3 + i) })));
    await until(() => log.positions().flushed.offset === 11, 'a flush at flush.messages');
    await log.close();
  });

  it('the background flusher flushes every flush.ms', async () => {
    const log = open({ flushMode: 'async', flushMs: 10 });
    await log.append([{ value: value(0) }]);
    await until(() => log.positions().flushed.offset === 1, 'the interval flush');
    await log.append([{ value: value(1) }]);
    await until(() => log.positions().flushed.offset === 2, 'the next interval flush');
    expect(log.flushStats.flushes).toBeGreaterThanOrEqual(2);
    await log.close();
  });

  it('the thorough flush persists the recovery point (never ahead of flushed) on its interval', async () => {
    const log = open({ flushMode: 'async', flushMs: 5 }, { thoroughFlushIntervalMs: 20 });
    const cp = path.join(path.dirname(log.dir), 'recovery-point-offset-checkpoint');
    for (let i = 0; i < 5; i++) await log.append([{ value: value(i) }]);
    await until(() => log.positions().checkpointedRecoveryPoint === 5, 'a thorough flush');
    expect(fs.readFileSync(cp, 'utf8')).toBe('0\n1\nt 0 5\n');
    expect(log.flushStats.thoroughFlushes).toBeGreaterThan(0);
    const p = log.positions();
    expect(p.checkpointedRecoveryPoint).toBeLessThanOrEqual(p.flushed.offset);
    await log.close();
  });
});

describe('buffered mode', () => {
  it('acknowledges written; the committer writes the buffer every commitIntervalMs', async () => {
    const log = open({ flushMode: 'buffered', commitIntervalMs: 20, commitBytes: 1 << 30, flushMs: 3_600_000 });
    const r = await log.append([{ value: value(0) }, { value: value(1) }]);
    expect(r.status).toBe('written');
    let p = log.positions();
    expect(p.written.offset).toBe(2);
    expect(p.committed.offset).toBe(0);
    expectOrdered(p);
    // Readers (this process's and others') see nothing before the commit.
    expect([...log.read()]).toHaveLength(0);
    expect(fs.statSync(log.activeSegment.logPath).size).toBe(0);
    await until(() => log.positions().committed.offset === 2, 'the commit interval');
    p = log.positions();
    expectOrdered(p);
    expect([...log.read()]).toHaveLength(2);
    expect(log.flushStats.commits).toBeGreaterThanOrEqual(1);
    await log.close();
  });

  it('commits at once when the buffer holds commitBytes, then flushes by the async rules', async () => {
    const log = open({ flushMode: 'buffered', commitIntervalMs: 3_600_000, commitBytes: 1000, flushMs: 3_600_000, flushBytes: 1500 });
    await log.append([{ value: value(0) }]);
    expect(log.positions().committed.offset).toBe(0);
    for (let i = 1; i < 12; i++) await log.append([{ value: value(i) }]); // 12 × ~170 B > 1000
    expect(log.positions().committed.offset).toBeGreaterThan(0);
    expect(log.flushStats.commits).toBeGreaterThanOrEqual(1);
    for (let i = 12; i < 30; i++) await log.append([{ value: value(i) }]);
    await until(() => log.positions().flushed.offset > 0, 'a flush after commits crossed flush.bytes');
    expectOrdered(log.positions());
    await log.close();
  });

  it('a sync or async append commits the buffered ones before it, in order', async () => {
    const log = open({ flushMode: 'buffered', commitIntervalMs: 3_600_000 });
    await log.append([{ value: value(0) }]);
    await log.append([{ value: value(1) }]);
    const r = await log.append([{ value: value(2) }], { flushMode: 'async' });
    expect(r.status).toBe('committed');
    expect(log.positions().committed.offset).toBe(3);
    const s = await log.append([{ value: value(3) }], { flushMode: 'sync' });
    expect(s.status).toBe('flushed');
    expect([...log.read()].map((x) => x.value!.toString())).toEqual([0, 1, 2, 3].map((i) => value(i).toString()));
    await log.close();
  });

  it('mixed modes and sizes (batches beyond the write-buffer arena, rolls) read back exactly', async () => {
    const log = open({ flushMode: 'buffered', commitIntervalMs: 2, commitBytes: 3000, segmentBytes: 20_000, flushMs: 7 });
    const expected: string[] = [];
    const modes = ['buffered', 'buffered', 'async', 'sync', 'buffered'] as const;
    const pending: Promise<unknown>[] = [];
    let x = 12345;
    const rnd = (n: number): number => ((x = (x * 1103515245 + 12345) >>> 0) >>> 8) % n;
    for (let b = 0; b < 300; b++) {
      const n = 1 + rnd(b % 50 === 0 ? 120 : 6);
      const records = Array.from({ length: n }, () => {
        const v = value(expected.length, 10 + rnd(b % 50 === 0 ? 900 : 120));
        expected.push(v.toString());
        return { value: v };
      });
      const mode = modes[rnd(modes.length)]!;
      const r = log.append(records, { flushMode: mode });
      if (mode === 'sync') pending.push(r);
      if (rnd(10) === 0) await new Promise((res) => setTimeout(res, 1));
      expectOrdered(log.positions());
    }
    await Promise.all(pending);
    await log.flush();
    expect([...log.read()].map((r) => r.value!.toString())).toEqual(expected);
    expect(log.segments.length).toBeGreaterThan(1);
    await log.close();
    const again = Log.open(log.dir, { readOnly: true });
    expect([...again.read()].map((r) => r.value!.toString())).toEqual(expected);
    await again.close();
  });

  it('abandoning the process loses only what was not committed: a prefix survives', async () => {
    const log = open({ flushMode: 'buffered', commitIntervalMs: 3_600_000, commitBytes: 1 << 30 });
    await log.append([{ value: value(0) }], { flushMode: 'async' });
    await log.append([{ value: value(1) }]);
    await log.append([{ value: value(2) }]);
    log.abandon(); // a crash: no commit, no flush
    const again = Log.open(log.dir);
    expect([...again.read()].map((x) => x.offset)).toEqual([0]);
    expect(again.nextOffset).toBe(1);
    await again.close();
  });
});

describe('flush order, close and the clean-shutdown marker', () => {
  it('flush() syncs sealed segments (log, then indexes), the rolls\' producer snapshots, the active log, the directory, then the indexes and the checkpoint', async () => {
    const rec = new InstrumentedIO();
    const log = open({ flushMode: 'async', flushMs: 3_600_000, segmentBytes: 2000, indexIntervalBytes: 100 }, { io: rec.io });
    for (let i = 0; i < 15; i++) await log.append([{ value: value(i) }]); // ~170 B each → one roll
    expect(log.segments.length).toBe(2);
    rec.syncs.length = 0;
    await log.flush();
    const sealed = String(log.segments[0]!.baseOffset).padStart(20, '0');
    const active = String(log.segments[1]!.baseOffset).padStart(20, '0');
    expect(rec.syncs).toEqual([
      `${sealed}.log`,
      `${sealed}.index`,
      `${sealed}.timeindex`,
      `${active}.snapshot`, // the producer snapshot the roll wrote unsynced (Kafka: takeSnapshot(false))
      `${active}.log`,
      'dir:t-0',
      `${active}.index`,
      `${active}.timeindex`,
      // Written beside the file under a name of this process (the append path never waits for another writer's .tmp).
      `recovery-point-offset-checkpoint.${process.pid}.tmp`,
      `dir:${path.basename(path.dirname(log.dir))}`,
    ]);
    const p = log.positions();
    expect(p.flushed.offset).toBe(15);
    expect(p.checkpointedRecoveryPoint).toBe(15);
    await log.close();
  });

  it('close flushes everything, writes the recovery point and the marker; open consumes the marker', async () => {
    const log = open({ flushMode: 'buffered', commitIntervalMs: 3_600_000, flushMs: 3_600_000 });
    const pending = log.append([{ value: value(0) }], { flushMode: 'sync' });
    await log.append([{ value: value(1) }]);
    await log.close();
    expect((await pending).status).toBe('flushed');
    expect(() => log.append([{ value: value(2) }])).toThrow(LogtoolError);
    const parent = path.dirname(log.dir);
    expect(fs.readFileSync(path.join(parent, 'recovery-point-offset-checkpoint'), 'utf8')).toBe('0\n1\nt 0 2\n');
    expect(fs.existsSync(path.join(parent, '.kafka_cleanshutdown'))).toBe(true);
    const again = Log.open(log.dir);
    expect(again.loadReport.cleanShutdown).toBe(true);
    expect(fs.existsSync(path.join(parent, '.kafka_cleanshutdown'))).toBe(false);
    expect(again.nextOffset).toBe(2);
    expect(again.positions().recoveryPoint).toBe(2);
    again.abandon();
    const third = Log.open(log.dir);
    expect(third.loadReport.cleanShutdown).toBe(false);
    expect([...third.read()]).toHaveLength(2);
    await third.close();
  });

  it('appendEncoded follows the same modes', async () => {
    const src = open({ flushMode: 'async' });
    await src.append([{ value: value(0) }, { value: value(1) }]);
    const entry = [...src.reader().batches()][0]!.entry;
    const copy = Buffer.from(entry.buf.subarray(entry.bufPos, entry.bufPos + entry.size));
    await src.close();
    const dst = open({ flushMode: 'sync' });
    await dst.append([{ value: value(9) }]);
    const r = await dst.appendEncoded(copy);
    expect(r).toMatchObject({ baseOffset: 1, lastOffset: 2, count: 2, status: 'flushed' });
    await dst.close();
  });
});
