/**
 * Opening a partition directory (Kafka's UnifiedLog.apply with its LogLoader): the writer lock,
 * the directory created under Kafka's name, the topic configs (remembered and given), the loader's
 * recovery, one sync of what lies past the recovery point, then the Log built from what was loaded.
 */
import path from 'node:path';
import { realIO } from '../io.js';
import { LogtoolError } from '../errors.js';
import { resolveConfig } from '../config.js';
import { requireCanonicalNameToCreate, requireTopicPartition, parseTopicPartition } from './topic-partition.js';
import { DirectoryLock } from './lock.js';
import { loadLog } from '../recovery/loader.js';
import { requireWritableCheckpoints } from '../logdir/dir-checkpoints.js';
import { markerSeenByProcess, noteWriterOpened } from '../logdir/clean-shutdown.js';
import { loadRememberedConfig, rememberConfig } from './log-properties.js';
import type { LogInit, LogOptions } from './log-options.js';

/** Opens (creating if allowed) a partition directory; `construct` builds the Log (Log.open). */
export function openPartition<L>(dir: string, options: LogOptions, construct: (init: LogInit) => L): L {
  const io = options.io ?? realIO;
  const readOnly = options.readOnly ?? false;
  const resolved = path.resolve(dir);
  const onWarning = options.onWarning ?? (() => {});
  let tp = parseTopicPartition(resolved);
  let lock: DirectoryLock | undefined;
  const st = io.stat(resolved);
  if (st && !st.isDirectory) throw new LogtoolError('usage', 'not a directory (give a partition directory such as mytopic-0)', { file: dir });
  if (readOnly) {
    if (!st) throw new LogtoolError('not-found', 'no such directory', { file: dir });
  } else {
    tp = requireTopicPartition(resolved);
    // The directory's shared checkpoints must be readable before anything changes (dir-checkpoints.ts);
    // a LogManager checked them once for the whole directory.
    if (!options.recovery?.directory) requireWritableCheckpoints(io, path.dirname(resolved));
    if (!st) {
      if (options.create === false) throw new LogtoolError('not-found', 'no such directory', { file: dir });
      requireCanonicalNameToCreate(resolved, tp);
      io.mkdirp(resolved);
      io.syncDir(path.dirname(resolved));
    }
    lock = DirectoryLock.acquire(resolved);
  }
  try {
    const remembered = loadRememberedConfig(io, resolved);
    const config = resolveConfig(remembered, options.config);
    if (!readOnly && options.config && options.rememberConfig !== false) rememberConfig(io, resolved, remembered, options.config);
    const directoryMarker = readOnly ? undefined : markerSeenByProcess(path.dirname(resolved));
    const loaded = loadLog({ io, dir: resolved, tp, config, readOnly, onWarning, discardLost: options.discardLost ?? false, directoryMarker, ...options.recovery });
    if (!readOnly) {
      // After a kill -9 the page cache may still hold data that never reached the disk. Sync
      // what lies past the recovery point once, so the flushed position reported from this open
      // on is true (cheap after a clean shutdown: nothing is dirty).
      const segs = loaded.segments;
      for (let i = 0; i < segs.length; i++) if (i === segs.length - 1 || segs[i + 1]!.baseOffset > loaded.recoveryPoint) segs[i]!.flushLog();
      io.syncDir(resolved);
    }
    const log = construct({
      dir: resolved,
      tp,
      config,
      io,
      readOnly,
      lock,
      segments: loaded.segments,
      logStartOffset: loaded.logStartOffset,
      nextOffset: loaded.nextOffset,
      recoveryPoint: loaded.recoveryPoint,
      onWarning,
      loadReport: loaded.report,
      thoroughFlushIntervalMs: options.thoroughFlushIntervalMs,
      retentionCheckIntervalMs: options.retentionCheckIntervalMs,
      cleanerCheckIntervalMs: options.cleanerCheckIntervalMs,
      scheduledByOwner: options.scheduledByOwner,
    });
    if (!readOnly) noteWriterOpened(resolved, loaded.markerContent);
    return log;
  } catch (e) {
    lock?.release();
    throw e;
  }
}
