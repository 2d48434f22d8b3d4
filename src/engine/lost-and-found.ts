/**
 * Nothing recovery removes is destroyed silently: cut-off tails and dropped segments are moved to
 * `<partition>/lost+found/` unless the caller asked to discard them. Kafka ignores that directory.
 */
import path from 'node:path';
import type { FileIO } from './io.js';

export const LOST_AND_FOUND = 'lost+found';
const COPY_CHUNK_BYTES = 1 << 20;

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

/** Copies bytes [from, end) of a file into lost+found; returns the new file's path. */
export function saveTail(io: FileIO, dir: string, file: string, from: number): string {
  const lf = path.join(dir, LOST_AND_FOUND);
  io.mkdirp(lf);
  const target = path.join(lf, `${path.basename(file)}.from-byte-${from}.${stamp()}`);
  const src = io.open(file, 'r');
  const dst = io.open(target, 'w');
  try {
    const size = io.fstat(src).size;
    const buf = Buffer.allocUnsafe(Math.min(COPY_CHUNK_BYTES, Math.max(1, size - from)));
    let pos = from;
    let out = 0;
    while (pos < size) {
      const n = io.read(src, buf, 0, Math.min(buf.length, size - pos), pos);
      if (n <= 0) break;
      io.write(dst, buf, 0, n, out);
      pos += n;
      out += n;
    }
    io.datasync(dst);
  } finally {
    io.close(src);
    io.close(dst);
  }
  io.syncDir(lf);
  return target;
}

/** Moves a whole file into lost+found; returns its new path. */
export function moveAside(io: FileIO, dir: string, file: string): string {
  const lf = path.join(dir, LOST_AND_FOUND);
  io.mkdirp(lf);
  const target = path.join(lf, `${path.basename(file)}.${stamp()}`);
  io.rename(file, target);
  return target;
}
