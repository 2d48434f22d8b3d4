/**
 * Sync mode with one producer (issue 15, sync-1-producer): its append is committed and its
 * fdatasync issued before `append` returns — no end-of-tick wait, no copy into the write buffer —
 * while producers arriving together still share a group commit; the timeout of waiting appends
 * costs no timer per append and never keeps the process alive once nobody waits. Real files and
 * real fdatasync; the I/O layer only counts.
 */
import { createHook } from 'node:async_hooks';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, realIO, type FileIO, type LogConfig } from '../../src/api.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

const value = (i: number): Buffer => Buffer.from(`${i}:`.padEnd(100, 'v'));

function open(config: Partial<LogConfig>, io?: FileIO): Log {
  return Log.open(path.join(makeTempDir('logtool-lone-'), 't-0'), { config: { flushMode: 'sync', ...config }, rememberConfig: false, io });
}

/** The real I/O layer, counting fdatasyncs (through the thread pool or, for a lone producer on a fast disk, blocking). */
function countingIO(): { io: FileIO; datasyncs: () => number } {
  let n = 0;
  const io: FileIO = {
    ...realIO,
    datasync(fd) {
      n++;
      realIO.datasync(fd);
    },
    datasyncAsync(fd) {
      n++;
      return realIO.datasyncAsync(fd);
    },
  };
  return { io, datasyncs: () => n };
}

describe('sync mode: a lone producer', () => {
  it("gets its append committed and its fdatasync issued before append returns; a burst after it still shares fsyncs", async () => {
    const { io, datasyncs } = countingIO();
    const log = open({}, io);
    // The first append waits for the end of the tick (a burst may be forming); it is alone.
    expect((await log.append([{ value: value(0) }])).status).toBe('flushed');
    for (let i = 1; i <= 30; i++) {
      const before = datasyncs();
      const acked = log.append([{ value: value(i) }]);
      // No turn of the event loop yet: the batch is in the file and its fdatasync is under way.
      expect(log.positions().committed.offset).toBe(i + 1);
      expect(datasyncs()).toBe(before + 1);
      expect((await acked).status).toBe('flushed');
      expect(log.positions().flushed.offset).toBe(i + 1);
    }
    // Producers arriving together: the first is flushed at once, the others share the next fsyncs.
    const fsyncs = log.flushStats.fsyncs;
    const burst = await Promise.all(Array.from({ length: 200 }, (_, i) => log.append([{ value: value(100 + i) }])));
    expect(burst.every((r) => r.status === 'flushed')).toBe(true);
    expect(log.flushStats.fsyncs - fsyncs).toBeLessThan(20);
    expect(log.flushStats.largestGroup).toBeGreaterThan(50);
    // Alone again: once a group of one acknowledges, the next append is flushed at once.
    await log.append([{ value: value(300) }]);
    const acked = log.append([{ value: value(301) }]);
    expect(log.positions().committed.offset).toBe(31 + 200 + 2);
    await acked;
    await log.close();
    const again = Log.open(log.dir);
    expect([...again.read()].map((r) => r.value!.toString())).toEqual([...Array.from({ length: 31 }, (_, i) => i), ...Array.from({ length: 200 }, (_, i) => 100 + i), 300, 301].map((i) => value(i).toString()));
    await again.close();
  });

  it('with flushWhenQueueEmpty off, still waits for its group (maxWaitMs)', async () => {
    const { io, datasyncs } = countingIO();
    const log = open({ flushWhenQueueEmpty: false, maxWaitMs: 1 }, io);
    await log.append([{ value: value(0) }]);
    const before = datasyncs();
    const acked = log.append([{ value: value(1) }]);
    expect(log.positions().committed.offset).toBe(1);
    expect(datasyncs()).toBe(before);
    expect((await acked).status).toBe('flushed');
    await log.close();
  });

  it('creates no timer per append, and the timeout timer never keeps the process alive once nobody waits', async () => {
    // The waiters' own timer, told from every other Timeout in the process (the test runner's come
    // and go) by where it was created. The blocking path (below) has no waiter: its append is
    // flushed when acknowledged, so it is shut here.
    const waitersTimers: NodeJS.Timeout[] = [];
    const hook = createHook({
      init(_id, type, _trigger, resource) {
        if (type !== 'Timeout') return;
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 50;
        const stack = new Error().stack ?? '';
        Error.stackTraceLimit = limit;
        if (stack.includes('sync-waiters')) waitersTimers.push(resource as NodeJS.Timeout);
      },
    }).enable();
    let log: Log;
    try {
      log = open({ syncTimeoutMs: 600_000, syncBlockingFsyncMaxMs: 0 });
      for (let i = 0; i <= 100; i++) expect((await log.append([{ value: value(i) }])).status).toBe('flushed');
    } finally {
      hook.disable();
    }
    // One timer for all 101 appends (a second only if the clock stepped back).
    expect(waitersTimers.length).toBeGreaterThanOrEqual(1);
    expect(waitersTimers.length).toBeLessThan(3);
    const timer = waitersTimers.at(-1)!;
    // While an append waits, its timeout keeps the event loop alive; once it is acknowledged, not.
    expect(timer.hasRef()).toBe(false);
    const acked = log.append([{ value: value(101) }, { value: value(102) }]);
    expect(timer.hasRef()).toBe(true);
    expect((await acked).status).toBe('flushed');
    expect(timer.hasRef()).toBe(false);
    await log.close();
  });
});
