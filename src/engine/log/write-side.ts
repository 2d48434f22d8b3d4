/**
 * The write side of one partition wired together (Kafka's UnifiedLog holding its LocalLog and the
 * flush scheduling): the append path commits through the roller into the segment list, a roll
 * tells the flush glue what to sync, and the flush pipeline (flush/group-commit.ts) decides when
 * the append path commits and the flush glue syncs. Read-only logs get no pipeline.
 */
import type { FileIO } from '../io.js';
import type { LogConfig } from '../config.js';
import { FlushPipeline } from '../flush/group-commit.js';
import { preallocationPolicy } from '../segment/preallocation.js';
import type { LogSegments } from './log-segments.js';
import { AppendPath } from './append-path.js';
import { Roller } from './roll.js';
import { LogFlusher } from './log-flush.js';
import type { LogPositions } from './log-types.js';

export interface WriteSideHost {
  readonly io: FileIO;
  readonly dir: string;
  readonly config: LogConfig;
  readonly readOnly: boolean;
  readonly segments: LogSegments;
  /** Throws when the log is closed, read-only or failed. */
  ensureWritable(): void;
  /** A flush made everything below offset durable. */
  advanceRecoveryPoint(offset: number): void;
  /** Persists the recovery point when it changed; returns the fsyncs issued. */
  checkpointRecoveryPoint(): Promise<number>;
  /** A roll created the segment at newBaseOffset (Kafka takes a producer snapshot there). */
  onRolled?(newBaseOffset: number): void;
  /** fdatasync of the producer snapshots rolls wrote; returns the fsyncs issued. */
  syncRolledSnapshots?(): Promise<number>;
}

export interface WriteSide {
  appender: AppendPath;
  roller: Roller;
  flusher: LogFlusher;
  pipeline: FlushPipeline | undefined;
}

export function wireWriteSide(host: WriteSideHost, nextOffset: number, thoroughFlushIntervalMs: number | undefined, ownerSchedules = false): WriteSide {
  const { io, dir, config, readOnly, segments } = host;
  let pipeline: FlushPipeline | undefined;
  const parts = { io, dir, config, readOnly, segments };
  const flusher: LogFlusher = new LogFlusher(
    {
      ...parts,
      committed: () => ({ bytes: appender.committedTotal, offset: appender.committedNextOffset }),
      advanceRecoveryPoint: (offset) => host.advanceRecoveryPoint(offset),
      checkpointRecoveryPoint: () => host.checkpointRecoveryPoint(),
      syncRolledSnapshots: () => host.syncRolledSnapshots?.() ?? Promise.resolve(0),
    },
    nextOffset,
  );
  const roller = new Roller({
    ...parts,
    committedEndOffset: () => appender.committedNextOffset,
    onSealed: (sealed) => flusher.noteSealed(sealed),
    onRolled: () => {
      host.onRolled?.(segments.active.baseOffset);
      flusher.noteDirChanged();
      // Kafka flushes the sealed segment asynchronously after a roll; so do we.
      pipeline?.requestFlush();
    },
  });
  const appender: AppendPath = new AppendPath({ ...parts, roller, ensureWritable: () => host.ensureWritable() }, nextOffset);
  if (!readOnly) {
    segments.active.preallocate(preallocationPolicy(config));
    pipeline = new FlushPipeline(
      {
        commitBuffered: () => appender.commitBuffered(),
        bufferedBytes: () => appender.writeBufferBytes,
        committedBytes: () => appender.committedTotal,
        flushCommitted: () => flusher.flushCommitted(),
        flushCommittedBlocking: () => flusher.flushActiveBlocking(),
        thoroughFlush: () => flusher.thoroughFlush(),
        onBackgroundError: (e) => appender.fail(e),
      },
      config,
      { thoroughFlushIntervalMs, ownerSchedules },
    );
    appender.attach(pipeline);
  }
  return { appender, roller, flusher, pipeline };
}

/** The recovery point's rules (log-checkpoints.ts). */
interface RecoveryPoints {
  advanceRecoveryPoint(offset: number): void;
  checkpointRecoveryPointIfChanged(): Promise<number>;
}

/** Producer snapshots rolls take (partition-state/snapshot-keeper.ts). */
interface RollSnapshots {
  onRolled(newBaseOffset: number): unknown;
  syncRolled(): Promise<number>;
}

/** A Log's write side: flushes advance its checkpoints' recovery point, rolls take producer snapshots. */
export function wireLogWriteSide(
  log: Pick<WriteSideHost, 'io' | 'dir' | 'config' | 'readOnly'>,
  segments: LogSegments,
  ensureWritable: () => void,
  checkpoints: RecoveryPoints,
  snapshots: RollSnapshots | undefined,
  init: { nextOffset: number; thoroughFlushIntervalMs?: number; scheduledByOwner?: boolean },
): WriteSide {
  const host: WriteSideHost = {
    io: log.io,
    dir: log.dir,
    config: log.config,
    readOnly: log.readOnly,
    segments,
    ensureWritable,
    advanceRecoveryPoint: (offset) => checkpoints.advanceRecoveryPoint(offset),
    checkpointRecoveryPoint: () => checkpoints.checkpointRecoveryPointIfChanged(),
    onRolled: (newBaseOffset) => snapshots?.onRolled(newBaseOffset),
    syncRolledSnapshots: () => snapshots?.syncRolled() ?? Promise.resolve(0),
  };
  return wireWriteSide(host, init.nextOffset, init.thoroughFlushIntervalMs, init.scheduledByOwner);
}

/** Log.positions(): written, committed and flushed positions with the recovery point (docs/durability.md). */
export function writePositions(side: Pick<WriteSide, 'appender' | 'flusher'>, segments: LogSegments, checkpoints: { recoveryPoint: number; checkpointedRecoveryPoint: number }): LogPositions {
  // A reader of an empty partition directory has no segment: the empty log Kafka would create
  // starts at the log end offset.
  const a = side.appender;
  const active = segments.last ?? { baseOffset: a.nextOffset, size: 0 };
  return {
    written: { offset: a.nextOffset, segment: active.baseOffset, position: active.size + a.writeBufferBytes },
    committed: { offset: a.committedNextOffset, segment: active.baseOffset, position: active.size },
    flushed: { ...side.flusher.flushedPos },
    recoveryPoint: checkpoints.recoveryPoint,
    checkpointedRecoveryPoint: checkpoints.checkpointedRecoveryPoint,
    bytes: { written: a.writtenTotal, committed: a.committedTotal, flushed: side.flusher.flushedTotal },
  };
}
