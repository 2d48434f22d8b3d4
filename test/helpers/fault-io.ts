/**
 * Fault injection for the engine's FileIO (test helper, not a test file), in the manner of
 * SQLite's I/O-error tests: a FaultIO forwards every call to the operating system (nativeIO),
 * counts the calls, and makes call number `failAt` fail — with EIO, ENOSPC or EACCES, or on a
 * write with a short write (the first half of the bytes reach the file, then ENOSPC, which is what
 * the kernel reports on the retry). Every call after the fault succeeds again: the disk recovered.
 *
 * Asynchronous fdatasync runs synchronously in the calling thread, so that the order of calls does
 * not depend on libuv's thread pool: with one thread and a fixed clock, a workload makes the same
 * calls in the same order on every run, and call k is the same call each time.
 */
import fs from 'node:fs';
import type { FileIO, FileStat } from '../../src/engine/io.js';
import { Log } from '../../src/engine/log/log.js';
import { runCli } from '../../src/program.js';
import { nativeIO } from '../../src/engine/io.js';
import { ioError } from '../../src/engine/errors.js';

export type FaultKind = 'EIO' | 'ENOSPC' | 'EACCES' | 'short write';

/** The fault that was injected: which call (1-based), on which path, of which kind. */
export interface Fault {
  index: number;
  call: string;
  path: string;
  kind: FaultKind;
  /** The errno the failing call reported (a short write reports ENOSPC). */
  code: string;
}

const KINDS: FaultKind[] = ['EIO', 'ENOSPC', 'EACCES'];
const WRITE_KINDS: FaultKind[] = [...KINDS, 'short write'];

/** A deterministic 32-bit hash of (seed, index): which kind call `index` fails with. */
export function mix(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** A synchronous call as an already settled promise. */
function settled(fn: () => void): Promise<void> {
  try {
    fn();
    return Promise.resolve();
  } catch (e) {
    return Promise.reject(e);
  }
}

export class FaultIO implements FileIO {
  /** Calls made so far. */
  calls = 0;
  /** The injected fault, once it happened. */
  fault: Fault | undefined;
  /** Every call as `index call path`, when tracing (to name call k in a report). */
  readonly trace: string[] | undefined;
  private readonly paths = new Map<number, string>();
  private readonly base: Required<FileIO> = nativeIO;

  /** failAt 0 never fails (the counting run). */
  constructor(
    private readonly failAt: number,
    private readonly seed: number,
    opts: { trace?: boolean } = {},
  ) {
    this.trace = opts.trace ? [] : undefined;
  }

  private pathOf(fd: number): string {
    return this.paths.get(fd) ?? `fd ${fd}`;
  }

  /** Counts one call; returns the fault kind when this is the call to fail. */
  private next(call: string, p: string, writes = false): FaultKind | undefined {
    const index = ++this.calls;
    this.trace?.push(`${index} ${call} ${p}`);
    if (index !== this.failAt) return undefined;
    const kinds = writes ? WRITE_KINDS : KINDS;
    const kind = kinds[mix(this.seed, index) % kinds.length]!;
    this.fault = { index, call, path: p, kind, code: kind === 'short write' ? 'ENOSPC' : kind };
    return kind;
  }

  private error(kind: FaultKind, call: string, p: string, detail = 'injected fault'): Error {
    const code = kind === 'short write' ? 'ENOSPC' : kind;
    return ioError(Object.assign(new Error(`${code}: ${detail}`), { code }), p, call);
  }

  /** Runs `op` unless this call is the one to fail. */
  private guard<T>(call: string, p: string, op: () => T): T {
    const kind = this.next(call, p);
    if (kind) throw this.error(kind, call, p);
    return op();
  }

  open(p: string, flags: string): number {
    const fd = this.guard('open', p, () => this.base.open(p, flags));
    this.paths.set(fd, p);
    return fd;
  }
  close(fd: number): void {
    const p = this.pathOf(fd);
    const kind = this.next('close', p);
    this.paths.delete(fd);
    this.base.close(fd); // a failing close(2) still releases the descriptor
    if (kind) throw this.error(kind, 'close', p);
  }
  read(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
    return this.guard('read', this.pathOf(fd), () => this.base.read(fd, buf, offset, length, position));
  }
  write(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
    const p = this.pathOf(fd);
    const kind = this.next('write', p, true);
    if (kind === 'short write') {
      const half = Math.floor(length / 2);
      if (half > 0) this.base.write(fd, buf, offset, half, position);
      throw this.error(kind, 'write', p, `short write: ${half} of ${length} bytes written`);
    }
    if (kind) throw this.error(kind, 'write', p);
    return this.base.write(fd, buf, offset, length, position);
  }
  truncate(fd: number, length: number): void {
    this.guard('truncate', this.pathOf(fd), () => this.base.truncate(fd, length));
  }
  fstat(fd: number): FileStat {
    return this.guard('stat', this.pathOf(fd), () => this.base.fstat(fd));
  }
  datasync(fd: number): void {
    this.guard('fdatasync', this.pathOf(fd), () => this.base.datasync(fd));
  }
  /** In the calling thread, like syncDirAsync: the order of I/O calls stays fixed. */
  datasyncAsync(fd: number): Promise<void> {
    return settled(() => this.datasync(fd));
  }
  rename(from: string, to: string): void {
    this.guard(`rename to ${to}`, from, () => this.base.rename(from, to));
  }
  link(from: string, to: string): void {
    this.guard(`link to ${from}`, to, () => this.base.link(from, to));
  }
  unlink(p: string): void {
    this.guard('unlink', p, () => this.base.unlink(p));
  }
  mkdirp(p: string): void {
    this.guard('mkdir', p, () => this.base.mkdirp(p));
  }
  readdir(p: string): string[] {
    return this.guard('readdir', p, () => this.base.readdir(p));
  }
  stat(p: string): FileStat | undefined {
    return this.guard('stat', p, () => this.base.stat(p));
  }
  syncDir(p: string): void {
    this.guard('fsync of directory', p, () => this.base.syncDir(p));
  }
  syncDirAsync(p: string): Promise<void> {
    return settled(() => this.syncDir(p));
  }
  utimes(p: string, mtimeMs: number): void {
    this.guard('utimes', p, () => this.base.utimes(p, mtimeMs));
  }
  flock(fd: number, mode: 'ex' | 'exnb'): void {
    this.guard('flock', this.pathOf(fd), () => this.base.flock(fd, mode));
  }
  mkdtemp(prefix: string): string {
    return this.guard('mkdtemp', prefix, () => this.base.mkdtemp(prefix));
  }
  rmdir(p: string): void {
    this.guard('rmdir', p, () => this.base.rmdir(p));
  }
}

// ---------------------------------------------------------------------------------------------
// What the fault tests check after a run (fault-injection.test.ts, disk-full.test.ts)

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command line in-process through the program, output captured. */
export async function cliInProcess(...argv: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

/**
 * Records acknowledged as stored by `append --json`: status `flushed` or `committed`. A `written`
 * acknowledgement (buffered mode) only says the batch is in the process's write buffer, which a
 * failing write loses with an error (README, Durability); it promises nothing after a failure.
 */
export function acknowledged(stdout: string): number {
  let n = 0;
  for (const line of stdout.split('\n')) {
    if (!line.trim()) continue;
    const ack = JSON.parse(line) as { count: number; status: string };
    if (ack.status !== 'written') n += ack.count;
  }
  return n;
}

/** One record as the fault tests compare them: offset, key and value. */
export const showRecord = (r: { offset: number; key: Buffer | null; value: Buffer | null }): string =>
  `${r.offset}|${r.key?.toString('utf8') ?? '∅'}|${r.value?.toString('utf8') ?? '∅'}`;

/** NDJSON input lines as showRecord prints them once appended from `firstOffset`. */
export function showNdjson(text: string, firstOffset: number): string[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      const o = JSON.parse(l) as { key: string | null; value: string | null };
      return `${firstOffset + i}|${o.key ?? '∅'}|${o.value ?? '∅'}`;
    });
}

export interface NextOpen {
  /** The records the next open reads, before it appends. */
  records: string[];
  /** .cleaned/.swap/.deleted files left after the next open and close. */
  leftovers: string[];
  verify: CliRun;
}

/** The next open after a (failed) command: reads every record, appends one, closes, verifies. */
export async function nextOpen(dir: string): Promise<NextOpen> {
  const log = Log.open(dir, { onWarning: () => {} });
  let records: string[];
  try {
    records = [...log.read()].map(showRecord);
    const r = await log.append([{ key: Buffer.from('next'), value: Buffer.from('open') }]);
    if (r.count !== 1) throw new Error(`the next open appended ${r.count} records, not 1`);
  } finally {
    await log.close();
  }
  const leftovers = fs.readdirSync(dir).filter((n) => /\.(cleaned|swap|deleted)$/.test(n));
  return { records, leftovers, verify: await cliInProcess('verify', dir) };
}
