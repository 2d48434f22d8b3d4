/**
 * Simulated power loss for the engine's FileIO (test helper, not a test file).
 *
 * CrashFS is an in-memory FileIO that records every mutation (create, write, truncate, fsync,
 * rename, unlink, directory fsync) in a journal. A CrashSimulator replays that journal and, at
 * any point of it, produces crash states — what a disk could hold after power was cut there:
 *
 *  - everything fsynced survives: file data and size at the last fdatasync of the file, and the
 *    directory entries committed by a directory fsync;
 *  - every operation not yet made durable is one or more *unsynced operations*, each of which may
 *    or may not have reached the disk, independently of the others (applied in journal order):
 *     - each 512-byte sector a write covers since the file's last fsync (so an earlier page can be
 *       lost while a later one is kept, and any write can be torn: some of its sectors kept,
 *       others not);
 *     - each truncate since the file's last fsync;
 *     - each directory operation (a create, a rename, an unlink) not followed by an fsync of its
 *       directory; a directory fsync commits that directory's operations only (a rename: either
 *       directory's);
 *  - crashStates() gives every such state where a crash point has at most `maxExhaustiveOps`
 *    (10) unsynced operations, otherwise `samples` (20) of them: nothing kept, everything kept,
 *    and random choices from a seeded PRNG. Identical images are given once.
 *
 * Directories themselves are durable once created (the engine fsyncs parents after mkdir).
 * Paths are absolute; the caller keeps real, empty directories at the same paths so that the
 * engine's flock-based DirectoryLock (which bypasses FileIO on purpose) works.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { FileIO, FileStat } from '../../src/engine/io.js';
import { ioError } from '../../src/engine/errors.js';

export const SECTOR_BYTES = 512;

type Event =
  | { e: 'create'; path: string; ino: number }
  | { e: 'write'; ino: number; pos: number; data: Buffer }
  | { e: 'trunc'; ino: number; len: number }
  | { e: 'sync'; ino: number }
  | { e: 'rename'; from: string; to: string }
  | { e: 'unlink'; path: string }
  | { e: 'mkdir'; path: string }
  | { e: 'syncdir'; path: string }
  | { e: 'mark'; value: unknown };

type DataOp = { k: 'w'; pos: number; data: Buffer } | { k: 't'; len: number };
/** One unsynced operation of a crash point: a directory operation, a truncate, or one sector of a write. */
type Unit = { k: 'ns'; i: number } | { k: 'data'; ino: number; i: number; from: number; to: number };
type NsOp = { k: 'link'; path: string; ino: number } | { k: 'rename'; from: string; to: string } | { k: 'unlink'; path: string };

/** A disk image: file contents by absolute path, and the directories. */
export interface CrashState {
  files: Map<string, Buffer>;
  dirs: Set<string>;
}

class Inode {
  data: Buffer;
  size: number;
  durable: Buffer;
  pending: DataOp[] = [];
  mtimeMs = Date.now();

  constructor(initial: Buffer = Buffer.alloc(0)) {
    this.data = Buffer.from(initial);
    this.size = initial.length;
    this.durable = Buffer.from(initial);
  }

  current(): Buffer {
    return this.data.subarray(0, this.size);
  }
}

function applyData(content: Buffer, op: DataOp, tearAt?: number): Buffer {
  if (op.k === 't') {
    if (op.len <= content.length) return content.subarray(0, op.len);
    return Buffer.concat([content, Buffer.alloc(op.len - content.length)]);
  }
  const data = tearAt === undefined ? op.data : op.data.subarray(0, tearAt - op.pos);
  const end = op.pos + data.length;
  const out = end > content.length ? Buffer.concat([content, Buffer.alloc(end - content.length)]) : Buffer.from(content);
  data.copy(out, op.pos);
  return out;
}

const touches = (op: NsOp, dir: string): boolean =>
  op.k === 'rename' ? path.dirname(op.from) === dir || path.dirname(op.to) === dir : path.dirname(op.path) === dir;

/** The file-system state the journal describes: current view plus what is durable. */
class FsModel {
  inodes = new Map<number, Inode>();
  names = new Map<string, number>();
  durableNames = new Map<string, number>();
  pendingNs: NsOp[] = [];
  dirs = new Set<string>(['/']);
  nextIno = 1;

  constructor(initial?: CrashState) {
    if (!initial) return;
    for (const d of initial.dirs) this.addDirs(d);
    for (const [p, data] of initial.files) {
      const ino = this.nextIno++;
      this.inodes.set(ino, new Inode(data));
      this.names.set(p, ino);
      this.durableNames.set(p, ino);
      this.addDirs(path.dirname(p));
    }
  }

  addDirs(d: string): void {
    for (let p = d; !this.dirs.has(p); p = path.dirname(p)) this.dirs.add(p);
  }

  apply(ev: Event): void {
    switch (ev.e) {
      case 'create': {
        this.inodes.set(ev.ino, new Inode());
        this.nextIno = Math.max(this.nextIno, ev.ino + 1);
        this.names.set(ev.path, ev.ino);
        this.pendingNs.push({ k: 'link', path: ev.path, ino: ev.ino });
        return;
      }
      case 'write': {
        const n = this.inodes.get(ev.ino)!;
        const end = ev.pos + ev.data.length;
        if (end > n.data.length) {
          const bigger = Buffer.alloc(Math.max(end, n.data.length * 2));
          n.data.copy(bigger, 0, 0, n.size);
          n.data = bigger;
        }
        if (ev.pos > n.size) n.data.fill(0, n.size, ev.pos);
        ev.data.copy(n.data, ev.pos);
        n.size = Math.max(n.size, end);
        n.pending.push({ k: 'w', pos: ev.pos, data: ev.data });
        n.mtimeMs = Date.now();
        return;
      }
      case 'trunc': {
        const n = this.inodes.get(ev.ino)!;
        if (ev.len > n.data.length) {
          const bigger = Buffer.alloc(ev.len);
          n.data.copy(bigger, 0, 0, n.size);
          n.data = bigger;
        } else if (ev.len > n.size) n.data.fill(0, n.size, ev.len);
        n.size = ev.len;
        n.pending.push({ k: 't', len: ev.len });
        return;
      }
      case 'sync': {
        const n = this.inodes.get(ev.ino)!;
        n.durable = Buffer.from(n.current());
        n.pending = [];
        return;
      }
      case 'rename': {
        const ino = this.names.get(ev.from)!;
        this.names.delete(ev.from);
        this.names.set(ev.to, ino);
        this.pendingNs.push({ k: 'rename', from: ev.from, to: ev.to });
        return;
      }
      case 'unlink': {
        this.names.delete(ev.path);
        this.pendingNs.push({ k: 'unlink', path: ev.path });
        return;
      }
      case 'mkdir':
        this.addDirs(ev.path);
        return;
      case 'syncdir': {
        // Only this directory's entries become durable: other directories' pending operations
        // stay undecided (the adversarial reading: a journal need not commit them together).
        const keep: NsOp[] = [];
        for (const op of this.pendingNs) {
          if (touches(op, ev.path)) FsModel.applyNs(this.durableNames, op);
          else keep.push(op);
        }
        this.pendingNs = keep;
        return;
      }
      case 'mark':
        return;
    }
  }

  static applyNs(names: Map<string, number>, op: NsOp): void {
    if (op.k === 'link') names.set(op.path, op.ino);
    else if (op.k === 'unlink') names.delete(op.path);
    else {
      const ino = names.get(op.from);
      if (ino === undefined) return; // its creation did not survive: nothing to rename
      names.delete(op.from);
      names.set(op.to, ino);
    }
  }

  /** The image as if everything were synced (no crash). */
  liveState(): CrashState {
    const files = new Map<string, Buffer>();
    for (const [p, ino] of this.names) files.set(p, Buffer.from(this.inodes.get(ino)!.current()));
    return { files, dirs: new Set(this.dirs) };
  }

  /** The unsynced operations at this point (see the header), in journal order per file. */
  units(): Unit[] {
    const out: Unit[] = this.pendingNs.map((_, i) => ({ k: 'ns' as const, i }));
    // Only inodes some state can name: durable names and pending creations or renames.
    const reachable = new Set<number>(this.durableNames.values());
    for (const op of this.pendingNs) if (op.k === 'link') reachable.add(op.ino);
    for (const ino of [...reachable].sort((a, b) => a - b)) {
      this.inodes.get(ino)!.pending.forEach((op, i) => {
        if (op.k === 't') {
          out.push({ k: 'data', ino, i, from: 0, to: 0 });
          return;
        }
        // One unit per sector the write covers (a write within one sector is one unit).
        for (let from = op.pos; from < op.pos + op.data.length; ) {
          const to = Math.min(op.pos + op.data.length, (Math.floor(from / SECTOR_BYTES) + 1) * SECTOR_BYTES);
          out.push({ k: 'data', ino, i, from, to });
          from = to;
        }
      });
    }
    return out;
  }

  /** The disk image in which exactly the units marked in `kept` reached the disk. */
  imageOf(units: readonly Unit[], kept: readonly boolean[]): CrashState {
    const names = new Map(this.durableNames);
    const keptNs = new Set<number>();
    const keptData = new Map<number, Map<number, Unit[]>>();
    units.forEach((u, j) => {
      if (!kept[j]) return;
      if (u.k === 'ns') keptNs.add(u.i);
      else {
        let byOp = keptData.get(u.ino);
        if (!byOp) keptData.set(u.ino, (byOp = new Map()));
        byOp.set(u.i, [...(byOp.get(u.i) ?? []), u]);
      }
    });
    this.pendingNs.forEach((op, i) => keptNs.has(i) && FsModel.applyNs(names, op));
    const contents = new Map<number, Buffer>();
    const files = new Map<string, Buffer>();
    for (const [p, ino] of names) {
      let content = contents.get(ino);
      if (!content) {
        const n = this.inodes.get(ino)!;
        content = n.durable;
        const byOp = keptData.get(ino);
        n.pending.forEach((op, i) => {
          const pieces = byOp?.get(i);
          if (!pieces) return;
          if (op.k === 't') content = applyData(content!, op);
          else for (const u of pieces as Extract<Unit, { k: 'data' }>[]) content = applyData(content!, { k: 'w', pos: u.from, data: op.data.subarray(u.from - op.pos, u.to - op.pos) });
        });
        contents.set(ino, content);
      }
      files.set(p, Buffer.from(content));
    }
    return { files, dirs: new Set(this.dirs) };
  }

  /** One random disk image after a power loss now (each unsynced operation kept with a random bias). */
  crashState(rng: () => number): CrashState {
    const units = this.units();
    const bias = [0.2, 0.5, 0.8][Math.floor(rng() * 3)]!;
    return this.imageOf(units, units.map(() => rng() < bias));
  }

  /** Every crash state (≤ maxExhaustiveOps unsynced operations) or `samples` of them; see the header. */
  *crashStates(opts: CrashStatesOptions): Generator<CrashState> {
    const units = this.units();
    const seen = new Set<string>();
    const unique = (st: CrashState): boolean => {
      const h = createHash('sha1');
      for (const [p, b] of [...st.files].sort(([a], [b]) => (a < b ? -1 : 1))) h.update(`${p}\0${b.length}\0`).update(b);
      const key = h.digest('hex');
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    };
    const maxOps = opts.maxExhaustiveOps ?? 10;
    if (units.length <= maxOps) {
      for (let mask = 0; mask < 2 ** units.length; mask++) {
        const st = this.imageOf(units, units.map((_, j) => ((mask >>> j) & 1) === 1));
        if (unique(st)) yield st;
      }
      return;
    }
    const samples = opts.samples ?? 20;
    const rng = opts.rng;
    for (let k = 0; k < samples; k++) {
      // Nothing kept and everything kept first, then random choices with a per-state bias.
      const bias = k === 0 ? 0 : k === 1 ? 1 : [0.2, 0.5, 0.8][Math.floor(rng() * 3)]!;
      const st = this.imageOf(units, units.map(() => rng() < bias));
      if (unique(st)) yield st;
    }
  }
}

export interface CrashStatesOptions {
  /** Explore every state when a crash point has at most this many unsynced operations (default 10). */
  maxExhaustiveOps?: number;
  /** Otherwise take this many (default 20). */
  samples?: number;
  /** Seeded PRNG for the samples (seededRandom). */
  rng: () => number;
}

interface OpenFile {
  ino: number;
  path: string;
  readable: boolean;
  writable: boolean;
}

function fsError(code: string, p: string, action: string): Error {
  return ioError(Object.assign(new Error(`${code}: ${action} '${p}'`), { code }), p, action);
}

export interface CrashFSOptions {
  /** Keep a journal of mutations (for crash states); off for the recovery side of a check. */
  record?: boolean;
  /** Fail any operation after this many (guards tests against endless loops). */
  maxOperations?: number;
  /** Largest single read or write accepted (guards tests against unbounded allocation). */
  maxIoBytes?: number;
}

/** In-memory FileIO that records a crash journal. */
export class CrashFS implements FileIO {
  readonly journal: Event[] = [];
  private readonly model: FsModel;
  private readonly fds = new Map<number, OpenFile>();
  private nextFd = 1000;
  private readonly record: boolean;
  private operations = 0;
  private readonly maxOperations: number;
  private readonly maxIoBytes: number;
  /** Largest read or write length seen (bytes). */
  maxIoSeen = 0;

  constructor(initial?: CrashState, opts: CrashFSOptions = {}) {
    this.model = new FsModel(initial);
    this.record = opts.record ?? true;
    this.maxOperations = opts.maxOperations ?? Infinity;
    this.maxIoBytes = opts.maxIoBytes ?? Infinity;
  }

  /** Journal position (crash points are 0..length). */
  get length(): number {
    return this.journal.length;
  }

  /** The initial image this FS started from (for replay). */
  static replay(events: readonly Event[], initial?: CrashState): CrashSimulator {
    return new CrashSimulator(events, initial);
  }

  /** Records a marker (for example "offsets 0..9 acknowledged flushed") at the current point. */
  mark(value: unknown): void {
    this.emit({ e: 'mark', value });
  }

  /** Everything, as if synced: the state without a crash. */
  liveState(): CrashState {
    return this.model.liveState();
  }

  private emit(ev: Event): void {
    this.model.apply(ev);
    if (this.record) this.journal.push(ev);
  }

  private tick(what: string, p: string): void {
    if (++this.operations > this.maxOperations) throw new Error(`operation budget of ${this.maxOperations} exceeded at ${what} ${p} (endless loop?)`);
  }

  private file(fd: number, action: string): OpenFile {
    const f = this.fds.get(fd);
    if (!f) throw fsError('EBADF', `fd ${fd}`, action);
    return f;
  }

  private checkIoBytes(length: number, p: string): void {
    this.maxIoSeen = Math.max(this.maxIoSeen, length);
    if (length > this.maxIoBytes) throw new Error(`I/O of ${length} bytes on ${p} exceeds the test bound of ${this.maxIoBytes}`);
  }

  open(p: string, flags: string): number {
    p = path.resolve(p);
    this.tick('open', p);
    if (this.model.dirs.has(p)) {
      if (flags !== 'r') throw fsError('EISDIR', p, 'open');
    }
    let ino = this.model.names.get(p);
    const create = flags.startsWith('w') || flags.startsWith('a');
    if (ino === undefined) {
      if (!create) throw fsError('ENOENT', p, 'open');
      if (!this.model.dirs.has(path.dirname(p))) throw fsError('ENOENT', p, 'open');
      ino = this.model.nextIno++;
      this.emit({ e: 'create', path: p, ino });
    } else if (flags.startsWith('w') && this.model.inodes.get(ino)!.size > 0) {
      this.emit({ e: 'trunc', ino, len: 0 });
    }
    const fd = this.nextFd++;
    this.fds.set(fd, { ino, path: p, readable: flags.includes('r') || flags.includes('+'), writable: flags !== 'r' });
    return fd;
  }

  close(fd: number): void {
    this.file(fd, 'close');
    this.fds.delete(fd);
  }

  read(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
    const f = this.file(fd, 'read');
    this.tick('read', f.path);
    this.checkIoBytes(length, f.path);
    if (!f.readable) throw fsError('EBADF', f.path, 'read');
    const n = this.model.inodes.get(f.ino)!;
    if (position >= n.size) return 0;
    const count = Math.min(length, n.size - position);
    n.data.copy(buf, offset, position, position + count);
    return count;
  }

  write(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
    const f = this.file(fd, 'write');
    this.tick('write', f.path);
    this.checkIoBytes(length, f.path);
    if (!f.writable) throw fsError('EBADF', f.path, 'write');
    this.emit({ e: 'write', ino: f.ino, pos: position, data: Buffer.from(buf.subarray(offset, offset + length)) });
    return length;
  }

  truncate(fd: number, length: number): void {
    const f = this.file(fd, 'truncate');
    this.tick('truncate', f.path);
    if (!f.writable) throw fsError('EINVAL', f.path, 'truncate');
    this.emit({ e: 'trunc', ino: f.ino, len: length });
  }

  fstat(fd: number): FileStat {
    const f = this.file(fd, 'stat');
    const n = this.model.inodes.get(f.ino)!;
    return { size: n.size, mtimeMs: n.mtimeMs, isDirectory: false, isFile: true };
  }

  datasync(fd: number): void {
    const f = this.file(fd, 'fdatasync');
    this.tick('fdatasync', f.path);
    this.emit({ e: 'sync', ino: f.ino });
  }

  datasyncAsync(fd: number): Promise<void> {
    return settleLater(() => this.datasync(fd));
  }

  rename(from: string, to: string): void {
    from = path.resolve(from);
    to = path.resolve(to);
    this.tick('rename', from);
    if (!this.model.names.has(from)) throw fsError('ENOENT', from, `rename to ${to}`);
    if (!this.model.dirs.has(path.dirname(to))) throw fsError('ENOENT', to, `rename to ${to}`);
    this.emit({ e: 'rename', from, to });
  }

  /** The model has no hard links: refused as across file systems, so callers copy (through this FS). */
  link(from: string, to: string): void {
    this.tick('link', path.resolve(from));
    throw fsError('EXDEV', path.resolve(to), `link to ${from}`);
  }

  unlink(p: string): void {
    p = path.resolve(p);
    this.tick('unlink', p);
    if (!this.model.names.has(p)) return;
    this.emit({ e: 'unlink', path: p });
  }

  mkdirp(p: string): void {
    p = path.resolve(p);
    if (this.model.names.has(p)) throw fsError('EEXIST', p, 'mkdir');
    if (!this.model.dirs.has(p)) this.emit({ e: 'mkdir', path: p });
  }

  readdir(p: string): string[] {
    p = path.resolve(p);
    this.tick('readdir', p);
    if (!this.model.dirs.has(p)) throw fsError(this.model.names.has(p) ? 'ENOTDIR' : 'ENOENT', p, 'readdir');
    const out: string[] = [];
    for (const name of this.model.names.keys()) if (path.dirname(name) === p) out.push(path.basename(name));
    for (const d of this.model.dirs) if (d !== p && path.dirname(d) === p) out.push(path.basename(d));
    return out;
  }

  stat(p: string): FileStat | undefined {
    p = path.resolve(p);
    if (this.model.dirs.has(p)) return { size: 4096, mtimeMs: 0, isDirectory: true, isFile: false };
    const ino = this.model.names.get(p);
    if (ino === undefined) return undefined;
    const n = this.model.inodes.get(ino)!;
    return { size: n.size, mtimeMs: n.mtimeMs, isDirectory: false, isFile: true };
  }

  syncDir(p: string): void {
    p = path.resolve(p);
    this.tick('syncDir', p);
    if (!this.model.dirs.has(p)) throw fsError('ENOENT', p, 'fsync of directory');
    this.emit({ e: 'syncdir', path: p });
  }

  syncDirAsync(p: string): Promise<void> {
    return settleLater(() => this.syncDir(p));
  }

  utimes(p: string, mtimeMs: number): void {
    const ino = this.model.names.get(path.resolve(p));
    if (ino === undefined) throw fsError('ENOENT', p, 'utimes');
    this.model.inodes.get(ino)!.mtimeMs = mtimeMs;
  }
}

/**
 * An asynchronous fsync of the model: the effect happens now (in journal order), the promise
 * settles on a later turn as a real fsync would, so appends arriving meanwhile form the next group.
 */
function settleLater(sync: () => void): Promise<void> {
  try {
    sync();
  } catch (e) {
    return Promise.reject(e);
  }
  return new Promise((resolve) => setImmediate(resolve));
}

/** Replays a journal step by step and produces crash states at the current step. */
export class CrashSimulator {
  private readonly model: FsModel;
  private readonly events: readonly Event[];
  private position = 0;
  /** Marker values passed so far, in order. */
  readonly marks: unknown[] = [];

  constructor(events: readonly Event[], initial?: CrashState) {
    this.events = events;
    this.model = new FsModel(initial);
  }

  get length(): number {
    return this.events.length;
  }

  /** Applies events until `position` of them have happened (never goes back). */
  advanceTo(position: number): void {
    if (position < this.position) throw new Error(`cannot replay backwards (at ${this.position}, asked ${position})`);
    while (this.position < position) {
      const ev = this.events[this.position++]!;
      if (ev.e === 'mark') this.marks.push(ev.value);
      this.model.apply(ev);
    }
  }

  crashState(rng: () => number): CrashState {
    return this.model.crashState(rng);
  }

  /** How many unsynced operations a crash now could keep or lose. */
  get unsyncedOps(): number {
    return this.model.units().length;
  }

  /** Every crash state at the current step, or a sample of them (see the header). */
  crashStates(opts: CrashStatesOptions): Generator<CrashState> {
    return this.model.crashStates(opts);
  }
}

/** Small deterministic PRNG (mulberry32): crash states are reproducible from a seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
