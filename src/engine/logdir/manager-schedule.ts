/**
 * When a LogManager's background work runs (Kafka's LogManager.startup scheduler: the
 * kafka-log-retention, kafka-log-flusher, kafka-recovery-point-checkpoint and
 * kafka-log-start-offset-checkpoint tasks, and the LogCleaner thread's log.cleaner.backoff.ms),
 * shaped like flush/group-commit.ts: this file decides only *when*; the manager acts through a
 * narrow interface (ScheduledWork), so a log never schedules what its manager schedules.
 *
 * Rules: every task repeats at its interval on unref'd timers (cleaner/periodic-task.ts: fixed
 * cadence, never keeps the process alive); one run of a task at a time (a tick that finds the
 * previous run still going is skipped); a failed run is reported to onEvent, never thrown or left
 * as an unhandled rejection, and the task keeps going; stop() cancels every timer and settles
 * when the runs in progress have ended. An interval above the largest timer delay (Kafka's
 * Long.MAX_VALUE "never", Infinity) leaves that task unscheduled.
 */
import { assert } from '../errors.js';
import { PeriodicTask, realClock, type ScheduleClock } from '../cleaner/periodic-task.js';

/** The manager's intervals, by Kafka's broker config names; defaults are Kafka's (flush: see below). */
export interface ScheduleIntervals {
  /** log.retention.check.interval.ms: retention of every log (default 300 000). */
  retentionCheckIntervalMs?: number;
  /**
   * log.flush.scheduler.interval.ms: how often logs whose flush.ms has passed are flushed. Kafka's
   * default is never (Long.MAX_VALUE); logtool's flush.ms defaults to 1 s, so this defaults to 1 000.
   */
  flushCheckIntervalMs?: number;
  /** log.flush.offset.checkpoint.interval.ms: recovery-point-offset-checkpoint (default 60 000). */
  checkpointIntervalMs?: number;
  /** log.flush.start.offset.checkpoint.interval.ms: log-start-offset-checkpoint (default checkpointIntervalMs, 60 000). */
  startOffsetCheckpointIntervalMs?: number;
  /** log.cleaner.backoff.ms: how often the cleaner looks for the dirtiest compacted log (default 15 000). */
  cleanerBackoffMs?: number;
}

export const DEFAULT_INTERVALS: Required<ScheduleIntervals> = {
  retentionCheckIntervalMs: 300_000,
  flushCheckIntervalMs: 1_000,
  checkpointIntervalMs: 60_000,
  startOffsetCheckpointIntervalMs: 60_000,
  cleanerBackoffMs: 15_000,
};

/** The largest delay a Node timer takes (a larger one fires at once). */
const MAX_TIMER_MS = 0x7fffffff;

export type ScheduledTaskName = 'retention' | 'flush' | 'recovery-point-checkpoint' | 'log-start-checkpoint' | 'cleaner';

/** What the manager does for each task (the *how*). Each may be asynchronous. */
export interface ScheduledWork {
  /** Applies retention to every log whose config is known; returns the segments deleted. */
  retainAll(): Promise<number>;
  /** Flushes the logs whose flush.ms has passed since their last flush; returns how many. */
  flushDue(nowMs: number): Promise<number>;
  /** Rewrites one kind of directory checkpoint where an entry changed; returns the files written. */
  writeCheckpoints(kind: 'recovery-point' | 'log-start'): Promise<number>;
  /** Compacts the dirtiest compacted log that needs it, if any; returns its directory. */
  cleanDirtiest(nowMs: number): Promise<string | undefined>;
}

export type ScheduleEvent = { task: ScheduledTaskName; result: number | string | undefined } | { task: ScheduledTaskName; error: unknown };

export class ManagerSchedule {
  private readonly tasks: PeriodicTask<number | string | undefined>[] = [];
  private stopped = false;

  constructor(work: ScheduledWork, intervals: ScheduleIntervals, onEvent: (e: ScheduleEvent) => void, clock: ScheduleClock = realClock) {
    const given = definedOnly(intervals);
    const ms = { ...DEFAULT_INTERVALS, startOffsetCheckpointIntervalMs: given.checkpointIntervalMs ?? DEFAULT_INTERVALS.startOffsetCheckpointIntervalMs, ...given };
    const plan: [ScheduledTaskName, number, () => Promise<number | string | undefined>][] = [
      ['retention', ms.retentionCheckIntervalMs, () => work.retainAll()],
      ['flush', ms.flushCheckIntervalMs, () => work.flushDue(clock.nowMs())],
      ['recovery-point-checkpoint', ms.checkpointIntervalMs, () => work.writeCheckpoints('recovery-point')],
      ['log-start-checkpoint', ms.startOffsetCheckpointIntervalMs, () => work.writeCheckpoints('log-start')],
      ['cleaner', ms.cleanerBackoffMs, () => work.cleanDirtiest(clock.nowMs())],
    ];
    for (const [task, intervalMs, run] of plan) {
      assert(typeof intervalMs === 'number' && intervalMs > 0, `${task}: a schedule interval must be a positive number of ms, not ${intervalMs}`);
      if (intervalMs > MAX_TIMER_MS) continue;
      const report = (e: ScheduleEvent) => {
        if (!this.stopped || 'error' in e) onEvent(e);
      };
      this.tasks.push(new PeriodicTask({ run, onResult: (result) => report({ task, result }), onError: (error) => report({ task, error }) }, intervalMs, clock));
    }
  }

  /** The tasks scheduled (those whose interval is not "never"). */
  get taskCount(): number {
    return this.tasks.length;
  }

  start(): void {
    for (const t of this.tasks) t.start();
  }

  /** Cancels every timer; settles (never rejects) when the runs in progress have ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.tasks.map((t) => t.stop()));
  }
}

function definedOnly(intervals: ScheduleIntervals): ScheduleIntervals {
  return Object.fromEntries(Object.entries(intervals).filter(([, v]) => v !== undefined)) as ScheduleIntervals;
}
