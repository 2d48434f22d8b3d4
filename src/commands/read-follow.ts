/**
 * `read --follow`: after the records there are, keep printing the ones a writer appends — as
 * kafka-console-consumer does against a broker, here offline against the partition directory. The
 * directory is polled every FOLLOW_POLL_MS: when a `.log` file appears, goes or changes size, the
 * log is opened again read-only (the stable open, which sees only complete batches of a live
 * writer) and read from the next offset not yet seen, so every record is printed once, in order.
 * SIGINT ends it with exit 0; a closed pipe ends it quietly at the next write.
 */
import path from 'node:path';
import { realIO, type LogRecord } from '../api/format.js';
import type { Log } from '../api/log.js';
import type { Output } from '../render/output.js';

/** How often the directory is looked at for new data. */
export const FOLLOW_POLL_MS = 200;

export interface FollowOptions {
  /** The next offset not yet read: the end of what was read before following. */
  nextOffset: number;
  fromTime?: number;
  /** Exclusive end: following stops once it is reached. */
  toOffset?: number;
  includeControl?: boolean;
  pollMs?: number;
}

/**
 * Follows the log at `dir` until SIGINT, a closed pipe, `toOffset`, or `onRecord` returning false.
 * `reopen` opens the log read-only (the command's own open, with its warnings).
 */
export async function followLog(dir: string, opts: FollowOptions, reopen: () => Log, onRecord: (r: LogRecord) => boolean, out: Output): Promise<void> {
  let next = opts.nextOffset;
  if (opts.toOffset !== undefined && next >= opts.toOffset) return;
  const interrupt = new Interrupt();
  let seen = logFilesFingerprint(dir);
  try {
    while (!interrupt.requested && !out.closed) {
      await out.flush();
      await interrupt.sleep(opts.pollMs ?? FOLLOW_POLL_MS);
      if (interrupt.requested) break;
      const now = logFilesFingerprint(dir);
      if (now === seen) continue;
      seen = now;
      const log = reopen();
      try {
        for (const r of log.read({ fromOffset: Math.max(next, log.logStartOffset), fromTime: opts.fromTime, toOffset: opts.toOffset, includeControl: opts.includeControl })) {
          const more = onRecord(r);
          if (out.flushDue) await out.flush();
          if (!more) return;
        }
        next = Math.max(next, log.nextOffset);
      } finally {
        await log.close();
      }
      if (opts.toOffset !== undefined && next >= opts.toOffset) return;
    }
  } finally {
    interrupt.dispose();
  }
}

/** The `.log` files' names and the newest one's size: changes whenever records are appended, a segment rolls or one is deleted. */
function logFilesFingerprint(dir: string): string {
  const logs = realIO.readdir(dir).filter((n) => n.endsWith('.log')).sort();
  const last = logs.at(-1);
  return `${logs.join(',')}:${last === undefined ? '' : (realIO.stat(path.join(dir, last))?.size ?? '')}`;
}

/** SIGINT as a request to stop, waking a pending sleep; the process then ends normally (exit 0). */
class Interrupt {
  requested = false;
  private wake: (() => void) | undefined;
  private readonly onSignal = () => {
    this.requested = true;
    this.wake?.();
  };

  constructor() {
    process.on('SIGINT', this.onSignal);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wake = undefined;
        resolve();
      }
      this.wake = done;
    });
  }

  dispose(): void {
    process.off('SIGINT', this.onSignal);
  }
}
