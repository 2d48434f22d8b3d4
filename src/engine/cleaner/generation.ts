/**
 * A seqlock for readers in other processes. Readers take no lock, and a directory listing taken
 * while segments are being replaced (or deleted by retention) can miss a range or see old and new
 * segments side by side. So every change that removes or replaces segment files is bracketed by
 * `beginChange` / `endChange`, which bump the counter in `<partition>/logtool.generation`
 * (odd = change in progress, with the changer's pid). A reader reads the generation, opens, reads
 * it again, and retries unless both reads show the same even value (Log.openStable). Once open, a
 * reader holds file descriptors, so later renames and unlinks never affect what it reads.
 *
 * The file is advisory (no fsync): after a crash, an odd value whose pid is gone counts as idle,
 * and so does an odd value of this process while it has no change of that directory in progress
 * (an endChange whose write failed; the next change writes an even value again). Kafka ignores
 * files it does not know in a partition directory.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { writeFileAtomic } from '../checkpoint.js';

export const GENERATION_FILE = 'logtool.generation';

export interface Generation {
  value: number;
  /** A change is in progress (odd value, and its process is alive). */
  busy: boolean;
}

/** Changes in progress in this process, by partition directory. */
const changesInProgress = new Map<string, number>();

function changeInProgress(pid: number, dir: string): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return (changesInProgress.get(path.resolve(dir)) ?? 0) > 0;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function readGeneration(io: FileIO, dir: string): Generation {
  const file = path.join(dir, GENERATION_FILE);
  let text = '';
  try {
    const st = io.stat(file);
    if (!st || st.size > 256) return { value: 0, busy: false };
    const fd = io.open(file, 'r');
    try {
      const buf = Buffer.alloc(st.size);
      const n = io.read(fd, buf, 0, st.size, 0);
      text = buf.toString('utf8', 0, n);
    } finally {
      io.close(fd);
    }
  } catch {
    return { value: 0, busy: false };
  }
  const [v, pid] = text.trim().split(/\s+/);
  const value = Number(v);
  if (!Number.isSafeInteger(value)) return { value: 0, busy: false };
  return { value, busy: value % 2 === 1 && changeInProgress(Number(pid), dir) };
}

function writeGeneration(io: FileIO, dir: string, value: number): void {
  const data = Buffer.from(value % 2 === 1 ? `${value} ${process.pid}\n` : `${value}\n`);
  writeFileAtomic(io, path.join(dir, GENERATION_FILE), data, { durable: false });
}

/** Marks the start of a change; returns the token endChange needs. */
export function beginChange(io: FileIO, dir: string): number {
  const g = readGeneration(io, dir).value;
  const odd = g % 2 === 1 ? g + 2 : g + 1;
  writeGeneration(io, dir, odd);
  const key = path.resolve(dir);
  changesInProgress.set(key, (changesInProgress.get(key) ?? 0) + 1);
  return odd;
}

export function endChange(io: FileIO, dir: string, token: number): void {
  const key = path.resolve(dir);
  const n = (changesInProgress.get(key) ?? 1) - 1;
  if (n > 0) changesInProgress.set(key, n);
  else changesInProgress.delete(key);
  writeGeneration(io, dir, token + 1);
}

/** Blocks the thread for ms milliseconds (used between retries of a synchronous open). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
