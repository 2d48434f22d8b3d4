/**
 * Nothing recovery removes is destroyed silently: cut-off tails and dropped segments are moved to
 * `<partition>/lost+found/` unless the caller asked to discard them. Kafka ignores that directory
 * (it is not a segment file name), so a broker can still open the partition afterwards.
 *
 * Names say where the bytes came from: `<segment file>.bytes-<from>-<to>.<time>` for a cut tail
 * (byte range of the original file) and `<segment file>.dropped.<time>` for a whole file.
 *
 * Crash safety: a saved tail is fsynced (file and directory) before the caller truncates, so a
 * crash in between leaves the bytes in both places, never in neither.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { SymlinkError } from '../errors.js';

export const LOST_AND_FOUND = 'lost+found';
const COPY_CHUNK_BYTES = 1 << 20;
/** Attempts at finding a free name before giving up (two recoveries in the same millisecond). */
const MAX_NAME_ATTEMPTS = 1000;

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

export interface LostAndFoundOptions {
  /** Delete instead of keeping. */
  discard: boolean;
  /** Compute names only; touch nothing. */
  dryRun: boolean;
}

/** One recovery run's lost+found: where cut bytes and dropped files go. */
export class LostAndFound {
  readonly dir: string;
  private readonly io: FileIO;
  private readonly partitionDir: string;
  private readonly opts: LostAndFoundOptions;
  private readonly stamp = stamp();
  private created = false;
  private pendingRenames = false;

  constructor(io: FileIO, partitionDir: string, opts: LostAndFoundOptions) {
    this.io = io;
    this.partitionDir = partitionDir;
    this.dir = path.join(partitionDir, LOST_AND_FOUND);
    this.opts = opts;
  }

  private ensureDir(): void {
    if (this.created) return;
    const st = this.io.stat(this.dir);
    // Cut bytes and dropped files stay inside the partition: never moved through a symbolic link.
    if (st?.isSymlink) throw new SymlinkError(this.dir);
    if (!st) {
      this.io.mkdirp(this.dir);
      // The new directory entry must be durable before anything is moved into it.
      this.io.syncDir(this.partitionDir);
    }
    this.created = true;
  }

  private freeName(base: string): string {
    let candidate = path.join(this.dir, base);
    for (let i = 1; i < MAX_NAME_ATTEMPTS && !this.opts.dryRun && this.io.stat(candidate); i++) candidate = path.join(this.dir, `${base}-${i}`);
    return candidate;
  }

  /**
   * Keeps bytes [from, size) of a file (size as the caller saw it). Returns where they went
   * (or would go, dry run), or undefined when discarding.
   */
  saveTail(file: string, from: number, size: number): string | undefined {
    if (this.opts.discard) return undefined;
    const target = this.freeName(`${path.basename(file)}.bytes-${from}-${size}.${this.stamp}`);
    if (this.opts.dryRun) return target;
    this.ensureDir();
    const src = this.io.open(file, 'r');
    try {
      const dst = this.io.open(target, 'w');
      try {
        const buf = Buffer.allocUnsafe(Math.min(COPY_CHUNK_BYTES, Math.max(1, size - from)));
        let pos = from;
        while (pos < size) {
          const n = this.io.read(src, buf, 0, Math.min(buf.length, size - pos), pos);
          if (n <= 0) break;
          this.io.write(dst, buf, 0, n, pos - from);
          pos += n;
        }
        this.io.datasync(dst);
      } finally {
        this.io.close(dst);
      }
    } finally {
      this.io.close(src);
    }
    this.io.syncDir(this.dir);
    return target;
  }

  /** Moves a whole file aside (or deletes it when discarding). Call sync() after a series of moves. */
  moveAside(file: string): string | undefined {
    if (this.opts.discard) {
      if (!this.opts.dryRun) this.io.unlink(file);
      this.pendingRenames = true;
      return undefined;
    }
    const target = this.freeName(`${path.basename(file)}.dropped.${this.stamp}`);
    if (this.opts.dryRun) return target;
    this.ensureDir();
    this.io.rename(file, target);
    this.pendingRenames = true;
    return target;
  }

  /** Makes the moves durable: both directories fsynced. */
  sync(): void {
    if (!this.pendingRenames || this.opts.dryRun) return;
    this.io.syncDir(this.partitionDir);
    if (this.created) this.io.syncDir(this.dir);
    this.pendingRenames = false;
  }
}
