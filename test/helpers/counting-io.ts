/**
 * The real file-I/O layer (src/engine/io.ts), counting the bytes read and the read calls on `.log`
 * files: for tests that check how often a walk reads a segment's data. Built on pathTrackingIO,
 * which knows each descriptor's file name.
 */
import { nativeIO, type FileIO } from '../../src/engine/io.js';
import { pathTrackingIO } from './path-io.js';

export function countingIO(): { io: FileIO; logBytesRead: () => number; logReads: () => number } {
  let bytes = 0;
  let reads = 0;
  const io = pathTrackingIO(
    (name, base) => ({
      read: (fd, buf, offset, length, position) => {
        const n = base.read(fd, buf, offset, length, position);
        if (name(fd).endsWith('.log')) {
          bytes += n;
          reads++;
        }
        return n;
      },
    }),
    nativeIO,
  );
  return { io, logBytesRead: () => bytes, logReads: () => reads };
}
