/**
 * The LogManager's background schedule (engine/logdir/manager-schedule.ts decides when,
 * manager-work.ts acts): retention, flush.ms, the two directory checkpoints and the cleaner
 * (dirtiest compacted log first) run on short intervals over real files; a broker's partition
 * whose topic config is unknown is left alone with one notice, an internal topic is compacted by
 * Kafka's built-in config; close() leaves no timer behind and a child process exits by itself.
 * No timing is asserted: each test waits for an event or a condition with a generous bound.
 */
import { createHook } from 'node:async_hooks';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log, LogManager } from '../../../src/api.js';
import { ManagerSchedule, type ScheduleEvent, type ScheduledTaskName, type ScheduledWork } from '../../../src/engine/logdir/manager-schedule.js';
import type { LogWarning } from '../../../src/engine/log/log-types.js';
import { makeTempDir, removeTempDirs } from '../../helpers/fixtures.js';
import { engineEntry, ensureBuilt } from '../../helpers/build.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { configRecord, topicRecord, writeMetadataLog } from '../../helpers/metadata-records.js';

afterAll(() => removeTempDirs());

const NEVER = Infinity;
const QUIET = { retentionCheckIntervalMs: NEVER, flushCheckIntervalMs: NEVER, checkpointIntervalMs: NEVER, startOffsetCheckpointIntervalMs: NEVER, cleanerBackoffMs: NEVER };
const DAY_MS = 86_400_000;
const rec = (key: string, value: string, timestamp?: number) => ({ key: Buffer.from(key), value: Buffer.from(value), timestamp });

/** Collects schedule events and resolves waits on them (bounded: a wait that times out fails the test). */
class Events {
  readonly all: ScheduleEvent[] = [];
  private waiters: { test: (e: ScheduleEvent) => boolean; resolve: (e: ScheduleEvent) => void }[] = [];
  readonly push = (e: ScheduleEvent) => {
    this.all.push(e);
    this.waiters = this.waiters.filter((w) => !(w.test(e) && (w.resolve(e), true)));
  };
  next(task: ScheduledTaskName, test: (e: ScheduleEvent) => boolean = () => true, boundMs = 20_000): Promise<ScheduleEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${task} event within ${boundMs} ms; seen: ${JSON.stringify(this.all.map((e) => e.task))}`)), boundMs);
      this.waiters.push({ test: (e) => e.task === task && test(e), resolve: (e) => (clearTimeout(timer), resolve(e)) });
    });
  }
}

const result = (e: ScheduleEvent) => ('result' in e ? e.result : undefined);
const errorOf = (e: ScheduleEvent) => ('error' in e ? e.error : undefined);

/** A partition of `segments` full segments of keyed records, written with the given timestamps, closed. */
async function writePartition(dir: string, segments: number, opts: { keys?: number; timestamp?: number; config?: object } = {}): Promise<void> {
  const log = Log.open(dir, { config: { segmentBytes: 1024, ...opts.config }, rememberConfig: false });
  let i = 0;
  while (log.segments.length <= segments) {
    await log.append([rec(`k${i % (opts.keys ?? 1_000_000)}`, `value-${i}`.padEnd(60, '.'), opts.timestamp)]);
    i++;
  }
  await log.close();
}

describe('ManagerSchedule (when; a fake clock and a recording work)', () => {
  function recordingWork() {
    const calls: string[] = [];
    let release: (() => void) | undefined;
    const work: ScheduledWork = {
      retainAll: async () => (calls.push('retention'), 0),
      flushDue: async (nowMs) => (calls.push(`flush@${nowMs}`), 0),
      writeCheckpoints: async (kind) => (calls.push(kind), 0),
      // The cleaner's run stays in progress until release() is called.
      cleanDirtiest: () => (calls.push('cleaner'), new Promise<string>((r) => (release = () => r('done')))),
    };
    return { calls, work, release: () => release?.() };
  }

  it("runs each task at its interval (Kafka's defaults), one run of a task at a time; stop() waits for the one running and disarms every timer", async () => {
    const clock = new FakeClock();
    const { calls, work, release } = recordingWork();
    const events: ScheduleEvent[] = [];
    const s = new ManagerSchedule(work, {}, (e) => events.push(e), clock);
    s.start();
    expect(s.taskCount).toBe(5);
    clock.advance(1_000);
    expect(calls).toEqual(['flush@2000']);
    clock.advance(59_000);
    expect(calls.filter((c) => c === 'cleaner').length).toBe(1); // 15 s, 30 s, 45 s: the first still runs
    expect(calls.filter((c) => c === 'recovery-point').length).toBe(1);
    expect(calls.filter((c) => c === 'log-start').length).toBe(1);
    expect(calls.filter((c) => c === 'retention').length).toBe(0);
    clock.advance(240_000);
    expect(calls.filter((c) => c === 'retention').length).toBe(1);
    let stopped = false;
    const stopping = s.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false); // the cleaner's run is in progress
    expect(clock.armed).toBe(0);
    release();
    await stopping;
    expect(events.filter((e) => e.task === 'cleaner')).toEqual([]); // its result came after stop
  });

  it('a task whose interval is "never" is not scheduled; a failed run is an event and the task keeps going', async () => {
    const clock = new FakeClock();
    const events: ScheduleEvent[] = [];
    let n = 0;
    const work: ScheduledWork = {
      retainAll: async () => {
        if (++n === 1) throw new Error('disk on fire');
        return n;
      },
      flushDue: async () => 0,
      writeCheckpoints: async () => 0,
      cleanDirtiest: async () => undefined,
    };
    const s = new ManagerSchedule(work, { retentionCheckIntervalMs: 10, flushCheckIntervalMs: Infinity, checkpointIntervalMs: 2 ** 31, cleanerBackoffMs: Number.MAX_SAFE_INTEGER }, (e) => events.push(e), clock);
    expect(s.taskCount).toBe(1); // the log-start checkpoint follows checkpointIntervalMs
    s.start();
    clock.advance(10);
    await new Promise((r) => setImmediate(r));
    clock.advance(10);
    await new Promise((r) => setImmediate(r));
    expect(events.map((e) => ('error' in e ? `${e.task}: ${(e.error as Error).message}` : `${e.task}: ${String(e.result)}`))).toEqual(['retention: disk on fire', 'retention: 2']);
    await s.stop();
    expect(clock.armed).toBe(0);
    expect(() => new ManagerSchedule(work, { cleanerBackoffMs: 0 }, () => {}, clock)).toThrow(/positive/);
  });
});

describe('the schedule over a logtool log directory', () => {
  it('retention deletes expired segments on its interval', async () => {
    const logDir = makeTempDir('logtool-sched-ret-');
    await writePartition(path.join(logDir, 'old-0'), 4, { timestamp: Date.now() - 30 * DAY_MS });
    const events = new Events();
    const m = await LogManager.open([logDir], { schedule: { ...QUIET, retentionCheckIntervalMs: 10 }, onSchedule: events.push });
    try {
      const log = m.getLog('old', 0)!;
      const before = log.segments.length;
      expect(before).toBeGreaterThan(1);
      const end = log.nextOffset;
      const e = await events.next('retention', (ev) => (result(ev) as number) > 0);
      // retention.ms 7 days: every segment, the active one too (an empty one is rolled first).
      expect(result(e)).toBe(before);
      expect(log.segments.map((s) => [s.baseOffset, s.size])).toEqual([[end, 0]]);
      expect(log.logStartOffset).toBe(end);
    } finally {
      await m.close();
    }
  });

  it('flush.ms flushes an async log (its recovery point advances), the checkpoint task writes it once, and an unchanged round writes nothing', async () => {
    const logDir = makeTempDir('logtool-sched-flush-');
    const events = new Events();
    const m = await LogManager.open([logDir], {
      config: { flushMode: 'async', flushMs: 5 },
      schedule: { ...QUIET, flushCheckIntervalMs: 10, checkpointIntervalMs: 10, startOffsetCheckpointIntervalMs: NEVER },
      onSchedule: events.push,
    });
    const cpFile = path.join(logDir, 'recovery-point-offset-checkpoint');
    try {
      const log = m.getOrCreateLog('t', 0);
      for (let i = 0; i < 5; i++) await log.append([rec(`k${i}`, `v${i}`)]);
      expect(log.positions().recoveryPoint).toBe(0); // async: committed, not yet durable
      await events.next('flush', (e) => (result(e) as number) >= 1);
      expect(log.positions().recoveryPoint).toBe(5);
      // A round that started before the flush may still write the old recovery point; the next writes 5.
      await events.next('recovery-point-checkpoint', (e) => result(e) === 1 && fs.readFileSync(cpFile, 'utf8') === '0\n1\nt 0 5\n');
      expect(log.positions().checkpointedRecoveryPoint).toBe(5);
      const st = fs.statSync(cpFile);
      for (let i = 0; i < 3; i++) expect(result(await events.next('recovery-point-checkpoint'))).toBe(0);
      const after = fs.statSync(cpFile);
      expect([after.ino, after.mtimeMs]).toEqual([st.ino, st.mtimeMs]);
      expect(events.all.filter((e) => errorOf(e) !== undefined)).toEqual([]);
    } finally {
      await m.close();
    }
  });

  it('the log-start checkpoint is rewritten from the logs when its entry is wrong, and left alone once right', async () => {
    const logDir = makeTempDir('logtool-sched-lso-');
    await writePartition(path.join(logDir, 't-0'), 3);
    const events = new Events();
    const m = await LogManager.open([logDir], { schedule: { ...QUIET, startOffsetCheckpointIntervalMs: 10 }, onSchedule: events.push });
    const cpFile = path.join(logDir, 'log-start-offset-checkpoint');
    try {
      const log = m.getLog('t', 0)!;
      log.deleteRecordsBefore(3);
      expect(fs.readFileSync(cpFile, 'utf8')).toBe('0\n1\nt 0 3\n');
      fs.writeFileSync(cpFile, '0\n0\n'); // someone lost the entry
      await events.next('log-start-checkpoint', (e) => result(e) === 1);
      expect(fs.readFileSync(cpFile, 'utf8')).toBe('0\n1\nt 0 3\n');
      const st = fs.statSync(cpFile);
      expect(result(await events.next('log-start-checkpoint'))).toBe(0);
      expect(fs.statSync(cpFile).ino).toBe(st.ino);
    } finally {
      await m.close();
    }
  });

  it('the cleaner compacts the dirtiest compacted log first, then the next, one at a time', async () => {
    const logDir = makeTempDir('logtool-sched-clean-');
    const config = { cleanupPolicy: 'compact', segmentBytes: 1024 };
    await writePartition(path.join(logDir, 'lessdirty-0'), 10, { keys: 5, config });
    await writePartition(path.join(logDir, 'dirtier-0'), 10, { keys: 5, config });
    // lessdirty's cleaner checkpoint at its 5th segment: fewer of its bytes are dirty.
    const less = Log.open(path.join(logDir, 'lessdirty-0'), { readOnly: true, config });
    fs.writeFileSync(path.join(logDir, 'cleaner-offset-checkpoint'), `0\n1\nlessdirty 0 ${less.segments[4]!.baseOffset}\n`);
    await less.close();
    const events = new Events();
    const m = await LogManager.open([logDir], { config, schedule: { ...QUIET, cleanerBackoffMs: 10 }, onSchedule: events.push });
    try {
      const ratios = ['dirtier', 'lessdirty'].map((t) => m.getLog(t, 0)!.compactionSchedule());
      expect(ratios.map((s) => s.needed)).toEqual([true, true]);
      expect(ratios[0]!.dirtyRatio).toBeGreaterThan(ratios[1]!.dirtyRatio);
      const first = await events.next('cleaner', (e) => result(e) !== undefined || errorOf(e) !== undefined);
      expect(result(first)).toBe(m.getLog('dirtier', 0)!.dir);
      const second = await events.next('cleaner', (e) => result(e) !== undefined || errorOf(e) !== undefined);
      expect(result(second)).toBe(m.getLog('lessdirty', 0)!.dir);
      for (const t of ['dirtier', 'lessdirty']) {
        const keys = [...m.getLog(t, 0)!.read()].map((r) => r.key!.toString());
        expect(new Set(keys).size, t).toBe(5);
        expect(keys.length, t).toBeLessThan(50); // only the active segment's duplicates are left
      }
    } finally {
      await m.close();
    }
  });
});

describe("the schedule in a broker's log directory with __cluster_metadata-0", () => {
  it("uses the configs decoded from the directory's __cluster_metadata-0: retention.ms and cleanup.policy as the metadata says", async () => {
    const logDir = path.join(makeTempDir('logtool-sched-md-'), 'data');
    const recent = Date.now() - 60_000; // a minute old: within logtool's default 7 days
    await writePartition(path.join(logDir, 'expiring-0'), 3, { timestamp: recent });
    await writePartition(path.join(logDir, 'compacted-0'), 4, { keys: 5 });
    await writePartition(path.join(logDir, 'absent-0'), 3, { timestamp: Date.now() - 30 * DAY_MS });
    await writeMetadataLog(path.join(logDir, '__cluster_metadata-0'), [
      topicRecord('expiring', 1),
      configRecord(2, 'expiring', 'retention.ms', '1000'),
      topicRecord('compacted', 2),
      configRecord(2, 'compacted', 'cleanup.policy', 'compact'),
    ]);
    fs.writeFileSync(path.join(logDir, 'meta.properties'), 'version=1\nnode.id=1\ncluster.id=abc\n');
    const warnings: LogWarning[] = [];
    const events = new Events();
    const m = await LogManager.open([logDir], { schedule: { ...QUIET, retentionCheckIntervalMs: 10, cleanerBackoffMs: 10 }, onSchedule: events.push, onWarning: (w) => warnings.push(w) });
    try {
      const [expiring, compacted, absent] = ['expiring', 'compacted', 'absent'].map((t) => m.getLog(t, 0)!);
      expect([expiring!.config.retentionMs, compacted!.config.cleanupPolicy]).toEqual([1000, 'compact']);
      const absentSegments = absent!.segments.length;
      expect(result(await events.next('cleaner', (e) => result(e) !== undefined || errorOf(e) !== undefined))).toBe(compacted!.dir);
      await events.next('retention', () => expiring!.segments.length === 1);
      expect(expiring!.logStartOffset).toBe(expiring!.nextOffset);
      expect(absent!.segments.length).toBe(absentSegments);
      expect(warnings.map((w) => path.basename(w.file!))).toEqual(['absent-0']);
    } finally {
      await m.close();
    }
  });
});

describe('a log its manager schedules', () => {
  it('runs no timer of its own for flush.ms, checkpoints, retention or the cleaner', async () => {
    const logDir = makeTempDir('logtool-sched-own-');
    const { engineTimers, hook } = watchEngineTimers();
    const m = await LogManager.open([logDir], { config: { flushMode: 'async', cleanupPolicy: 'compact,delete' }, schedule: QUIET });
    try {
      const log = m.getOrCreateLog('t', 0);
      await log.append([rec('k', 'v')]);
      const fromFlush = [...engineTimers.values()].filter((t) => t.stack.includes(`${path.sep}flush${path.sep}`));
      hook.disable();
      expect(fromFlush.length).toBe(1); // the write buffer's committer (commit.interval.ms) only
      expect(() => log.startRetention(10)).toThrow(/LogManager's schedule/);
      expect(() => log.startCleaner(10)).toThrow(/LogManager's schedule/);
    } finally {
      hook.disable();
      await m.close();
    }
    // The same log opened alone runs its flush.ms flusher and checkpoint timer.
    const { engineTimers: alone, hook: h2 } = watchEngineTimers();
    const log = Log.open(path.join(logDir, 't-0'), { config: { flushMode: 'async' } });
    h2.disable();
    expect([...alone.values()].filter((t) => t.stack.includes(`${path.sep}flush${path.sep}`)).length).toBe(3);
    await log.close();
  });
});

describe("the schedule in a broker's log directory", () => {
  it('skips a partition whose topic config is unknown with one notice; compacts an internal topic by its built-in config', async () => {
    const logDir = makeTempDir('logtool-sched-broker-');
    const old = Date.now() - 30 * DAY_MS;
    await writePartition(path.join(logDir, 'mystery-0'), 4, { timestamp: old, keys: 5 });
    await writePartition(path.join(logDir, '__consumer_offsets-0'), 4, { keys: 5 });
    fs.writeFileSync(path.join(logDir, 'meta.properties'), 'version=1\nnode.id=1\ncluster.id=abc\n');
    const warnings: LogWarning[] = [];
    const events = new Events();
    const m = await LogManager.open([logDir], { schedule: { ...QUIET, retentionCheckIntervalMs: 10, cleanerBackoffMs: 10 }, onSchedule: events.push, onWarning: (w) => warnings.push(w) });
    try {
      const mystery = m.getLog('mystery', 0)!;
      const segments = mystery.segments.length;
      const offsets = m.getLog('__consumer_offsets', 0)!;
      expect(offsets.config.cleanupPolicy).toBe('compact');
      const cleaned = await events.next('cleaner', (e) => result(e) !== undefined || errorOf(e) !== undefined);
      expect(result(cleaned)).toBe(offsets.dir);
      for (let i = 0; i < 3; i++) await events.next('retention');
      await events.next('cleaner');
      // logtool's defaults (delete, 7 days) would have deleted every old segment of mystery-0.
      expect(mystery.segments.length).toBe(segments);
      expect(mystery.logStartOffset).toBe(0);
      const notices = warnings.filter((w) => w.file === mystery.dir);
      expect(notices.length).toBe(1);
      expect(notices[0]!.message).toMatch(/topic config unknown/);
      expect(warnings.filter((w) => w.file !== mystery.dir)).toEqual([]);
      expect(fs.readFileSync(path.join(logDir, 'cleaner-offset-checkpoint'), 'utf8')).toMatch(/^__consumer_offsets 0 \d+$/m);
    } finally {
      await m.close();
    }
  });
});

/**
 * Every timer the engine creates from now on, unref'd ones included (process.getActiveResourcesInfo()
 * lists only ref'd ones, and the test runner's own timers among them), with the stack that made it;
 * a timer leaves the map when it is cleared or has fired.
 */
function watchEngineTimers() {
  const engineTimers = new Map<number, { stack: string; timer: NodeJS.Timeout }>();
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (type !== 'Timeout') return;
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 8; // the engine's setTimeout/setInterval call is a few frames up
      const stack = new Error().stack ?? '';
      Error.stackTraceLimit = limit;
      if (stack.includes(`${path.sep}src${path.sep}engine${path.sep}`)) engineTimers.set(id, { stack, timer: resource as NodeJS.Timeout });
    },
    destroy: (id) => engineTimers.delete(id),
  });
  hook.enable();
  return { engineTimers, hook };
}

describe('close', () => {
  it('stops every task, waits for the one running, and leaves no timer', async () => {
    await import('../../../src/engine/cleaner/cleaner.js'); // loaded before the hook watches (the cleaner imports it on first use)
    const logDir = makeTempDir('logtool-sched-close-');
    const { engineTimers, hook } = watchEngineTimers();
    const events = new Events();
    const m = await LogManager.open([logDir], {
      config: { flushMode: 'async', flushMs: 1, cleanupPolicy: 'compact,delete', segmentBytes: 1024 },
      schedule: { retentionCheckIntervalMs: 5, flushCheckIntervalMs: 5, checkpointIntervalMs: 5, startOffsetCheckpointIntervalMs: 5, cleanerBackoffMs: 5 },
      onSchedule: events.push,
    });
    const log = m.getOrCreateLog('t', 0);
    for (let i = 0; i < 200; i++) await log.append([rec(`k${i % 3}`, `v${i}`.padEnd(40))]);
    await Promise.all((['retention', 'flush', 'recovery-point-checkpoint', 'log-start-checkpoint', 'cleaner'] as const).map((t) => events.next(t)));
    expect(engineTimers.size).toBeGreaterThan(0);
    expect([...engineTimers.values()].filter((t) => t.timer.hasRef()).map((t) => t.stack)).toEqual([]); // none keeps the process alive
    await m.close();
    const seen = events.all.length;
    await new Promise((r) => setTimeout(r, 20));
    hook.disable();
    expect([...engineTimers.values()].map((t) => t.stack)).toEqual([]);
    expect(events.all.length).toBe(seen);
    expect(events.all.filter((e) => errorOf(e) !== undefined)).toEqual([]);
    expect(fs.existsSync(path.join(logDir, '.kafka_cleanshutdown'))).toBe(true);
  });

  describe('in a child process', () => {
    beforeAll(() => ensureBuilt(), 120_000);

    it('a process that opens a manager with short intervals, lets tasks run and closes it exits by itself', async () => {
      const logDir = makeTempDir('logtool-sched-child-');
      const script = path.join(makeTempDir('logtool-sched-script-'), 'child.mjs');
      fs.writeFileSync(
        script,
        `import { LogManager } from ${JSON.stringify(pathToFileURL(engineEntry).href)};
const seen = new Set();
let done;
const all = new Promise((r) => (done = r));
const m = await LogManager.open([process.argv[2]], {
  config: { flushMode: 'async', flushMs: 1, cleanupPolicy: 'compact', segmentBytes: 1024 },
  schedule: { retentionCheckIntervalMs: 3, flushCheckIntervalMs: 3, checkpointIntervalMs: 3, cleanerBackoffMs: 3 },
  onSchedule: (e) => { if ('error' in e) { console.error(e.error); process.exitCode = 1; } seen.add(e.task); if (seen.size === 5) done(); },
});
const log = m.getOrCreateLog('t', 0);
for (let i = 0; i < 100; i++) await log.append([{ key: Buffer.from('k' + (i % 3)), value: Buffer.from('v'.repeat(40)) }]);
await all;
await m.close();
console.log(JSON.stringify([...seen].sort()));
`,
      );
      const child = spawn(process.execPath, [script, logDir], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      const code = await new Promise<number | string>((resolve) => {
        const bound = setTimeout(() => (child.kill('SIGKILL'), resolve('did not exit within 60 s')), 60_000);
        child.on('exit', (c) => (clearTimeout(bound), resolve(c ?? -1)));
      });
      expect(code, err).toBe(0);
      expect(JSON.parse(out)).toEqual(['cleaner', 'flush', 'log-start-checkpoint', 'recovery-point-checkpoint', 'retention']);
    }, 120_000);
  });
});
