/**
 * What a LogManager's scheduled tasks do (the *how* of manager-schedule.ts), after Kafka's
 * LogManager.cleanupLogs / flushDirtyLogs / checkpointLogRecoveryOffsets /
 * checkpointLogStartOffsets and LogCleanerManager.grabFilthiestCompactedLog:
 *
 * - retention: every writable log whose topic config is known (skipped while it is compacted);
 * - flush: each log whose flush.ms has passed since the manager last flushed it, when it holds
 *   unflushed data (Kafka's flush(false): data only; the checkpoints are their own tasks);
 * - checkpoints: per log directory one rewrite of the file from every log it holds, only when an
 *   entry changed (a round that changes nothing writes nothing);
 * - cleaner: among the compacted logs (cleanup.policy contains compact) with a known config, not
 *   being compacted and not marked uncleanable, those the cleaner schedule says need it
 *   (cleaner/schedule.ts: dirty ratio > min.cleanable.dirty.ratio, or max.compaction.lag.ms
 *   passed); the one with the highest dirty ratio is compacted, one at a time. A log whose
 *   compaction fails is uncleanable until it is opened again (Kafka's uncleanablePartitions).
 *
 * In a broker's log directory a partition whose topic config is unknown (topic-configs.ts) gets no
 * retention and no compaction, and one notice the first time a task passes it, never defaulted.
 */
import type { FileIO } from '../io.js';
import { cleanupPolicy } from '../config.js';
import { LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT } from '../checkpoint.js';
import type { Log } from '../log/log.js';
import type { LogWarning } from '../log/log-types.js';
import type { CompactionSchedule } from '../cleaner/schedule.js';
import { updateDirCheckpointEntriesAsync } from './dir-checkpoints.js';
import type { ScheduledWork } from './manager-schedule.js';
import { UNKNOWN_CONFIG_NOTICE } from './topic-configs.js';

/** One log the manager holds. */
export interface ManagedLog {
  log: Log;
  /** Its `<topic> <partition>` checkpoint key. */
  key: string;
  /** False in a broker's directory when the topic config is unknown. */
  configKnown: boolean;
}

/** The manager as its tasks see it. */
export interface ManagedLogs {
  readonly io: FileIO;
  /** The open logs (none once the manager closes). */
  managed(): ManagedLog[];
  warn(w: LogWarning): void;
}

export class ManagerWork implements ScheduledWork {
  private readonly noticed = new Set<Log>();
  private readonly uncleanable = new Set<Log>();
  private readonly lastFlushMs = new Map<Log, number>();

  constructor(private readonly host: ManagedLogs) {}

  /** Writable, open logs whose config is known; one notice for each whose config is not. */
  private maintainable(): Log[] {
    const out: Log[] = [];
    for (const m of this.writable()) {
      if (m.configKnown) out.push(m.log);
      else if (!this.noticed.has(m.log)) {
        this.noticed.add(m.log);
        this.host.warn({ file: m.log.dir, message: `retention and compaction skipped: ${UNKNOWN_CONFIG_NOTICE} (LogManagerOptions.config)` });
      }
    }
    return out;
  }

  private writable(): ManagedLog[] {
    return this.host.managed().filter((m) => !m.log.readOnly && !m.log.isClosed);
  }

  async retainAll(): Promise<number> {
    let deleted = 0;
    for (const log of this.maintainable()) {
      if (log.isClosed || log.isCompacting) continue;
      try {
        deleted += log.applyRetention().deleted.length;
      } catch (e) {
        this.host.warn({ file: log.dir, message: `scheduled retention failed: ${(e as Error).message}` });
      }
      await turn(); // one log at a time, the event loop served between them
    }
    return deleted;
  }

  async flushDue(nowMs: number): Promise<number> {
    let flushed = 0;
    const live = new Set<Log>();
    for (const { log } of this.writable()) {
      live.add(log);
      const last = this.lastFlushMs.get(log);
      if (last === undefined) this.lastFlushMs.set(log, nowMs);
      if (last === undefined || nowMs - last < log.config.flushMs) continue;
      const p = log.positions();
      if (p.flushed.offset >= p.written.offset) continue; // Kafka's lastFlushTime moves only when a flush does
      try {
        await log.flush({ checkpoint: false });
      } catch (e) {
        // A log closed meanwhile (deletePartition) has nothing left to flush; a failed one refuses appends from now on.
        if (!log.isClosed) this.host.warn({ file: log.dir, message: `scheduled flush failed: ${(e as Error).message}` });
        continue;
      }
      this.lastFlushMs.set(log, nowMs);
      flushed++;
    }
    for (const log of this.lastFlushMs.keys()) if (!live.has(log)) this.lastFlushMs.delete(log);
    return flushed;
  }

  async writeCheckpoints(kind: 'recovery-point' | 'log-start'): Promise<number> {
    const byDir = new Map<string, ManagedLog[]>();
    for (const m of this.writable()) byDir.set(m.log.logDir, [...(byDir.get(m.log.logDir) ?? []), m]);
    const name = kind === 'recovery-point' ? RECOVERY_POINT_CHECKPOINT : LOG_START_OFFSET_CHECKPOINT;
    let written = 0;
    for (const [logDir, logs] of byDir) {
      const noted = new Map<Log, number>();
      const entries = () => {
        // Read under the directory's lock: a log closed (deleted) meanwhile keeps the entry its close left.
        const m = new Map<string, number | undefined>();
        for (const { log, key } of logs) {
          if (log.isClosed) continue;
          if (kind === 'log-start') {
            m.set(key, log.logStartOffsetToCheckpoint);
            continue;
          }
          const rp = log.positions().recoveryPoint;
          m.set(key, rp);
          noted.set(log, rp);
        }
        return m;
      };
      if (await updateDirCheckpointEntriesAsync(this.host.io, logDir, name, entries)) written++;
      for (const [log, rp] of noted) log.noteRecoveryPointCheckpointed(rp);
    }
    return written;
  }

  async cleanDirtiest(nowMs: number): Promise<string | undefined> {
    let dirtiest: { log: Log; schedule: CompactionSchedule } | undefined;
    for (const log of this.maintainable()) {
      if (this.uncleanable.has(log) || log.isCompacting || !cleanupPolicy(log.config.cleanupPolicy).compact) continue;
      let schedule: CompactionSchedule;
      try {
        schedule = log.compactionSchedule({ nowMs });
      } catch (e) {
        this.markUncleanable(log, e);
        continue;
      }
      if (schedule.needed && (!dirtiest || schedule.dirtyRatio > dirtiest.schedule.dirtyRatio)) dirtiest = { log, schedule };
    }
    if (!dirtiest) return undefined;
    const { log } = dirtiest;
    try {
      await log.compact({ nowMs });
    } catch (e) {
      if (log.isClosed) return undefined; // closed under it (deletePartition): nothing to mark
      this.uncleanable.add(log); // until it is opened again; the schedule reports the error
      throw e;
    }
    return log.dir;
  }

  private markUncleanable(log: Log, e: unknown): void {
    this.uncleanable.add(log);
    this.host.warn({ file: log.dir, message: `the cleaner skips this partition until it is opened again: ${(e as Error).message}` });
  }
}

const turn = () => new Promise<void>((r) => setImmediate(r));
