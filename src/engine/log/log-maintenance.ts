/**
 * Background retention and compaction of one partition (Kafka's LogManager retention task and the
 * LogCleaner thread's pass over one log): two periodic tasks (cleaner/periodic-task.ts decides
 * when) acting on the log through a narrow interface, one compaction at a time, and a quiesce for
 * close that waits for any compaction in progress.
 */
import { LogtoolError } from '../errors.js';
import { cleanupPolicy } from '../config.js';
import type { CleanReport, CleanerOptions } from '../cleaner/cleaner.js';
import type { CompactionSchedule } from '../cleaner/schedule.js';
import type { CleanableLog, RetentionReport } from '../cleaner/types.js';
import { PeriodicTask } from '../cleaner/periodic-task.js';
import type { LogWarning } from './log-types.js';

export interface CompactionRound {
  schedule: CompactionSchedule;
  report?: CleanReport;
}

/** What retention and compaction do to the log. */
export interface MaintainedLog extends CleanableLog {
  readonly isClosed: boolean;
  readonly readOnly: boolean;
  applyRetention(): RetentionReport;
  compactionSchedule(opts: { nowMs?: number; fromStart?: boolean }): CompactionSchedule;
  flush(): Promise<void>;
  warn(w: LogWarning): void;
}

/** The log's internals maintenance needs. */
export interface MaintenanceHooks {
  /** Throws when the log is closed, read-only or failed. */
  ensureWritable(): void;
  /** A LogManager runs this log's background schedule. */
  readonly scheduledByOwner: boolean;
  /** segment-changes.ts: the directory removed files are kept in. */
  keepDirFor(keepDir: string | undefined): string | undefined;
}

export class LogMaintenance {
  private readonly log: MaintainedLog;
  /** A compaction is running (background rounds skip meanwhile). */
  private cleaning = false;
  /** The compaction in progress (settles when it ends, never rejects), which close() waits for. */
  private compaction: Promise<void> | undefined;
  private retentionTask: PeriodicTask<RetentionReport> | undefined;
  private cleanerTask: PeriodicTask<CompactionRound> | undefined;
  /** The last error of a background compaction (recorded, never thrown; also sent to warn). */
  cleanerError: unknown;
  /** Background compactions run so far (those the schedule asked for). */
  backgroundCompactions = 0;

  constructor(
    log: MaintainedLog,
    private readonly hooks: MaintenanceHooks,
  ) {
    this.log = log;
  }

  /** A log its LogManager schedules takes no timer of its own (no double scheduling). */
  private refuseOwnSchedule(): void {
    this.hooks.ensureWritable();
    if (this.hooks.scheduledByOwner) throw new LogtoolError('invalid-state', "this log's retention and cleaner run on its LogManager's schedule", { file: this.log.dir });
  }

  /** A compaction is running. */
  get compacting(): boolean {
    return this.cleaning;
  }

  private get busy(): boolean {
    return this.log.isClosed || this.cleaning;
  }

  /** A started schedule of `run` that skips while busy and reports a failed round as a warning. */
  private schedule<R>(intervalMs: number, what: string, run: () => R | Promise<R>, onResult: (r: R) => void, onError: (e: unknown) => void = () => {}): PeriodicTask<R> {
    const log = this.log;
    const task = new PeriodicTask<R>(
      {
        run,
        busy: () => this.busy,
        onResult,
        onError: (e) => {
          onError(e);
          log.warn({ file: log.dir, message: `background ${what} failed: ${(e as Error).message}` });
        },
      },
      intervalMs,
    );
    task.start();
    return task;
  }

  /** The log's own schedule from its options: none when its LogManager schedules it (logdir/manager-schedule.ts) or it is read-only. */
  startOwnSchedule(retentionCheckIntervalMs: number | undefined, cleanerCheckIntervalMs: number | undefined): void {
    if (this.hooks.scheduledByOwner || this.log.readOnly) return;
    if (retentionCheckIntervalMs !== undefined) this.startRetention(retentionCheckIntervalMs);
    if (cleanerCheckIntervalMs !== undefined && cleanupPolicy(this.log.config.cleanupPolicy).compact) this.startCleaner(cleanerCheckIntervalMs);
  }

  startRetention(intervalMs: number, onResult?: (r: RetentionReport) => void): void {
    this.refuseOwnSchedule();
    this.stopRetention();
    this.retentionTask = this.schedule(intervalMs, 'retention', () => this.log.applyRetention(), (r) => onResult?.(r));
  }

  stopRetention(): void {
    void this.retentionTask?.stop();
  }

  startCleaner(intervalMs: number, onResult?: (r: CompactionRound) => void): void {
    this.refuseOwnSchedule();
    this.stopCleaner();
    const onRound = (r: CompactionRound) => {
      if (r.report) this.backgroundCompactions++;
      onResult?.(r);
    };
    this.cleanerTask = this.schedule(intervalMs, 'compaction', () => this.compactIfNeeded(), onRound, (e) => (this.cleanerError = e));
  }

  stopCleaner(): void {
    void this.cleanerTask?.stop();
  }

  /** Log.compactIfNeeded: compacts only when the schedule says so. */
  async compactIfNeeded(opts: CleanerOptions = {}): Promise<CompactionRound> {
    const schedule = this.log.compactionSchedule({ nowMs: opts.nowMs, fromStart: opts.fromStart });
    if (!schedule.needed) return { schedule };
    return { schedule, report: await this.compact({ nowMs: schedule.nowMs, ...opts }) };
  }

  /** Log.compact: one compaction by the cleaner's rules (cleaner/cleaner.ts). */
  async compact(opts: CleanerOptions): Promise<CleanReport> {
    const log = this.log;
    if (!opts.dryRun) this.hooks.ensureWritable();
    if (log.isClosed) throw new LogtoolError('closed', 'log is closed', { file: log.dir });
    return this.compactOnce(async () => {
      // Sealed segments and their indexes durable before they are read and replaced.
      if (!log.readOnly) await log.flush();
      // The cleaner's modules load on the first compaction: a log that is only read or appended to never loads them.
      const { cleanLog } = await import('../cleaner/cleaner.js');
      return cleanLog(log, { deleteDelayMs: log.config.fileDeleteDelayMs, ...opts, keepRemovedDir: this.hooks.keepDirFor(opts.keepRemovedDir) });
    });
  }

  /** Runs one compaction, refusing a second while one runs; quiesce() waits for it. */
  private compactOnce(run: () => Promise<CleanReport>): Promise<CleanReport> {
    if (this.cleaning) throw new LogtoolError('invalid-state', 'a compaction of this log is already running', { file: this.log.dir });
    this.cleaning = true;
    const running = (async () => {
      try {
        return await run();
      } finally {
        this.cleaning = false;
      }
    })();
    this.compaction = running.then(
      () => undefined,
      () => undefined,
    );
    return running;
  }

  /**
   * For close: stops both schedules, then waits for a compaction in progress (background or
   * foreground, a dry run included), so nothing reads a closed segment or changes a file once the
   * lock is released.
   */
  async quiesce(): Promise<void> {
    this.stopRetention();
    await this.cleanerTask?.stop();
    while (this.compaction && this.cleaning) await this.compaction;
  }

  /** abandon(): the timers stop, nothing is waited for. */
  stopAll(): void {
    this.stopCleaner();
    this.stopRetention();
  }
}
