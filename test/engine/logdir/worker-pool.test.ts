/**
 * The worker-thread pool (engine/logdir/worker-pool.ts), run from dist/ with a small entry module:
 * jobs run on distinct worker threads, at most `size`, outcomes come back in job order; a job that
 * throws is reported with its message and kind, a worker that dies with the job it ran, and the
 * pool goes on; no worker starts for one job or a pool of one; flock from a worker is relayed to
 * the main thread (a lock the main thread holds is seen as held); both worker entries of dist/ exist.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distDir, ensureBuilt } from '../../helpers/build.js';
import { makeTempDir, removeTempDirs } from '../../helpers/fixtures.js';

type PoolModule = typeof import('../../../src/engine/logdir/worker-pool.js');
type LockModule = typeof import('../../../src/engine/log/lock.js');
let pool: PoolModule;
let lock: LockModule;
let entry: URL;

interface Job {
  n: number;
  action?: 'throw' | 'exit' | 'lock';
  dir?: string;
}

beforeAll(async () => {
  ensureBuilt();
  pool = (await import(pathToFileURL(path.join(distDir, 'engine/logdir/worker-pool.js')).href)) as PoolModule;
  lock = (await import(pathToFileURL(path.join(distDir, 'engine/log/lock.js')).href)) as LockModule;
  const file = path.join(makeTempDir('logtool-pool-'), 'entry.mjs');
  fs.writeFileSync(
    file,
    `import { threadId } from 'node:worker_threads';
import { isWorkerEntry, serveJobs } from ${JSON.stringify(pathToFileURL(path.join(distDir, 'engine/logdir/worker-pool.js')).href)};
import { DirectoryLock } from ${JSON.stringify(pathToFileURL(path.join(distDir, 'engine/log/lock.js')).href)};
import { LogtoolError } from ${JSON.stringify(pathToFileURL(path.join(distDir, 'engine/errors.js')).href)};
if (isWorkerEntry(import.meta.url)) serveJobs(async (job) => {
  if (job.action === 'throw') throw new LogtoolError('corrupt', 'bad job ' + job.n, { file: 'f' + job.n, position: job.n });
  if (job.action === 'exit') process.exit(7);
  if (job.action === 'lock') { const l = DirectoryLock.acquire(job.dir); l.release(); return 'locked'; }
  await new Promise((r) => setTimeout(r, (job.n * 7) % 5));
  return { n: job.n * 2, threadId };
});
`,
  );
  entry = pathToFileURL(file);
}, 240_000);
afterAll(() => removeTempDirs());

/** A pool of Job as the test calls it. */
type JobPool<R> = { map(jobs: readonly Job[], f: (o: { ok: true; value: R } | { ok: false; error: Error }, i: number) => boolean): Promise<void> };

async function collect<R>(p: JobPool<R>, jobs: Job[]) {
  const out: { index: number; ok: boolean; value?: unknown; error?: Error }[] = [];
  await p.map(jobs, (o, index) => {
    out.push(o.ok ? { index, ok: true, value: o.value } : { index, ok: false, error: o.error });
    return true;
  });
  return out;
}

describe('WorkerPool', () => {
  it('runs jobs on at most `size` worker threads and delivers outcomes in job order', async () => {
    const p = new pool.WorkerPool<Job, { n: number; threadId: number }>(entry, 2, undefined, (j) => `job ${j.n}`);
    try {
      const out = await collect(p, Array.from({ length: 40 }, (_, n) => ({ n })));
      expect(out.map((o) => o.index)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      expect(out.map((o) => (o.value as { n: number }).n)).toEqual(Array.from({ length: 40 }, (_, i) => i * 2));
      const threads = new Set(out.map((o) => (o.value as { threadId: number }).threadId));
      expect(threads.has(0)).toBe(false); // never the main thread
      expect(threads.size).toBeGreaterThanOrEqual(1);
      expect(threads.size).toBeLessThanOrEqual(2);
    } finally {
      await p.close();
    }
  });

  it('a job that throws is reported with its kind, file and position; a worker that dies fails its job only', async () => {
    const p = new pool.WorkerPool<Job, unknown>(entry, 2, undefined, (j) => `partition p-${j.n}`);
    try {
      const out = await collect(p, [{ n: 0 }, { n: 1, action: 'throw' }, { n: 2 }, { n: 3, action: 'exit' }, { n: 4 }, { n: 5 }]);
      expect(out.map((o) => o.ok)).toEqual([true, false, true, false, true, true]);
      expect(out[1]!.error).toMatchObject({ kind: 'corrupt', message: 'bad job 1', file: 'f1', position: 1 });
      expect(out[3]!.error!.message).toBe('the worker thread for partition p-3 exited with code 7');
    } finally {
      await p.close();
    }
  });

  it('stops starting jobs when told to, and runs inline (no worker) for one job or a pool of one', async () => {
    const p = new pool.WorkerPool<Job, unknown>(entry, 2, (j) => ({ inline: j.n }), (j) => `job ${j.n}`);
    try {
      const seen: number[] = [];
      await p.map(Array.from({ length: 20 }, (_, n) => ({ n })), (_o, i) => (seen.push(i), i < 4));
      expect(seen).toEqual([0, 1, 2, 3, 4]);
      expect(p.usesWorkers(1)).toBe(false);
      expect(await collect(p, [{ n: 9 }])).toEqual([{ index: 0, ok: true, value: { inline: 9 } }]);
    } finally {
      await p.close();
    }
    const one = new pool.WorkerPool<Job, unknown>(entry, 1, (j) => ({ inline: j.n }), () => '');
    expect(one.usesWorkers(10)).toBe(false);
    expect((await collect(one, [{ n: 1 }, { n: 2 }])).map((o) => o.value)).toEqual([{ inline: 1 }, { inline: 2 }]);
  });

  it('flock from a worker goes through the main thread: a lock held here is held for the worker too', async () => {
    const dir = makeTempDir('logtool-pool-lock-');
    const p = new pool.WorkerPool<Job, unknown>(entry, 2, undefined, () => dir);
    try {
      const held = lock.DirectoryLock.acquire(dir);
      let out;
      try {
        out = await collect(p, [{ n: 0, action: 'lock', dir }, { n: 1, action: 'lock', dir }]);
      } finally {
        held.release();
      }
      expect(out.map((o) => o.error?.message)).toEqual([expect.stringMatching(/another process holds the lock/), expect.stringMatching(/another process holds the lock/)]);
      // Released here: the workers take it (two directories, as the two jobs may run at once).
      out = await collect(p, [{ n: 0, action: 'lock', dir }, { n: 1, action: 'lock', dir: makeTempDir('logtool-pool-lock-') }]);
      expect(out.map((o) => o.value)).toEqual(['locked', 'locked']);
    } finally {
      await p.close();
    }
  });

  it('the worker entries exist in dist/, so the pool uses workers there', () => {
    for (const f of ['engine/logdir/partition-worker.js', 'commands/partition-jobs.js']) {
      expect(pool.workerEntryAvailable(pathToFileURL(path.join(distDir, f))), f).toBe(true);
    }
    expect(pool.workerEntryAvailable(new URL('./worker-pool.ts', pathToFileURL(path.join(distDir, 'x.js'))))).toBe(false);
  });
});
