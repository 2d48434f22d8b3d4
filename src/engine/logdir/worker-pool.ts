/**
 * A bounded pool of worker threads for per-partition work (Kafka's LogManager runs its loads on
 * num.recovery.threads.per.data.dir threads per log directory: a fixed pool, one job per partition).
 *
 * - A job is a plain, structured-clonable message; `map` delivers each outcome in job order, so
 *   what a caller does with them is the same for every pool size.
 * - A job that throws is delivered as an error naming what it was given; a worker that dies fails
 *   its job and is replaced, so the pool never hangs.
 * - Workers start lazily, at most `size`, and never for one job or a pool of one: `inline` runs
 *   then, on this thread, so the one-thread path costs nothing. `close()` terminates them.
 * - flock(2) is the main thread's: the fs-ext add-on crashes the process when a second thread
 *   loads it, so a worker's flock calls are sent here (the descriptor is the process's, so the
 *   lock is the worker's open file) and answered synchronously over a SharedArrayBuffer.
 *   Blocking locks are refused on a worker (this thread could wait on one while the worker waits
 *   on this thread).
 *
 * Entries are compiled JavaScript (`new URL('./x.js', import.meta.url)` beside this file in
 * dist/); run from TypeScript sources (a test runner) there is none, and every job runs inline.
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { installIO, nativeIO, realIO } from '../io.js';
import { LogtoolError, type ErrorKind } from '../errors.js';

export interface SerializedError {
  kind: ErrorKind | undefined;
  message: string;
  file: string | undefined;
  position: number | undefined;
}

export type JobOutcome<R> = { ok: true; value: R } | { ok: false; error: Error };

interface Request {
  id: number;
  job: unknown;
}
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: SerializedError };
interface FlockCall {
  flock: { fd: number; mode: 'exnb' };
}

/** flock answers in the shared array: [0] 0 pending / 1 answered; [1] 0 locked, 1 held elsewhere, 2 failed. */
const FLOCK_LOCKED = 0;
const FLOCK_HELD = 1;
const FLOCK_FAILED = 2;

export function serializeError(e: unknown): SerializedError {
  if (e instanceof LogtoolError) return { kind: e.kind, message: e.message, file: e.file, position: e.position };
  return { kind: undefined, message: (e as Error)?.message ?? String(e), file: undefined, position: undefined };
}

export function deserializeError(s: SerializedError): Error {
  if (s.kind) return new LogtoolError(s.kind, s.message, { file: s.file, position: s.position });
  return new Error(s.message);
}

/** True when `entry` can run on a worker thread (compiled JavaScript, not a TypeScript source). */
export function workerEntryAvailable(entry: URL): boolean {
  return /\.[cm]?js$/.test(entry.pathname) && realIO.stat(fileURLToPath(entry))?.isDirectory === false;
}

interface WorkerData {
  flockAnswer: Int32Array;
  /** The module the worker was started with: the one that serves jobs. */
  entry: string;
}

/** True on a worker thread this pool started with `moduleUrl` as its entry (pass import.meta.url). */
export function isWorkerEntry(moduleUrl: string): boolean {
  return !isMainThread && (workerData as WorkerData | undefined)?.entry === moduleUrl;
}

interface Slot {
  worker: Worker;
  busy: boolean;
}

export class WorkerPool<J, R> {
  private readonly slots: Slot[] = [];
  private closed = false;

  /**
   * `entry` is a module calling serveJobs; `inline` does the same work on this thread (without
   * it, a caller runs jobs itself unless usesWorkers). `describe` names a job in errors (its partition).
   */
  constructor(
    private readonly entry: URL,
    private readonly size: number,
    private readonly inline: ((job: J) => R | Promise<R>) | undefined,
    private readonly describe: (job: J) => string,
  ) {
    if (!Number.isSafeInteger(size) || size < 1) throw new LogtoolError('invalid-argument', `a worker pool needs a positive integer size, not ${size}`);
  }

  /** Whether `jobs` jobs would run on worker threads (otherwise inline). */
  usesWorkers(jobs: number): boolean {
    return this.size > 1 && jobs > 1 && workerEntryAvailable(this.entry);
  }

  /**
   * Runs every job, at most `size` at a time, and calls `onOutcome` for each in job order (the
   * next is not called before the previous one's promise settles). When `onOutcome` returns
   * false, no further job starts; jobs already running finish and are not delivered.
   */
  async map(jobs: readonly J[], onOutcome: (o: JobOutcome<R>, index: number) => boolean | Promise<boolean>): Promise<void> {
    if (this.closed) throw new LogtoolError('closed', 'the worker pool is closed');
    if (!this.usesWorkers(jobs.length)) {
      const inline = this.inline;
      if (!inline) throw new LogtoolError('internal', 'worker pool: no worker threads here and no inline runner');
      for (let i = 0; i < jobs.length; i++) {
        let o: JobOutcome<R>;
        try {
          o = { ok: true, value: await inline(jobs[i]!) };
        } catch (e) {
          o = { ok: false, error: e as Error };
        }
        if (!(await onOutcome(o, i))) return;
      }
      return;
    }
    const outcomes: (JobOutcome<R> | undefined)[] = new Array(jobs.length);
    let next = 0;
    let delivered = 0;
    let stopped = false;
    let wake: (() => void) | undefined;
    const runner = async () => {
      while (!stopped && next < jobs.length) {
        const i = next++;
        outcomes[i] = await this.runOnWorker(jobs[i]!);
        wake?.();
      }
    };
    const runners = Array.from({ length: Math.min(this.size, jobs.length) }, runner);
    try {
      while (delivered < jobs.length && !stopped) {
        const o = outcomes[delivered];
        if (o === undefined) {
          await new Promise<void>((r) => (wake = r));
          continue;
        }
        outcomes[delivered] = undefined; // delivered outcomes are not kept: memory stays bounded by the pool
        if (!(await onOutcome(o, delivered++))) stopped = true;
      }
    } finally {
      stopped = true;
      await Promise.all(runners);
    }
  }

  private idleSlot(): Slot {
    const idle = this.slots.find((s) => !s.busy);
    if (idle) return idle;
    if (this.slots.length >= this.size) throw new LogtoolError('internal', 'worker pool: more jobs in flight than workers');
    const shared = new Int32Array(new SharedArrayBuffer(8));
    const worker = new Worker(this.entry, { workerData: { flockAnswer: shared, entry: this.entry.href } satisfies WorkerData });
    worker.on('message', (m: FlockCall | Reply) => {
      if ('flock' in m) answerFlock(shared, m.flock.fd);
    });
    worker.unref(); // an idle worker keeps no process alive; a busy one is ref'd
    const slot = { worker, busy: false };
    this.slots.push(slot);
    return slot;
  }

  /** One job on an idle worker; a crashed worker fails the job and leaves the pool. */
  private runOnWorker(job: J): Promise<JobOutcome<R>> {
    const slot = this.idleSlot();
    slot.busy = true;
    const { worker } = slot;
    worker.ref();
    return new Promise<JobOutcome<R>>((resolve) => {
      const done = (o: JobOutcome<R>) => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        worker.unref();
        slot.busy = false;
        resolve(o);
      };
      const onMessage = (m: FlockCall | Reply) => {
        if ('flock' in m) return;
        done(m.ok ? { ok: true, value: m.value as R } : { ok: false, error: deserializeError(m.error) });
      };
      const gone = (why: string) => {
        const i = this.slots.indexOf(slot);
        if (i >= 0) this.slots.splice(i, 1);
        done({ ok: false, error: new LogtoolError('internal', `the worker thread for ${this.describe(job)} ${why}`) });
      };
      const onError = (e: Error) => gone(`failed: ${e.message}`);
      const onExit = (code: number) => gone(`exited with code ${code}`);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ id: 0, job } satisfies Request);
    });
  }

  /** Terminates every worker. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}

function answerFlock(shared: Int32Array, fd: number): void {
  let result = FLOCK_LOCKED;
  try {
    realIO.flock(fd, 'exnb');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    result = code === 'EAGAIN' || code === 'EWOULDBLOCK' ? FLOCK_HELD : FLOCK_FAILED;
  }
  Atomics.store(shared, 1, result);
  Atomics.store(shared, 0, 1);
  Atomics.notify(shared, 0);
}

/**
 * The worker side: installs the flock relay, then answers every job with `handler`'s result or
 * its error. Call once from a worker entry module.
 */
export function serveJobs(handler: (job: never) => unknown): void {
  if (isMainThread || !parentPort) throw new LogtoolError('internal', 'serveJobs runs on a worker thread');
  const port = parentPort;
  const shared = (workerData as WorkerData).flockAnswer;
  installIO({
    ...nativeIO,
    flock(fd, mode) {
      if (mode !== 'exnb') throw new LogtoolError('internal', 'a blocking lock is not taken on a worker thread');
      Atomics.store(shared, 0, 0);
      port.postMessage({ flock: { fd, mode } } satisfies FlockCall);
      Atomics.wait(shared, 0, 0);
      const result = Atomics.load(shared, 1);
      if (result === FLOCK_LOCKED) return;
      if (result === FLOCK_HELD) throw Object.assign(new Error('EWOULDBLOCK'), { code: 'EWOULDBLOCK' });
      throw new LogtoolError('io', 'flock failed', { file: `fd ${fd}` });
    },
    recordLock() {
      throw new LogtoolError('internal', 'record locks are not taken on a worker thread');
    },
  });
  port.on('message', (req: Request) => {
    void (async () => {
      let reply: Reply;
      try {
        reply = { id: req.id, ok: true, value: await handler(req.job as never) };
      } catch (e) {
        reply = { id: req.id, ok: false, error: serializeError(e) };
      }
      port.postMessage(reply);
    })();
  });
}
