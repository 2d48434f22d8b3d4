/**
 * Kafka's LogManager (core/src/main/scala/kafka/log/LogManager.scala) over one or more log
 * directories (`log.dirs`): per directory it validates (or creates) it (log-dir-validation.ts),
 * takes the broker lock (broker-lock.ts), checks that the shared checkpoints can be read (dir-checkpoints.ts), and loads
 * every partition with a bounded pool (Kafka's num.recovery.threads.per.data.dir). The
 * clean-shutdown marker is read once per directory and written on close by clean-shutdown.ts's
 * rule (the manager opens every partition, so it may vouch for the directory).
 *
 * Recovery after an unclean shutdown runs on worker threads (pooled-load.ts); each partition is
 * then opened on this thread in name order, so the result is the same for every pool size.
 * A writable manager runs Kafka's background schedule over its logs (manager-schedule.ts decides
 * when, manager-work.ts does it; the logs run no timers of their own), with each partition's
 * topic configs by topic-configs.ts's rule in a broker's directory.
 * Descriptors stay bounded whatever the number of partitions (issue 12): one cache of segment
 * descriptors shared by every log (`maxOpenFiles`, segment/fd-cache.ts), and one writer lock per log
 * directory instead of one per partition (log/lock.ts).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { realIO, removeTree, type FileIO } from '../io.js';
import { InvalidArgumentError, LogtoolError } from '../errors.js';
import { Log, type LogOptions } from '../log/log.js';
import { DirectoryLock } from '../log/lock.js';
import { FileDescriptorCache } from '../segment/fd-cache.js';
import { parseTopicPartition, requireValidTopicName } from '../log/topic-partition.js';
import type { LoadOptions } from '../recovery/load-report.js';
import type { LogWarning } from '../log/log-types.js';
import type { LogConfig } from '../config.js';
import { LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, tpKey } from '../checkpoint.js';
import { BrokerLock } from './broker-lock.js';
import { requireWritableCheckpoints, updateDirCheckpoint } from './dir-checkpoints.js';
import type { LogDirEntry } from './entries.js';
import { partitionNamesByKey, planPartitions, readDirectorySnapshot, validateLogDir } from './log-dir-validation.js';
import { loadOnWorkers, recoversOnWorkers } from './pooled-load.js';
import { ManagerSchedule, type ScheduleEvent, type ScheduleIntervals } from './manager-schedule.js';
import { ManagerWork } from './manager-work.js';
import { partitionConfigWith } from './topic-configs.js';

export interface LogManagerOptions {
  /** Open every partition read-only: no lock, nothing changes on disk (default false). */
  readOnly?: boolean;
  /** Create missing log directories (writable opens; default true). */
  create?: boolean;
  /** Partitions loaded at once per log directory (Kafka's num.recovery.threads.per.data.dir; default 2). */
  recoveryThreadsPerDataDir?: number;
  /** Topic configs for every log (merged over each partition's logtool.properties and the defaults). */
  config?: Partial<LogConfig>;
  /** Delay between renaming a deleted partition to `-delete` and removing it (default file.delete.delay.ms of `config`, 60 000). */
  fileDeleteDelayMs?: number;
  /** After each partition is loaded: how many of this directory's are done. */
  onProgress?: (p: LoadProgressEvent) => void;
  onWarning?: (w: LogWarning) => void;
  /** Options passed to every Log.open (recovery knobs …); the manager schedules each log's background work. */
  logOptions?: Omit<
    LogOptions,
    'readOnly' | 'io' | 'onWarning' | 'config' | 'create' | 'retentionCheckIntervalMs' | 'cleanerCheckIntervalMs' | 'thoroughFlushIntervalMs' | 'scheduledByOwner' | 'maxOpenFiles' | 'fileDescriptorCache' | 'underLogDirLock'
  >;
  /** The background schedule's intervals (writable managers; Kafka's defaults), or false for none (each log then keeps its own flush timers). */
  schedule?: ScheduleIntervals | false;
  /** Each scheduled task's result or error (errors also go to onWarning). */
  onSchedule?: (e: ScheduleEvent) => void;
  io?: FileIO;
  /** Most descriptors of segment files open at once, for all logs together (default 512). */
  maxOpenFiles?: number;
}

export interface LoadProgressEvent {
  logDir: string;
  partition: string;
  done: number;
  total: number;
  /** The partition was recovered on a worker thread (then opened here). */
  recoveredOnWorker: boolean;
}

interface DirState {
  dir: string;
  /** The checkpoints read once at open for every partition's load (undefined: each reads its own). */
  snapshot: LoadOptions['directory'];
  /** The names in the directory that parse as each partition (`t-1`, `t-01` …), for the loader's ambiguity check. */
  namesByPartition: Map<string, string[]>;
  lock: BrokerLock | undefined;
  /** Writable: this manager's writer lock on the whole directory (log/lock.ts). */
  writerLock: DirectoryLock | undefined;
  isBroker: boolean;
  /** Partition directory names held by this directory (open logs). */
  partitions: Set<string>;
}

function requirePartitionNumber(partition: number): void {
  if (!Number.isSafeInteger(partition) || partition < 0 || partition > 0x7fffffff) throw new LogtoolError('invalid-argument', `invalid partition number ${partition}`);
}

/** Kafka's LocalLog.logDeleteDirName: `<topic>-<partition>.<uuid without dashes>-delete`, the topic cut to keep 255 characters. */
export function deleteDirName(topic: string, partition: number): string {
  const suffix = `-${partition}.${randomUUID().replaceAll('-', '')}-delete`;
  return `${topic.slice(0, Math.min(topic.length, 255 - suffix.length))}${suffix}`;
}

export class LogManager {
  private readonly dirs: DirState[];
  private readonly logsByKey = new Map<string, { log: Log; dir: DirState }>();
  private readonly pendingRemovals = new Map<NodeJS.Timeout, () => void>();
  /** Partitions (tpKey) of a broker's directory whose topic config is unknown: no retention, no compaction. */
  private readonly unknownConfig = new Set<string>();
  private schedule: ManagerSchedule | undefined;
  private closed = false;
  private readonly files: FileDescriptorCache;

  private constructor(
    dirs: DirState[],
    private readonly options: LogManagerOptions,
    private readonly io: FileIO,
  ) {
    this.dirs = dirs;
    this.files = new FileDescriptorCache(io, options.maxOpenFiles);
  }

  /** Opens every log directory and loads every partition in them (see the file comment). */
  static async open(logDirs: readonly string[], options: LogManagerOptions = {}): Promise<LogManager> {
    if (logDirs.length === 0) throw new InvalidArgumentError(['logDirs'], 'give at least one log directory');
    const io = options.io ?? realIO;
    const threads = options.recoveryThreadsPerDataDir ?? 2;
    if (!Number.isSafeInteger(threads) || threads < 1) throw new InvalidArgumentError(['recoveryThreadsPerDataDir'], `recoveryThreadsPerDataDir must be a positive integer, not ${threads}`);
    const resolved = [...new Set(logDirs.map((d) => path.resolve(d)))];
    const states: DirState[] = [];
    const manager = new LogManager(states, options, io);
    try {
      for (const dir of resolved) states.push(await manager.openDir(dir));
      const seen = new Map<string, string>();
      const plans = states.map((s) => planPartitions(io, s.dir, seen));
      for (let i = 0; i < states.length; i++) await manager.loadDir(states[i]!, plans[i]!, threads);
      manager.startSchedule();
    } catch (e) {
      await manager.close().catch(() => undefined);
      throw e;
    }
    return manager;
  }

  /** Validates (or creates) one log directory and, for writing, takes its broker lock. */
  private async openDir(dir: string): Promise<DirState> {
    const { io, options } = this;
    const { created, isBroker, entries } = validateLogDir(io, dir, options);
    const state: DirState = { dir, snapshot: undefined, namesByPartition: new Map(), lock: undefined, writerLock: undefined, isBroker, partitions: new Set() };
    if (!options.readOnly) {
      state.lock = await BrokerLock.acquire(dir, io, { create: created });
      try {
        state.writerLock = DirectoryLock.holdLogDir(dir);
        requireWritableCheckpoints(io, dir);
        if (!isBroker) this.finishInterruptedDeletions(dir, entries);
      } catch (e) {
        state.writerLock?.release();
        await state.lock.release();
        throw e;
      }
    }
    state.snapshot = readDirectorySnapshot(io, dir);
    state.namesByPartition = partitionNamesByKey(io, dir);
    return state;
  }

  /** In logtool's own directories, `-delete` directories a crash left are removed now (a broker's are the broker's). */
  private finishInterruptedDeletions(dir: string, entries: LogDirEntry[]): void {
    for (const e of entries) if (e.kind === 'delete' && e.isDirectory) removeTree(this.io, path.join(dir, e.name));
    if (entries.some((e) => e.kind === 'delete' && e.isDirectory)) this.io.syncDir(dir);
  }

  /**
   * Loads one directory's partitions, results kept in name order. Recovery after an unclean
   * shutdown runs on `threads` worker threads (pooled-load.ts); other loads run here, at most
   * `threads` in flight between turns of the event loop.
   */
  private async loadDir(state: DirState, parts: LogDirEntry[], threads: number): Promise<void> {
    const logs: (Log | undefined)[] = new Array(parts.length);
    let next = 0;
    let done = 0;
    let failure: unknown;
    const snapshotOf = (i: number) => {
      const tp = parts[i]!.topicPartition!;
      return state.snapshot && { ...state.snapshot, names: state.namesByPartition.get(tpKey(tp.topic, tp.partition)) ?? [] };
    };
    const opened = (i: number, log: Log, recoveredOnWorker = false) => {
      logs[i] = log;
      this.options.onProgress?.({ logDir: state.dir, partition: parts[i]!.name, done: ++done, total: parts.length, recoveredOnWorker });
    };
    const { logOptions } = this.options;
    const plan = {
      logDir: state.dir,
      partitionDirs: parts.map((e) => path.join(state.dir, e.name)),
      threads,
      io: this.io,
      job: { discardLost: logOptions?.discardLost ?? false, forceRecoverAll: logOptions?.recovery?.forceRecoverAll ?? false },
    };
    const worker = async () => {
      while (failure === undefined && next < parts.length) {
        const i = next++;
        try {
          opened(i, this.openLog(plan.partitionDirs[i]!, false, snapshotOf(i)));
        } catch (err) {
          failure ??= err;
          return;
        }
        await new Promise<void>((r) => setImmediate(r));
      }
    };
    if (!this.options.readOnly && state.snapshot && !logOptions?.recovery?.onProgress && recoversOnWorkers(plan)) {
      await loadOnWorkers({ ...plan, directory: snapshotOf, config: (i) => this.topicConfig(plan.partitionDirs[i]!), onWarning: this.options.onWarning, open: (i, loaded) => opened(i, this.openLog(plan.partitionDirs[i]!, false, snapshotOf(i), loaded), true) }).catch((e) => (failure = e));
    } else await Promise.all(Array.from({ length: Math.min(threads, Math.max(1, parts.length)) }, worker));
    for (let i = 0; i < parts.length; i++) {
      const log = logs[i];
      if (!log) continue;
      const tp = parts[i]!.topicPartition!;
      this.logsByKey.set(tpKey(tp.topic, tp.partition), { log, dir: state });
      state.partitions.add(parts[i]!.name);
    }
    if (failure !== undefined) throw failure;
  }

  private openLog(dir: string, create = false, directory?: LoadOptions['directory'], loaded?: Pick<LoadOptions, 'recovered' | 'directoryMarker'>): Log {
    const { options } = this;
    return Log.open(dir, {
      ...options.logOptions,
      retentionCheckIntervalMs: undefined,
      cleanerCheckIntervalMs: undefined,
      scheduledByOwner: !options.readOnly && options.schedule !== false,
      recovery: { ...options.logOptions?.recovery, directory, ...loaded },
      io: this.io,
      readOnly: options.readOnly ?? false,
      create,
      config: this.topicConfig(dir),
      rememberConfig: false,
      onWarning: options.onWarning,
      fileDescriptorCache: this.files,
      underLogDirLock: !options.readOnly,
    });
  }

  /**
   * The configs a writable open gives a partition: in a broker's directory by topic-configs.ts's
   * rule (unknown: noted, opened with the given ones, never maintained); elsewhere the given ones.
   */
  private topicConfig(dir: string): Partial<LogConfig> | undefined {
    const given = this.options.config;
    const tp = parseTopicPartition(dir);
    if (this.options.readOnly || !tp) return given;
    const pc = partitionConfigWith(this.io, dir, tp.topic, given ?? {});
    if (!('skip' in pc)) return pc.broker ? pc.config : given;
    this.unknownConfig.add(tpKey(tp.topic, tp.partition));
    return given;
  }

  /** Starts the background schedule of a writable manager (none when `schedule` is false). */
  private startSchedule(): void {
    const { options } = this;
    if (options.readOnly || options.schedule === false) return;
    const work = new ManagerWork({
      io: this.io,
      managed: () => (this.closed ? [] : [...this.logsByKey].map(([key, { log }]) => ({ log, key, configKnown: !this.unknownConfig.has(key) }))),
      warn: (w) => options.onWarning?.(w),
    });
    this.schedule = new ManagerSchedule(work, options.schedule ?? {}, (e) => {
      if ('error' in e) options.onWarning?.({ file: this.logDirs.join(', '), message: `scheduled ${e.task} failed: ${(e.error as Error).message}` });
      options.onSchedule?.(e);
    });
    this.schedule.start();
  }

  /** The log directories, in the order given. */
  get logDirs(): string[] {
    return this.dirs.map((d) => d.dir);
  }

  /** Every open log, by log directory then topic and partition. */
  allLogs(): Log[] {
    return [...this.logsByKey.values()].map((v) => v.log);
  }

  getLog(topic: string, partition: number): Log | undefined {
    return this.logsByKey.get(tpKey(topic, partition))?.log;
  }

  private ensureWritable(): void {
    if (this.closed) throw new LogtoolError('closed', 'the log manager is closed');
    if (this.options.readOnly) throw new LogtoolError('invalid-state', 'the log manager was opened read-only');
  }

  /**
   * The partition's log, created when missing in the log directory holding the fewest partitions
   * (Kafka's rule; the first given wins a tie). The topic name is checked as Kafka checks it.
   */
  getOrCreateLog(topic: string, partition: number): Log {
    requireValidTopicName(topic);
    requirePartitionNumber(partition);
    const existing = this.getLog(topic, partition);
    if (existing) return existing;
    this.ensureWritable();
    let target = this.dirs[0]!;
    for (const d of this.dirs) if (d.partitions.size < target.partitions.size) target = d;
    const name = `${topic}-${partition}`;
    const log = this.openLog(path.join(target.dir, name), true);
    this.logsByKey.set(tpKey(topic, partition), { log, dir: target });
    target.partitions.add(name);
    return log;
  }

  /**
   * Deletes a partition as Kafka does: closes its log, renames its directory to
   * `<topic>-<partition>.<uuid>-delete` (durably), drops its checkpoint entries, and removes the
   * directory after fileDeleteDelayMs. A crash in between is completed by the next writable open
   * of a logtool directory. Returns the `-delete` path.
   */
  async deletePartition(topic: string, partition: number): Promise<string> {
    this.ensureWritable();
    const key = tpKey(topic, partition);
    const held = this.logsByKey.get(key);
    if (!held) throw new LogtoolError('not-found', `no partition ${partition} of topic ${topic} in ${this.logDirs.join(', ')}`);
    const { log, dir } = held;
    await log.close();
    this.logsByKey.delete(key);
    this.unknownConfig.delete(key);
    const name = path.basename(log.dir);
    dir.partitions.delete(name);
    const doomed = path.join(dir.dir, deleteDirName(topic, partition));
    this.io.rename(log.dir, doomed);
    this.io.syncDir(dir.dir);
    for (const cp of [RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT]) updateDirCheckpoint(this.io, dir.dir, cp, key, undefined);
    const remove = () => removeTree(this.io, doomed);
    const delayMs = this.options.fileDeleteDelayMs ?? this.options.config?.fileDeleteDelayMs ?? 60_000;
    if (delayMs <= 0) remove();
    else {
      const t = setTimeout(() => {
        this.pendingRemovals.delete(t);
        try {
          remove();
        } catch (e) {
          this.options.onWarning?.({ file: doomed, message: `removing the deleted partition failed: ${(e as Error).message}; the next open removes it` });
        }
      }, delayMs);
      t.unref();
      this.pendingRemovals.set(t, remove);
    }
    return doomed;
  }

  /**
   * Stops the schedule and waits for a task in progress, then closes every log (each writes its
   * checkpoints; the last of a directory writes the marker when the directory is consistent),
   * removes partitions waiting for deletion, releases the locks. Nothing stays scheduled. The
   * first failure is the one reported, after everything was closed.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.schedule?.stop();
    let firstError: unknown;
    for (const { log } of this.logsByKey.values()) {
      try {
        await log.close();
      } catch (e) {
        firstError ??= e;
      }
    }
    this.logsByKey.clear();
    for (const [t, remove] of this.pendingRemovals) {
      clearTimeout(t);
      try {
        remove();
      } catch (e) {
        firstError ??= e;
      }
    }
    this.pendingRemovals.clear();
    try {
      this.files.closeAll();
    } catch (e) {
      firstError ??= e;
    }
    for (const d of this.dirs) {
      try {
        d.writerLock?.release();
        await d.lock?.release();
      } catch (e) {
        firstError ??= e;
      }
    }
    if (firstError !== undefined) throw firstError;
  }
}
