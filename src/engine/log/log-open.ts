/**
 * Opening a partition directory (Kafka's UnifiedLog.apply with its LogLoader): the writer lock,
 * the directory created under Kafka's name, the topic configs (remembered and given), the loader's
 * recovery, one sync of what lies past the recovery point, then the Log built from what was loaded.
 */
import path from 'node:path';
import { realIO } from '../io.js';
import { keepFreedMemoryInProcess } from '../malloc-thresholds.js';
import { InvalidDirectoryError, LogtoolError } from '../errors.js';
import { resolveConfig } from '../config.js';
import { requireCanonicalNameToCreate, requireTopicPartition, parseTopicPartition } from './topic-partition.js';
import { DirectoryLock } from './lock.js';
import { FileDescriptorCache } from '../segment/fd-cache.js';
import { loadLog, syncPastRecoveryPoint } from '../recovery/loader.js';
import { requireWritableCheckpoints } from '../logdir/dir-checkpoints.js';
import { markerSeenByProcess, noteWriterOpened } from '../logdir/clean-shutdown.js';
import { loadRememberedConfig, rememberConfig } from './log-properties.js';
import type { LogInit, LogOptions } from './log-options.js';

/** Opens (creating if allowed) a partition directory; `construct` builds the Log (Log.open). */
export function openPartition<L>(dir: string, options: LogOptions, construct: (init: LogInit) => L): L {
  const io = options.io ?? realIO;
  // Appends, reads and compaction allocate and free large buffers all the time (malloc-thresholds.ts).
  keepFreedMemoryInProcess();
  const ownFiles = options.fileDescriptorCache ? undefined : new FileDescriptorCache(io, options.maxOpenFiles);
  const files = options.fileDescriptorCache ?? ownFiles!;
  const readOnly = options.readOnly ?? false;
  const resolved = path.resolve(dir);
  const onWarning = options.onWarning ?? (() => {});
  let tp = parseTopicPartition(resolved);
  let lock: DirectoryLock | undefined;
  const st = io.stat(resolved);
  if (st && !st.isDirectory) throw new InvalidDirectoryError('not a directory (give a partition directory such as mytopic-0)', dir);
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
    lock = DirectoryLock.acquire(resolved, 'write to', { underLogDir: options.underLogDirLock });
  }
  try {
    const remembered = loadRememberedConfig(io, resolved);
    const config = resolveConfig(remembered, options.config);
    if (!readOnly && options.config && options.rememberConfig !== false) rememberConfig(io, resolved, remembered, options.config);
    const directoryMarker = readOnly ? undefined : markerSeenByProcess(path.dirname(resolved));
    const loaded = loadLog({ io, dir: resolved, tp, config, readOnly, onWarning, discardLost: options.discardLost ?? false, directoryMarker, files, ...options.recovery });
    // A load that ran on a worker thread (LoadOptions.recovered) synced there already.
    if (!readOnly && loaded.report !== options.recovery?.recovered?.report) syncPastRecoveryPoint({ io, dir: resolved }, loaded);
    if (options.underLogDirLock) {
      lock?.release(); // from here on the manager's log-directory lock keeps other writers out
      lock = undefined;
    }
    const log = construct({
      dir: resolved,
      tp,
      config,
      io,
      readOnly,
      lock,
      ownFiles,
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
    ownFiles?.closeAll();
    throw e;
  }
}
