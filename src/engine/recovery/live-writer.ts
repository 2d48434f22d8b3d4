/**
 * A reader beside a live writer. Kafka has no such reader (a log is read by the broker that writes
 * it), but logtool's loader and verify run beside one: what looks wrong at the log's end may be a
 * write or a roll in progress (LogSegment's files appear one by one; a batch is copied in over
 * preallocated zeros). Such a reader looks again before calling it damage.
 */
import { DirectoryLock } from '../log/lock.js';
import { sleepSync } from '../cleaner/generation.js';

/**
 * `read()`, and while its result is `wrong` and another writer holds the partition `dir`, `read()`
 * again 1 ms later, at most `maxLooks` more times. Returns the last result read.
 */
export function lookAgainBesideWriter<T>(dir: string, maxLooks: number, read: () => T, wrong: (value: T) => boolean): T {
  let value = read();
  for (let look = 0; look < maxLooks && wrong(value) && DirectoryLock.isHeld(dir); look++) {
    sleepSync(1);
    value = read();
  }
  return value;
}
