/**
 * The real file-I/O layer (src/engine/io.ts), counting the bytes read and the read calls on `.log`
 * files: for tests that check how often a walk reads a segment's data.
 */
import { nativeIO, type FileIO } from '../../src/engine/io.js';

export function countingIO(): { io: FileIO; logBytesRead: () => number; logReads: () => number } {
  const logFds = new Set<number>();
  let bytes = 0;
  let reads = 0;
  const io: FileIO = {
    ...nativeIO,
    open: (p, flags) => {
      const fd = nativeIO.open(p, flags);
      if (p.endsWith('.log')) logFds.add(fd);
      else logFds.delete(fd);
      return fd;
    },
    read: (fd, buf, offset, length, position) => {
      const n = nativeIO.read(fd, buf, offset, length, position);
      if (logFds.has(fd)) {
        bytes += n;
        reads++;
      }
      return n;
    },
  };
  return { io, logBytesRead: () => bytes, logReads: () => reads };
}
