/**
 * Durability order and work left running (issue 9, items 15–17), observed through a FileIO that
 * records every fsync, rename and unlink by path over the real one.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, realIO, type FileIO } from '../../src/api.js';
import { removeTempDirs, repoRoot, tempPartitionPath } from '../helpers/fixtures.js';
import { pathTrackingIO } from '../helpers/path-io.js';
import { beginChange, endChange } from '../../src/engine/cleaner/generation.js';

afterAll(removeTempDirs);

/** Records `datasync <path>`, `syncdir <path>`, `rename <from> -> <to>`, `unlink <path>` in order. */
function recordingIO(events: string[], base: FileIO = realIO): FileIO {
  return pathTrackingIO((name) => ({
    datasync(fd) {
      events.push(`datasync ${name(fd)}`);
      base.datasync(fd);
    },
    async datasyncAsync(fd) {
      const p = name(fd);
      await base.datasyncAsync(fd);
      events.push(`datasync ${p}`);
    },
    rename(from, to) {
      base.rename(from, to);
      events.push(`rename ${from} -> ${to}`);
    },
    unlink(p) {
      base.unlink(p);
      events.push(`unlink ${p}`);
    },
    syncDir(p) {
      base.syncDir(p);
      events.push(`syncdir ${p}`);
    },
  }), base);
}

const rec = (i: number) => ({ key: Buffer.from(`k${i}`), value: Buffer.alloc(100, i), timestamp: 1_700_000_000_000 + i });

async function threeSegments(dir: string): Promise<void> {
  const log = Log.open(dir, { config: { segmentBytes: 600, indexIntervalBytes: 1 } });
  for (let i = 0; i < 12; i++) await log.append([rec(i)]);
  expect(log.segments.length).toBeGreaterThanOrEqual(3);
  await log.close();
}

describe('indexes rebuilt at open (item 15)', () => {
  it('are fsynced, and their renames made durable, before the recovery point or the marker move past them', async () => {
    const dir = tempPartitionPath('rebuilt-0');
    await threeSegments(dir);
    const logDir = path.dirname(dir);
    // An unclean shutdown: no marker, no recovery point: every segment is recovered at open.
    fs.rmSync(path.join(logDir, '.kafka_cleanshutdown'), { force: true });
    fs.rmSync(path.join(logDir, 'recovery-point-offset-checkpoint'), { force: true });
    const events: string[] = [];
    const log = Log.open(dir, { io: recordingIO(events) });
    const rebuilt = log.loadReport.indexesRebuilt;
    expect(rebuilt.length).toBeGreaterThanOrEqual(6);
    await log.close();
    const checkpoint = events.findIndex((e) => e.startsWith('rename') && e.endsWith(`-> ${path.join(logDir, 'recovery-point-offset-checkpoint')}`));
    const marker = events.findIndex((e) => e.startsWith('rename') && e.endsWith(`-> ${path.join(logDir, '.kafka_cleanshutdown')}`));
    expect(checkpoint).toBeGreaterThan(0);
    expect(marker).toBeGreaterThan(0);
    for (const file of rebuilt) {
      const renamed = events.lastIndexOf(`rename ${file}.tmp -> ${file}`);
      expect(renamed, file).toBeGreaterThanOrEqual(0);
      // The content: fsynced before the rename (the .tmp) or after it (the final name).
      const synced = events.findIndex((e, i) => (e === `datasync ${file}.tmp` && i < renamed) || (e === `datasync ${file}` && i > renamed));
      expect(synced, `${file} is never fsynced`).toBeGreaterThanOrEqual(0);
      expect(synced).toBeLessThan(checkpoint);
      // The rename: a directory fsync after it, before the checkpoint moves.
      const dirSynced = events.findIndex((e, i) => i > renamed && e === `syncdir ${dir}`);
      expect(dirSynced).toBeGreaterThan(renamed);
      expect(dirSynced).toBeLessThan(checkpoint);
    }
  });
});

/** Name → size and content hash of every file under dir (and its log dir's checkpoints). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of [dir, path.dirname(dir)]) {
    for (const n of fs.readdirSync(d)) {
      const p = path.join(d, n);
      const st = fs.statSync(p);
      if (st.isFile()) out[p] = `${st.size}:${st.mtimeMs}:${fs.readFileSync(p).toString('base64').slice(0, 64)}`;
    }
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits until an interval timer has fired `n` times (bounded: 5 s), whatever the machine's load. */
async function ticksAtLeast(ticks: () => number, n: number): Promise<void> {
  const end = Date.now() + 5000;
  while (ticks() < n && Date.now() < end) await sleep(5);
}

async function compactableLog(dir: string, deleteDelayMs: number): Promise<Log> {
  const log = Log.open(dir, { config: { cleanupPolicy: 'compact', segmentBytes: 4096, fileDeleteDelayMs: deleteDelayMs, flushMode: 'async' } });
  // Many segments of rewritten keys: the compaction yields to the event loop many times.
  for (let i = 0; i < 600; i++) await log.append([{ key: Buffer.from(`k${i % 7}`), value: Buffer.alloc(200, i), timestamp: 1_700_000_000_000 + i }]);
  return log;
}

describe('close() leaves no work running (item 17)', () => {
  it('waits for a foreground compaction: it completes, and no file changes after close', async () => {
    const dir = tempPartitionPath('close-compact-0');
    const log = await compactableLog(dir, 150);
    const compaction = log.compact();
    const closing = log.close();
    const [c] = await Promise.allSettled([compaction, closing]);
    expect(c.status).toBe('fulfilled');
    await closing;
    const after = snapshot(dir);
    await sleep(400); // well past file.delete.delay.ms
    expect(snapshot(dir)).toEqual(after);
    // The delayed removals ran before the lock was released: no .deleted file is left behind.
    expect(Object.keys(after).filter((f) => f.endsWith('.deleted'))).toEqual([]);
    const again = Log.open(dir, { readOnly: true });
    const latest = new Map([...again.read()].map((r) => [r.key!.toString(), r.offset]));
    expect(latest.size).toBe(7);
    expect(Math.max(...latest.values())).toBe(599);
    await again.close();
  });

  it('a dry-run compaction of a read-only log is not cut off by close()', async () => {
    const dir = tempPartitionPath('close-dryrun-0');
    await (await compactableLog(dir, 0)).close();
    const log = Log.open(dir, { readOnly: true });
    const compaction = log.compact({ dryRun: true });
    const closing = log.close();
    const [c] = await Promise.allSettled([compaction, closing]);
    expect(c.status === 'rejected' ? String((c as PromiseRejectedResult).reason) : 'fulfilled').toBe('fulfilled');
  });

  it('runs the delayed removals of retention at close, not after it', async () => {
    const dir = tempPartitionPath('close-retention-0');
    const log = Log.open(dir, { config: { segmentBytes: 1024, fileDeleteDelayMs: 150, flushMode: 'async' } });
    for (let i = 0; i < 40; i++) await log.append([rec(i)]);
    const report = log.deleteRecordsBefore(30);
    expect(report.deleted.length).toBeGreaterThan(0);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.deleted')).length).toBeGreaterThan(0);
    await log.close();
    const after = snapshot(dir);
    expect(Object.keys(after).filter((f) => f.endsWith('.deleted'))).toEqual([]);
    await sleep(400);
    expect(snapshot(dir)).toEqual(after);
  });
});

describe('the sync append path never blocks the event loop longer than one fsync (item 16, issue 15)', () => {
  it('sync appends with rolls and thorough flushes issue no synchronous fsync but a lone producer\'s fdatasync of the active log, one per turn of the event loop', async () => {
    const dir = tempPartitionPath('no-sync-fsync-0');
    let armed = false;
    let turned = true;
    const violations: string[] = [];
    const events: string[] = [];
    const base = recordingIO(events);
    const io: FileIO = {
      ...base,
      datasync(fd) {
        base.datasync(fd);
        const file = events.at(-1)!.slice('datasync '.length);
        // Only the blocking path for a lone producer (flush/blocking-fsync.ts): the active .log, then a turn of the loop.
        if (armed && (!file.endsWith('.log') || !turned)) violations.push(`synchronous fdatasync on the event loop: ${file}`);
        turned = false;
        setImmediate(() => (turned = true));
      },
      syncDir(p) {
        if (armed) throw new Error(`synchronous directory fsync on the event loop: ${p}`);
        base.syncDir(p);
      },
    };
    const log = Log.open(dir, { io, config: { segmentBytes: 2048, indexIntervalBytes: 1 } });
    armed = true;
    const appends: Promise<unknown>[] = [];
    for (let round = 0; round < 8; round++) {
      for (let i = 0; i < 10; i++) appends.push(log.append([rec(round * 10 + i)]));
      await Promise.all(appends);
      await log.flush(); // the thorough part: active indexes and the recovery-point checkpoint
    }
    const results = (await Promise.all(appends)) as { status: string }[];
    armed = false;
    expect(violations).toEqual([]);
    expect(results.every((r) => r.status === 'flushed')).toBe(true);
    expect(log.segments.length).toBeGreaterThan(4);
    // The rolls' sealed indexes, the directory and the checkpoint were all fsynced (asynchronously).
    const sealed = log.segments.slice(0, -1);
    for (const s of sealed) expect(events).toContain(`datasync ${s.indexPath}`);
    expect(events).toContain(`syncdir ${dir}`);
    const checkpoint = fs.readFileSync(path.join(path.dirname(dir), 'recovery-point-offset-checkpoint'), 'utf8');
    expect(checkpoint).toMatch(/^0\n1\nno-sync-fsync 0 \d+\n$/);
    expect(Number(checkpoint.split(' ')[2])).toBeGreaterThan(60);
    await log.close();
  });

  it('a thorough flush waiting for the log directory lock lets the event loop serve others', async () => {
    const dir = tempPartitionPath('lock-wait-0');
    const log = Log.open(dir);
    for (let i = 0; i < 5; i++) await log.append([rec(i)]);
    // Another process holds the log directory's lock until told to let go (or 10 s).
    const holder = spawn(
      process.execPath,
      ['-e', `const fs=require('fs');const {flockSync}=require('fs-ext');const fd=fs.openSync(${JSON.stringify(path.dirname(dir))},'r');flockSync(fd,'ex');process.stdout.write('locked\\n');process.stdin.on('data',()=>process.exit(0));setTimeout(()=>process.exit(0),10000);`],
      { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
    const exited = new Promise((r) => holder.on('exit', r));
    let settled = false;
    const flushing = log.flush().finally(() => (settled = true));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    // The flush waits for the lock, and meanwhile timers fire and reads are served. (Waiting for
    // ticks rather than for a time: a loaded machine may deschedule this process for 100 ms.)
    await ticksAtLeast(() => ticks, 3);
    expect(settled).toBe(false);
    expect(ticks).toBeGreaterThanOrEqual(3);
    expect([...log.read()].length).toBe(5);
    clearInterval(timer);
    holder.stdin!.write('go\n');
    await exited;
    await flushing;
    expect(fs.readFileSync(path.join(path.dirname(dir), 'recovery-point-offset-checkpoint'), 'utf8')).toBe('0\n1\nlock-wait 0 5\n');
    expect(fs.readdirSync(path.dirname(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    await log.close();
  });

  it('openStable waits for a change in progress without blocking the event loop', async () => {
    const dir = tempPartitionPath('stable-0');
    await (async () => {
      const w = Log.open(dir);
      await w.append([rec(1)]);
      await w.close();
    })();
    // A change in progress by a live process (this one): odd generation with its pid.
    const token = beginChange(realIO, dir);
    let settled = false;
    const opening = Log.openStable(dir, {}, 5000).finally(() => (settled = true));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    await ticksAtLeast(() => ticks, 3);
    expect(settled).toBe(false);
    expect(ticks).toBeGreaterThanOrEqual(3);
    clearInterval(timer);
    endChange(realIO, dir, token);
    const reader = await opening;
    expect([...reader.read()].length).toBe(1);
    await reader.close();
  });
});
