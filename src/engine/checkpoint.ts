/**
 * Kafka's text checkpoint files (kafka-format.md §12): `<version>\n<count>\n<entry>\n…`, written to
 * `<name>.tmp`, fsynced, renamed over the file, then the directory fsynced. One writer for every
 * checkpoint file logtool writes.
 */
import path from 'node:path';
import type { FileIO } from './io.js';
import { LogtoolError, assert } from './errors.js';
import { DirectoryLock } from './log/lock.js';

export const RECOVERY_POINT_CHECKPOINT = 'recovery-point-offset-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT = 'log-start-offset-checkpoint';
export const CLEANER_OFFSET_CHECKPOINT = 'cleaner-offset-checkpoint';
export const REPLICATION_OFFSET_CHECKPOINT = 'replication-offset-checkpoint';
export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown';

/** Largest checkpoint file read (a log dir of 100k partitions is ~4 MiB). */
const MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024;

/** Writes a whole file (created or truncated) and fdatasyncs it (unless `sync: false`); no rename. */
export function writeFileDurable(io: FileIO, filePath: string, content: string | Buffer, opts: { sync?: boolean } = {}): void {
  const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const fd = io.open(filePath, 'w');
  try {
    io.write(fd, data, 0, data.length, 0);
    if (opts.sync ?? true) io.datasync(fd);
  } finally {
    io.close(fd);
  }
}

/**
 * Writes a whole file atomically and (unless `durable: false`) durably: tmp + fsync + rename +
 * directory fsync. A failure (a full disk) removes the tmp file it created, so nothing is left.
 */
export function writeFileAtomic(io: FileIO, filePath: string, content: string | Buffer, opts: { durable?: boolean } = {}): void {
  const durable = opts.durable ?? true;
  const tmp = `${filePath}.tmp`;
  try {
    writeFileDurable(io, tmp, content, { sync: durable });
    io.rename(tmp, filePath);
  } catch (e) {
    removeQuietly(io, tmp);
    throw e;
  }
  if (durable) io.syncDir(path.dirname(filePath));
}

/** Cleanup after a failure: unlink that never throws, so the first error is the one reported. */
export function removeQuietly(io: FileIO, filePath: string): void {
  try {
    io.unlink(filePath);
  } catch {
    // the caller is already failing with the error that matters
  }
}

export function readSmallFile(io: FileIO, filePath: string, maxBytes = MAX_CHECKPOINT_BYTES): Buffer | undefined {
  const st = io.stat(filePath);
  if (!st) return undefined;
  if (st.size > maxBytes) throw new LogtoolError('corrupt', `file of ${st.size} bytes is larger than the ${maxBytes}-byte limit for such files`, { file: filePath });
  const fd = io.open(filePath, 'r');
  try {
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < st.size) {
      const r = io.read(fd, buf, n, st.size - n, n);
      if (r <= 0) break;
      n += r;
    }
    return buf.subarray(0, n);
  } finally {
    io.close(fd);
  }
}

/** Parses the generic checkpoint format; throws a corrupt error naming the line. */
export function parseCheckpoint(text: string, filePath: string, fieldsPerEntry: number, expectedVersion = 0): string[][] {
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) return [];
  const bad = (line: number, what: string) => new LogtoolError('corrupt', `line ${line}: ${what}`, { file: filePath });
  const version = Number(lines[0]!.trim());
  if (!/^\d+$/.test(lines[0]!.trim()) || version !== expectedVersion) throw bad(1, `unsupported version "${lines[0]}"`);
  if (lines.length < 2) return [];
  if (!/^\d+$/.test(lines[1]!.trim())) throw bad(2, `invalid entry count "${lines[1]}"`);
  const count = Number(lines[1]!.trim());
  const entries = lines.slice(2);
  if (entries.length !== count) throw bad(2, `expected ${count} entries, found ${entries.length}`);
  return entries.map((line, i) => {
    const fields = line.trim().split(/\s+/);
    if (fields.length !== fieldsPerEntry) throw bad(i + 3, `expected ${fieldsPerEntry} fields, found ${fields.length}`);
    return fields;
  });
}

export function formatCheckpoint(entries: string[][], version = 0): string {
  return `${version}\n${entries.length}\n${entries.map((e) => `${e.join(' ')}\n`).join('')}`;
}

export type OffsetCheckpoint = Map<string, number>;

export const tpKey = (topic: string, partition: number): string => `${topic} ${partition}`;

/** Reads `topic partition offset` entries. A missing file is empty. */
export function readOffsetCheckpoint(io: FileIO, filePath: string): OffsetCheckpoint {
  return parseOffsetCheckpoint(readSmallFile(io, filePath), filePath);
}

/** The entries of a checkpoint file's bytes (undefined: a missing file, no entries). */
export function parseOffsetCheckpoint(data: Buffer | undefined, filePath: string): OffsetCheckpoint {
  const out: OffsetCheckpoint = new Map();
  if (!data) return out;
  const entries = parseCheckpoint(data.toString('utf8'), filePath, 3);
  for (let i = 0; i < entries.length; i++) {
    const [topic, partition, offset] = entries[i]!;
    if (!/^-?\d+$/.test(partition!) || !/^-?\d+$/.test(offset!)) throw new LogtoolError('corrupt', `line ${i + 3}: malformed entry "${topic} ${partition} ${offset}"`, { file: filePath });
    out.set(tpKey(topic!, Number(partition)), Number(offset));
  }
  return out;
}

/** Writes the entries in the map's order (the order they were read in, new keys last), as Kafka keeps a file's order. */
export function writeOffsetCheckpoint(io: FileIO, filePath: string, entries: OffsetCheckpoint): void {
  writeFileAtomic(io, filePath, formatOffsetCheckpoint(entries));
}

export function formatOffsetCheckpoint(entries: OffsetCheckpoint): string {
  const rows = [...entries.entries()].map(([k, v]) => [...k.split(' '), String(v)]);
  return formatCheckpoint(rows);
}

/** In-process writers of one file take turns: they share its `<file>.<pid>.tmp`. */
const asyncRewrites = new Map<string, Promise<unknown>>();

/**
 * Read-modify-write of a file shared by the partitions of a log directory (a checkpoint) without
 * blocking the event loop. Under the directory's lock (DirectoryLock.withLockAsync, never held
 * across an await), `compute` gets the current bytes (undefined if missing) and returns the new
 * content, or undefined to leave the file alone. The content is written to `<file>.<pid>.tmp` and
 * fdatasynced outside the lock; under the lock again it is renamed over the file only if the file
 * is unchanged (otherwise compute runs again on what is there now); then the directory is fsynced.
 * Returns whether the file was replaced.
 */
export function rewriteFileAsync(io: FileIO, filePath: string, compute: (current: Buffer | undefined) => string | undefined): Promise<boolean> {
  const previous = asyncRewrites.get(filePath) ?? Promise.resolve();
  const run = previous.then(
    () => rewriteFileOnce(io, filePath, compute),
    () => rewriteFileOnce(io, filePath, compute),
  );
  asyncRewrites.set(filePath, run);
  void run.then(
    () => asyncRewrites.get(filePath) === run && asyncRewrites.delete(filePath),
    () => asyncRewrites.get(filePath) === run && asyncRewrites.delete(filePath),
  );
  return run;
}

async function rewriteFileOnce(io: FileIO, filePath: string, compute: (current: Buffer | undefined) => string | undefined): Promise<boolean> {
  const dir = path.dirname(filePath);
  const tmp = `${filePath}.${process.pid}.tmp`;
  for (;;) {
    const { before, content } = await DirectoryLock.withLockAsync(dir, () => {
      const current = readSmallFile(io, filePath);
      return { before: current, content: compute(current) };
    });
    if (content === undefined) return false;
    const data = Buffer.from(content, 'utf8');
    if (before?.equals(data)) return false;
    try {
      const fd = io.open(tmp, 'w');
      try {
        io.write(fd, data, 0, data.length, 0);
        await io.datasyncAsync(fd);
      } finally {
        io.close(fd);
      }
      const replaced = await DirectoryLock.withLockAsync(dir, () => {
        const now = readSmallFile(io, filePath);
        if (now === undefined ? before !== undefined : before === undefined || !now.equals(before)) return false;
        io.rename(tmp, filePath);
        return true;
      });
      if (!replaced) {
        io.unlink(tmp);
        continue;
      }
    } catch (e) {
      try {
        io.unlink(tmp);
      } catch {
        // the error that matters is e
      }
      throw e;
    }
    await io.syncDirAsync(dir);
    return true;
  }
}

/** A checkpoint file another tool mangled must not stop a writer; it is rewritten whole. */
export function readOffsetCheckpointTolerant(io: FileIO, file: string): OffsetCheckpoint {
  try {
    return readOffsetCheckpoint(io, file);
  } catch {
    return new Map();
  }
}

/**
 * Sets (or, with undefined, removes) one entry of an offset checkpoint in memory. Returns whether
 * that changed anything: a checkpoint file is rewritten only then, so a no-op never changes a
 * broker's file. The other entries keep their order; a new key goes last.
 */
export function setOffsetEntry(cp: OffsetCheckpoint, key: string, offset: number | undefined): boolean {
  assert(offset === undefined || Number.isSafeInteger(offset), `checkpoint offset ${offset} for ${key} is not an integer`);
  if (offset === undefined ? !cp.has(key) : cp.get(key) === offset) return false;
  if (offset === undefined) cp.delete(key);
  else cp.set(key, offset);
  return true;
}

/** Largest clean-shutdown marker kept as it was (Kafka 3.7+ writes ~40 bytes of JSON; older brokers none). */
const MAX_MARKER_BYTES = 4096;

/**
 * The clean-shutdown marker's content, to be written back unchanged when logtool restores the
 * marker (Kafka 3.7+ stores the broker epoch there, KIP-966). undefined when there is none, and an
 * empty buffer when it cannot be kept (too large or unreadable): logtool never writes an epoch it
 * did not read.
 */
export function readCleanShutdownMarker(io: FileIO, logDir: string): Buffer | undefined {
  const file = path.join(logDir, CLEAN_SHUTDOWN_FILE);
  try {
    return readSmallFile(io, file, MAX_MARKER_BYTES);
  } catch {
    return io.stat(file) ? Buffer.alloc(0) : undefined;
  }
}

/** Java-properties style `key=value` lines (comments with #). */
export function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith('!')) continue;
    const m = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

export function formatProperties(props: Map<string, string>, comment?: string): string {
  const head = comment ? `# ${comment}\n` : '';
  return head + [...props.entries()].map(([k, v]) => `${k}=${v}\n`).join('');
}
