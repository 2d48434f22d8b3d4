/**
 * The main thread's side of the offset map build's read-ahead worker (map-worker.ts): Kafka's
 * Cleaner.buildOffsetMap reads, checks and hashes on the cleaner thread; here a second core does
 * that while this thread fills the map (OffsetMap.putDigest) in file order.
 *
 * - One worker per process, as Kafka's cleaner threads are the broker's: started by a cleaning
 *   run whose dirty range is at least MAP_WORKER_MIN_DIRTY_BYTES, before its header scan; it
 *   warms itself up (map-worker.ts) and is used by the runs that find it ready and free, kept
 *   between them, and terminated after MAP_WORKER_IDLE_MS idle or when a run using it fails.
 *   Only on the production file layer (nativeIO: a test's fault-injecting or in-memory layer is
 *   not the worker's), from compiled JavaScript (a test runner on TypeScript sources has no
 *   worker entry), and when the memory bound has room for it (mapWorkerMemoryBytes) — otherwise
 *   the map build reads itself, as before.
 * - A job is one map build's dirty segments; its results arrive in order, are consumed one message
 *   at a time (the worker is held to MAP_RESULTS_IN_FLIGHT_BYTES ahead), and a job that ends
 *   early (map full, an error) is cancelled: its later messages are dropped as they arrive.
 * - A job the worker could not finish (a corrupt batch, a read error, the worker gone) ends with
 *   `failed`: the map build reads on from the first batch not delivered itself, so errors are the
 *   ones the cleaner reports without the worker.
 */
import { Worker } from 'node:worker_threads';
import { isProductionIO, type FileIO } from '../io.js';
import { workerEntryAvailable } from '../logdir/worker-pool.js';
import { READ_CHUNK_BYTES } from './batch-reader.js';
import { MAP_RESULTS_IN_FLIGHT_BYTES, MAP_WORKER_READY, resultBytesFor, S_CANCELLED, S_CONSUMED, SHARED_WORDS, type MapJob, type MapJobSegment, type MapResult, type MapWorkerData } from './map-worker.js';

const ENTRY = new URL('./map-worker.js', import.meta.url);

/** Dirty bytes from which the map build reads on a second core (below, the worker's start costs more than it saves). */
export const MAP_WORKER_MIN_DIRTY_BYTES = 16 * 1024 * 1024;
/** Allowance for the worker's own JavaScript heap (its isolate, code and short-lived objects). */
const MAP_WORKER_HEAP_BYTES = 8 * 1024 * 1024;

/**
 * Decompressed records of one batch the worker takes at most: a batch beyond it ends the worker's
 * job there and the map build reads on itself (whose own bound is larger: memory.ts).
 */
export const MAP_WORKER_MAX_DECOMPRESSED_BYTES = 1024 * 1024;

/**
 * Bytes the worker holds at most, for batches of up to maxEntryBytes: its reader (a chunk plus
 * the largest batch), one batch's decompressed records, the results in flight (at most the
 * allowance, or one message) and its heap.
 */
export function mapWorkerMemoryBytes(maxEntryBytes: number): number {
  // A record takes at least 7 bytes (its length, attributes, three varints and two lengths).
  const oneBatchResults = resultBytesFor(Math.ceil(Math.max(maxEntryBytes, MAP_WORKER_MAX_DECOMPRESSED_BYTES) / 7));
  return READ_CHUNK_BYTES + maxEntryBytes + MAP_WORKER_MAX_DECOMPRESSED_BYTES + MAP_RESULTS_IN_FLIGHT_BYTES + oneBatchResults + MAP_WORKER_HEAP_BYTES;
}

/** Jobs started and batches delivered in this process (tests: that the worker did the reading). */
export const readAheadStats = { jobs: 0, batchesDelivered: 0 };

/** The results of one map build, in order. */
export class MapJobResults {
  private readonly queue: MapResult[] = [];
  private wake: (() => void) | undefined;
  private ended = false;

  /** Some of the results were taken. */
  taken = false;

  constructor(
    readonly id: number,
    private readonly owner: MapReadAhead,
    readonly segments: readonly MapJobSegment[],
  ) {}

  /** The next message; a `failed` one when the worker is gone. */
  async next(): Promise<MapResult> {
    this.taken = true;
    while (this.queue.length === 0) {
      if (this.ended) return { id: this.id, seg: -1, batches: 0, words: 0, buf: new ArrayBuffer(0), end: false, failed: true };
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    return this.queue.shift()!;
  }

  /** Gives a consumed message's bytes back to the worker's allowance. */
  consumed(m: MapResult): void {
    this.owner.release(m.buf.byteLength);
  }

  /** @internal */
  deliver(m: MapResult): void {
    readAheadStats.batchesDelivered += m.batches;
    this.queue.push(m);
    this.wakeUp();
  }

  /** @internal No more messages will come (the worker is gone). */
  end(): void {
    this.ended = true;
    this.wakeUp();
  }

  /** @internal Drops what arrived and has not been consumed. */
  drop(): void {
    for (const m of this.queue.splice(0)) this.consumed(m);
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}

/**
 * Whether a job given `a` reads what `b` asks for: the same segment from the same position, with
 * no CRC skipped that `b` would compute (the map build counts CRCs by its own verified ranges).
 */
function sameSegment(a: MapJobSegment, b: MapJobSegment): boolean {
  const skipsNone = a.verifiedTo <= a.verifiedFrom;
  return a.path === b.path && a.baseOffset === b.baseOffset && a.size === b.size && a.startPosition === b.startPosition && (skipsNone || (a.verifiedFrom === b.verifiedFrom && a.verifiedTo === b.verifiedTo));
}

/** An idle worker is terminated after this long without a job. */
export const MAP_WORKER_IDLE_MS = 30_000;

/** The process's read-ahead worker (one: the machine's second core; a run that finds it busy reads itself). */
let processWorker: MapReadAhead | undefined;

export class MapReadAhead {
  private readonly worker: Worker;
  private readonly shared = new Int32Array(new SharedArrayBuffer(4 * SHARED_WORDS));
  private nextId = 1;
  private current: MapJobResults | undefined;
  private ready = false;
  private taken = false;
  private gone = false;
  private idleTimer: NodeJS.Timeout | undefined;

  /**
   * Starts the process's worker unless it runs already (it warms itself up, ~100–200 ms on the
   * other core) — where one can run: the production file layer, compiled JavaScript.
   */
  static prepare(io: FileIO): void {
    if (processWorker || !isProductionIO(io) || !workerEntryAvailable(ENTRY)) return;
    processWorker = new MapReadAhead();
  }

  /** The process's worker for one run, if it is warmed up and no other run has it. */
  static take(io: FileIO): MapReadAhead | undefined {
    const w = processWorker;
    if (!w || !w.ready || w.taken || w.gone || !isProductionIO(io)) return undefined;
    w.taken = true;
    clearTimeout(w.idleTimer);
    return w;
  }

  /** Whether the process has a worker started (tests: none is left behind), and whether it is ready. */
  static get state(): 'none' | 'starting' | 'ready' {
    return processWorker === undefined ? 'none' : processWorker.ready ? 'ready' : 'starting';
  }

  private constructor() {
    // No flags of this process's (`--input-type` of `node -e` would stop a worker started from a file).
    this.worker = new Worker(ENTRY, { execArgv: [], workerData: { entry: ENTRY.href, shared: this.shared } satisfies MapWorkerData });
    this.worker.unref(); // ref'd only while a job runs
    this.worker.on('message', (m: MapResult | typeof MAP_WORKER_READY) => {
      if (m === MAP_WORKER_READY) {
        this.ready = true;
        this.idle();
      } else if (this.current?.id === m.id) this.current.deliver(m);
      else this.release(m.buf.byteLength); // a cancelled job's
    });
    const lost = (): void => {
      this.gone = true;
      if (processWorker === this) processWorker = undefined;
      this.current?.end();
    };
    this.worker.on('error', lost);
    this.worker.on('exit', lost);
  }

  /**
   * The results of reading `segments` ahead: the current job's, when it was started for the same
   * segments (or a list they begin) and nothing of it was taken yet — a job started before the
   * header scan; otherwise a new job's. Undefined when the worker is gone.
   */
  job(segments: MapJobSegment[], maxBatchBytes: number): MapJobResults | undefined {
    const cur = this.current;
    if (cur && !cur.taken && cur.segments.length >= segments.length && segments.every((s, i) => sameSegment(cur.segments[i]!, s))) return cur;
    this.cancel();
    if (this.gone) return undefined;
    const id = this.nextId++;
    this.current = new MapJobResults(id, this, segments);
    readAheadStats.jobs++;
    this.worker.ref();
    this.worker.postMessage({ id, segments, maxBatchBytes, maxDecompressedBytes: MAP_WORKER_MAX_DECOMPRESSED_BYTES } satisfies MapJob);
    return this.current;
  }

  /** Stops the current job (its later messages are dropped). */
  cancel(): void {
    const job = this.current;
    if (!job) return;
    this.current = undefined;
    Atomics.store(this.shared, S_CANCELLED, job.id);
    Atomics.notify(this.shared, S_CONSUMED);
    job.drop();
    this.worker.unref();
  }

  /** @internal */
  release(bytes: number): void {
    Atomics.add(this.shared, S_CONSUMED, bytes);
    Atomics.notify(this.shared, S_CONSUMED);
  }

  /**
   * The run that took the worker is over: its job is cancelled and the worker waits for the next
   * run (terminated after MAP_WORKER_IDLE_MS idle) — or, after a failed run, is terminated now.
   */
  async giveBack(failed: boolean): Promise<void> {
    this.cancel();
    this.taken = false;
    if (failed) await this.close();
    else this.idle();
  }

  private idle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.close(), MAP_WORKER_IDLE_MS);
    this.idleTimer.unref();
  }

  /** Terminates the worker. */
  async close(): Promise<void> {
    this.cancel();
    clearTimeout(this.idleTimer);
    this.gone = true;
    if (processWorker === this) processWorker = undefined;
    await this.worker.terminate();
  }
}

/** Terminates the process's worker, if any (tests; an idle one also ends by itself). */
export async function closeMapReadAhead(): Promise<void> {
  await processWorker?.close();
}
