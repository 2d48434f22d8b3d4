/**
 * A FileIO over another that remembers the path of every open descriptor, so that a test can
 * observe calls by file name (test helper, not a test file). `observe` gets the name of an fd and
 * returns the calls to override; open and close keep the names.
 */
import { realIO, type FileIO } from '../../src/engine/io.js';

export function pathTrackingIO(observe: (name: (fd: number) => string, base: FileIO) => Partial<FileIO>, base: FileIO = realIO): FileIO {
  const paths = new Map<number, string>();
  const name = (fd: number) => paths.get(fd) ?? `fd${fd}`;
  return {
    ...base,
    open(p, flags) {
      const fd = base.open(p, flags);
      paths.set(fd, p);
      return fd;
    },
    close(fd) {
      paths.delete(fd);
      base.close(fd);
    },
    ...observe(name, base),
  };
}
