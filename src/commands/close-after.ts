/**
 * Commands that open a log, change it and close it: the first failure is the one reported. When the
 * work fails (a full disk, an unusable --keep-removed dir), the log is still closed — its locks and
 * files released — but an error from closing (a checkpoint's `.tmp` on the same full disk) must not
 * replace the error that stopped the work.
 */
import type { Log } from '../api/log.js';

export async function closeAfter<T>(log: Log, work: () => T | Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await work();
  } catch (e) {
    try {
      await log.close();
    } catch {
      // Reporting the first error; close() has released the lock and files in its finally.
    }
    throw e;
  }
  await log.close();
  return result;
}
