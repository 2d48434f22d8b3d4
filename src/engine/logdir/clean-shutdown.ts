/**
 * The clean-shutdown marker of a log directory (Kafka's CleanShutdownFileHandler,
 * `.kafka_cleanshutdown`; kafka-format.md §0 and §12): a broker that finds it skips recovery of
 * every partition in the directory. So logtool writes it only when that is true of every partition.
 *
 * The policy, per log directory and process:
 * - the first writable open in this process reads the marker (its bytes: Kafka 3.7+ stores the
 *   broker epoch there, KIP-966) and the loader deletes it, as Kafka does at startup; later
 *   writable opens in this process are handed what it read, as Kafka's LogManager reads it once;
 * - when the last writer of the directory in this process closes, the marker is written only if
 *   every partition of the directory is consistent on disk: held by no other writer, no swap in
 *   progress, a complete last batch, and a checkpointed recovery point at its log end offset.
 *   Otherwise it stays absent, and the next open of a partition that is not consistent recovers it;
 * - and only if this process may vouch for the directory: it found the marker, or it opened every
 *   partition of the directory (a directory of one partition; a LogManager). A directory found
 *   without a marker (a crashed broker's) is never declared clean by repairing some partitions;
 * - its content is the bytes read at open (unchanged: never an epoch logtool did not read), or
 *   empty when there was none (as Kafka before 3.7 writes it); an identical file is left alone.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { DirectoryLock } from '../log/lock.js';
import { CLEAN_SHUTDOWN_FILE, RECOVERY_POINT_CHECKPOINT, readCleanShutdownMarker, readOffsetCheckpoint, tpKey, writeFileAtomic, type OffsetCheckpoint } from '../checkpoint.js';
import { LogSegment, parseBaseOffset } from '../segment/segment.js';
import { classifyEntry } from './entries.js';

interface DirWriters {
  /** Partition directories of this log directory open for writing in this process. */
  partitions: Set<string>;
  /** Every partition opened for writing here while the directory had writers (closed ones too). */
  opened: Set<string>;
  /** The marker as the first of them found it (undefined: there was none). */
  marker: { content: Buffer | undefined } | undefined;
}

const writersByLogDir = new Map<string, DirWriters>();

/**
 * What an earlier writer of this process found of `logDir`'s marker before deleting it, for the
 * loader of another partition of the same directory; undefined when this process holds no writer
 * there (the loader reads the file itself).
 */
export function markerSeenByProcess(logDir: string): { content: Buffer | undefined } | undefined {
  return writersByLogDir.get(logDir)?.marker;
}

/** Registers a writer after its load; `marker` is what its loader found (or was handed). */
export function noteWriterOpened(partitionDir: string, marker: Buffer | undefined): void {
  const logDir = path.dirname(partitionDir);
  let w = writersByLogDir.get(logDir);
  if (!w) {
    w = { partitions: new Set(), opened: new Set(), marker: marker === undefined ? undefined : { content: marker } };
    writersByLogDir.set(logDir, w);
  }
  w.partitions.add(partitionDir);
  w.opened.add(partitionDir);
}

/** Unregisters a writer that failed or crashed: the marker is not written for it. */
export function noteWriterGone(partitionDir: string): void {
  const logDir = path.dirname(partitionDir);
  const w = writersByLogDir.get(logDir);
  if (!w) return;
  w.partitions.delete(partitionDir);
  if (w.partitions.size === 0) writersByLogDir.delete(logDir);
}

/**
 * A writer closed cleanly (its recovery point checkpointed at its log end): unregisters it and, if
 * it was the directory's last writer in this process, writes the marker by the rule above.
 * Returns whether the marker was written.
 */
export function closeWriterAndMaybeMark(io: FileIO, partitionDir: string): boolean {
  const logDir = path.dirname(partitionDir);
  const w = writersByLogDir.get(logDir);
  noteWriterGone(partitionDir);
  if (!w || writersByLogDir.has(logDir)) return false; // the last writer of this process decides
  if (!logDirConsistent(io, logDir, partitionDir, w.marker ? undefined : w.opened)) return false;
  const content = w.marker?.content ?? Buffer.alloc(0);
  const now = readCleanShutdownMarker(io, logDir);
  if (now !== undefined && now.equals(content)) return false;
  writeFileAtomic(io, path.join(logDir, CLEAN_SHUTDOWN_FILE), content);
  return true;
}

/**
 * Every partition of logDir is consistent on disk; `self` is the closing writer (its own lock is
 * held). With `mustHaveOpened`, also every partition is one of those.
 */
export function logDirConsistent(io: FileIO, logDir: string, self?: string, mustHaveOpened?: ReadonlySet<string>): boolean {
  let recoveryPoints: OffsetCheckpoint;
  let names: string[];
  try {
    recoveryPoints = readOffsetCheckpoint(io, path.join(logDir, RECOVERY_POINT_CHECKPOINT));
    names = io.readdir(logDir);
  } catch {
    return false;
  }
  for (const name of names) {
    const dir = path.join(logDir, name);
    const st = io.stat(dir);
    const entry = classifyEntry(name, st?.isDirectory === true);
    if (entry.kind !== 'partition' || !entry.topicPartition) continue;
    if (mustHaveOpened && !mustHaveOpened.has(dir)) return false;
    if (dir !== self && DirectoryLock.isHeld(dir)) return false;
    const rp = recoveryPoints.get(tpKey(entry.topicPartition.topic, entry.topicPartition.partition));
    if (!partitionConsistent(io, dir, rp)) return false;
  }
  return true;
}

/**
 * No swap in progress, a complete last batch, and the recovery point at (or past) the log end
 * offset, taken from the active segment's last index entry as the loader takes it.
 */
export function partitionConsistent(io: FileIO, dir: string, recoveryPoint: number | undefined): boolean {
  let names: string[];
  try {
    names = io.readdir(dir);
  } catch {
    return false;
  }
  if (names.some((n) => n.endsWith('.swap'))) return false;
  let active: number | undefined;
  for (const n of names) {
    if (!/^\d{20}\.log$/.test(n)) continue;
    const base = parseBaseOffset(n);
    if (base !== undefined && (active === undefined || base > active)) active = base;
  }
  if (active === undefined) return true; // no segment: nothing to recover
  if (recoveryPoint === undefined) return false;
  let seg: LogSegment | undefined;
  try {
    seg = new LogSegment({ io, dir, baseOffset: active, indexIntervalBytes: 4096, maxIndexBytes: 10 * 1024 * 1024, writable: false });
    if (seg.size === 0) return recoveryPoint >= active;
    const tail = seg.readNextOffset();
    return tail.end.kind === 'end' && recoveryPoint >= (tail.nextOffset ?? active);
  } catch {
    return false;
  } finally {
    seg?.closeQuietly();
  }
}
