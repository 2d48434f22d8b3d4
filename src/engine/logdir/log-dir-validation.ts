/**
 * What Kafka's LogManager checks of the log directories it is given before loading any partition
 * (core/src/main/scala/kafka/log/LogManager.scala: createAndValidateLogDirs, and loadLog's
 * "Duplicate log directories for <partition>" refusal): each is a directory (created when missing
 * and allowed), not a partition directory given by mistake, and no partition is held by two of them.
 * Also what the manager reads once per directory for all its partitions (the partition names and
 * the two checkpoints). log-manager.ts runs these in its open.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { InvalidDirectoryError, LogtoolError } from '../errors.js';
import { parseTopicPartition } from '../log/topic-partition.js';
import type { LoadOptions } from '../recovery/load-report.js';
import { LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, tpKey } from '../checkpoint.js';
import { readDirCheckpoint } from './dir-checkpoints.js';
import { classifyEntry, isBrokerLogDir, isKafkaEntry, listLogDir, type LogDirEntry } from './entries.js';

/** One log directory as validated: whether open created it, whether a broker's, its entries. */
export interface ValidatedLogDir {
  created: boolean;
  isBroker: boolean;
  entries: LogDirEntry[];
}

/**
 * Validates (or, for writing and unless `create` is false, creates) one log directory. Refuses a
 * file, a missing directory for reading, and a partition directory given in place of a log
 * directory; a read-only open also refuses a directory holding nothing of Kafka's.
 */
export function validateLogDir(io: FileIO, dir: string, options: { readOnly?: boolean; create?: boolean }): ValidatedLogDir {
  const st = io.stat(dir);
  let created = false;
  if (st && !st.isDirectory) throw new InvalidDirectoryError('not a directory', dir, 'logDirs');
  if (!st) {
    if (options.readOnly || options.create === false) throw new LogtoolError('not-found', 'no such log directory', { file: dir });
    if (classifyEntry(path.basename(dir), true).kind === 'partition') throw new InvalidDirectoryError('will not create a log directory named like a partition directory (<topic>-<partition>)', dir, 'logDirs');
    io.mkdirp(dir);
    io.syncDir(path.dirname(dir));
    created = true;
  }
  const isBroker = isBrokerLogDir(dir, io);
  const entries = listLogDir(dir, io);
  // Kafka's rule: a name of the form <topic>-<partition> is a partition directory.
  if (!isBroker && classifyEntry(path.basename(dir), true).kind === 'partition' && !entries.some((e) => e.kind === 'partition')) {
    throw new InvalidDirectoryError('this is a partition directory (named <topic>-<partition>); give the log directory that holds it', dir, 'logDirs');
  }
  if (options.readOnly && !entries.some(isKafkaEntry)) throw new InvalidDirectoryError('not a log directory: it holds no partitions and no Kafka files', dir, 'logDirs');
  return { created, isBroker, entries };
}

/**
 * The partitions of one log directory, refusing one that another directory holds too (`seen`:
 * tpKey → partition directory, filled in as directories are planned).
 */
export function planPartitions(io: FileIO, dir: string, seen: Map<string, string>): LogDirEntry[] {
  const parts = listLogDir(dir, io).filter((e) => e.kind === 'partition' && e.topicPartition);
  for (const e of parts) {
    const key = tpKey(e.topicPartition!.topic, e.topicPartition!.partition);
    const here = path.join(dir, e.name);
    const other = seen.get(key);
    if (other !== undefined) throw new InvalidDirectoryError(`partition ${e.name} is in two log directories: ${other} and ${here}; Kafka keeps a partition in one`, here, 'logDirs');
    seen.set(key, here);
  }
  return parts;
}

/**
 * The directory's names and its two checkpoints, read once for all its partitions (Kafka's
 * LogManager reads each checkpoint once per directory). undefined when a checkpoint does not
 * parse: a reader's loads then read and report it themselves (a writer stopped before).
 */
export function readDirectorySnapshot(io: FileIO, dir: string): LoadOptions['directory'] {
  try {
    return { names: [], recoveryPoints: readDirCheckpoint(io, dir, RECOVERY_POINT_CHECKPOINT), logStartOffsets: readDirCheckpoint(io, dir, LOG_START_OFFSET_CHECKPOINT) };
  } catch (e) {
    if (e instanceof LogtoolError && e.kind === 'corrupt') return undefined;
    throw e;
  }
}

/** The names in the directory that parse as each partition (`t-1`, `t-01` …), by tpKey, for the loader's ambiguity check. */
export function partitionNamesByKey(io: FileIO, dir: string): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const name of io.readdir(dir)) {
    const tp = parseTopicPartition(name);
    if (!tp) continue;
    const key = tpKey(tp.topic, tp.partition);
    names.set(key, [...(names.get(key) ?? []), name]);
  }
  return names;
}
