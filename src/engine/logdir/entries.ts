/**
 * What a log directory holds, by name, without opening anything: partition directories in Kafka's
 * form (`<topic>-<partition>`, no leading zeros), the broker's own files (meta.properties,
 * bootstrap.checkpoint, offset checkpoints, .lock, the clean-shutdown marker), KRaft's metadata
 * log `__cluster_metadata-0` (never a data partition), and the directories Kafka renames a partition
 * to while deleting, moving or orphaning it (`<topic>-<partition>.<uuid>-delete|-future|-stray`,
 * LocalLog.scala). Everything else is `unknown`. The LogManager builds on this classification.
 */
import path from 'node:path';
import { realIO, type FileIO } from '../io.js';
import { InvalidDirectoryError, LogtoolError } from '../errors.js';
import { hasLeadingZeros, parseTopicPartition, type TopicPartition } from '../log/topic-partition.js';
import {
  CLEAN_SHUTDOWN_FILE,
  CLEANER_OFFSET_CHECKPOINT,
  LOG_START_OFFSET_CHECKPOINT,
  RECOVERY_POINT_CHECKPOINT,
  REPLICATION_OFFSET_CHECKPOINT,
} from '../checkpoint.js';

export const META_PROPERTIES = 'meta.properties';
export const BOOTSTRAP_CHECKPOINT = 'bootstrap.checkpoint';
export const LOCK_FILE = '.lock';
export const CLUSTER_METADATA_DIR = '__cluster_metadata-0';

export const CHECKPOINT_FILES: readonly string[] = [RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT, CLEANER_OFFSET_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT];

export type EntryKind =
  | 'partition'
  | 'meta.properties'
  | 'bootstrap.checkpoint'
  | 'checkpoint'
  | 'lock'
  | 'clean-shutdown-marker'
  | 'metadata'
  | 'delete'
  | 'future'
  | 'stray'
  | 'unknown';

export interface LogDirEntry {
  name: string;
  kind: EntryKind;
  isDirectory: boolean;
  /** For `partition`, and for `delete`/`future`/`stray` directories: the partition named. */
  topicPartition?: TopicPartition;
}

/**
 * `<topic>-<partition>.<unique id>-delete|-future|-stray`, matched as Kafka matches them
 * (LocalLog.scala: DeleteDirPattern `^(\\S+)-(\\S+)\\.(\\S+)-delete` and its -future/-stray twins).
 * Kafka writes the id as a UUID without dashes and may cut the topic short to keep the name
 * within 255 characters, so the partition named is only what the name says.
 */
const RENAMED_RE = /^(\S+)-(\S+)\.(\S+)-(delete|future|stray)$/;

/** Classifies one name found in a log directory. */
export function classifyEntry(name: string, isDirectory: boolean): LogDirEntry {
  const entry = (kind: EntryKind, tp?: TopicPartition): LogDirEntry => (tp ? { name, kind, isDirectory, topicPartition: tp } : { name, kind, isDirectory });
  if (!isDirectory) {
    if (name === META_PROPERTIES) return entry('meta.properties');
    if (name === BOOTSTRAP_CHECKPOINT) return entry('bootstrap.checkpoint');
    if (CHECKPOINT_FILES.includes(name)) return entry('checkpoint');
    if (name === LOCK_FILE) return entry('lock');
    if (name === CLEAN_SHUTDOWN_FILE) return entry('clean-shutdown-marker');
    return entry('unknown');
  }
  if (name === CLUSTER_METADATA_DIR) return entry('metadata');
  const renamed = RENAMED_RE.exec(name);
  if (renamed) return entry(renamed[4] as 'delete' | 'future' | 'stray', parseTopicPartition(`${renamed[1]!}-${renamed[2]!}`));
  const tp = parseTopicPartition(name);
  if (tp && !hasLeadingZeros(name)) return entry('partition', tp);
  return entry('unknown');
}

/** True for the entries that are Kafka's own (anything but `unknown`). */
export const isKafkaEntry = (e: LogDirEntry): boolean => e.kind !== 'unknown';

/** True when `dir` holds `meta.properties`: a broker's log directory. */
export function isBrokerLogDir(dir: string, io: FileIO = realIO): boolean {
  return io.stat(path.join(dir, META_PROPERTIES))?.isFile === true;
}

/** Every entry of a log directory, classified, sorted by name (partitions by topic, then number). */
export function listLogDir(dir: string, io: FileIO = realIO): LogDirEntry[] {
  const st = io.stat(dir);
  if (!st) throw new LogtoolError('not-found', 'no such directory', { file: dir });
  if (!st.isDirectory) throw new InvalidDirectoryError('not a directory', dir);
  const out: LogDirEntry[] = [];
  for (const name of io.readdir(dir)) {
    const s = io.stat(path.join(dir, name));
    out.push(classifyEntry(name, s?.isDirectory === true));
  }
  return out.sort((a, b) => {
    const ta = a.kind === 'partition' ? a.topicPartition : undefined;
    const tb = b.kind === 'partition' ? b.topicPartition : undefined;
    if (ta && tb) return ta.topic < tb.topic ? -1 : ta.topic > tb.topic ? 1 : ta.partition - tb.partition;
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}

/**
 * True when `dir` is itself one partition directory (its name is `<topic>-<partition>` in Kafka's
 * form and it is not a broker's log directory), so `ls` lists it as a one-partition directory.
 */
export function isPartitionDir(dir: string, io: FileIO = realIO): boolean {
  const resolved = path.resolve(dir);
  const name = path.basename(resolved);
  if (io.stat(resolved)?.isDirectory !== true || isBrokerLogDir(resolved, io)) return false;
  return classifyEntry(name, true).kind === 'partition';
}

/** What a command-line argument names: one partition directory, or a log directory and its entries. */
export interface LogDirTarget {
  /** The log directory (for one partition directory, its parent). */
  logDir: string;
  /** True when the argument was one partition directory. */
  single: boolean;
  /** Every entry of the log directory, classified (none for one partition directory). */
  entries: LogDirEntry[];
  partitions: LogDirEntry[];
}

/**
 * Resolves an argument of the log-directory commands (ls, doctor): a partition directory alone, or
 * a log directory — which must hold a partition or a Kafka file (exit 2 otherwise).
 */
export function logDirTarget(given: string, io: FileIO = realIO): LogDirTarget {
  const resolved = path.resolve(given);
  if (isPartitionDir(resolved, io)) return { logDir: path.dirname(resolved), single: true, entries: [], partitions: [classifyEntry(path.basename(resolved), true)] };
  const entries = listLogDir(given, io);
  const partitions = entries.filter((e) => e.kind === 'partition');
  if (partitions.length === 0 && !entries.some(isKafkaEntry)) {
    throw new InvalidDirectoryError('not a log directory: it holds no partition directories (<topic>-<partition>) and no Kafka files', given);
  }
  return { logDir: given, single: false, entries, partitions };
}
