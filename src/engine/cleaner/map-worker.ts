/**
 * The offset map build's read-ahead on a second core (a worker_threads entry): reads the dirty
 * segments' v2 batches as Kafka's Cleaner.buildOffsetMapForSegment does (FileRecords.batches with
 * each batch's checks and CRC-32C, batch-reader.ts), walks their records (batch-records.ts) and
 * digests their keys (key-digest.ts), and hands the main thread, in file order, what the map
 * needs of each batch: its position, size, 61 header bytes, control type, and per record the
 * offset delta, the key length and the 16-byte key digest — about 24 bytes a record, in
 * transferred ArrayBuffers. The main thread fills the map (map-read-ahead.ts, offset-map-builder.ts).
 *
 * Bounded: one reader (a read chunk plus the largest batch), decompression bounded as the main
 * thread's, and results in flight to the main thread at most MAP_RESULTS_IN_FLIGHT_BYTES (or one
 * message) — the worker waits (Atomics.wait) until the main thread has consumed earlier ones.
 * Anything that goes wrong here (a corrupt batch, a read error) only ends the job: the worker
 * delivers the batches before it and says so; the main thread reads from there itself and reports
 * exactly what it would have without the worker.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { nativeIO } from '../io.js';
import { Attr, RECORD_BATCH_OVERHEAD, writeInt64 } from '../format/record-batch.js';
import { encodeBatch } from '../format/batch-encode.js';
import type { LogSegment } from '../segment/segment.js';
import { isWorkerEntry } from '../logdir/worker-pool.js';
import { BatchReader } from './batch-reader.js';
import { controlType, RecordRefs, walkRecords } from './batch-records.js';
import { keyDigestInto } from './key-digest.js';

/** Result bytes sent and not yet consumed, at most (unless one message alone is larger). */
export const MAP_RESULTS_IN_FLIGHT_BYTES = 1 << 20;
/** Bytes of one result message (larger only for one batch that does not fit). */
export const MAP_RESULT_MESSAGE_BYTES = 64 * 1024;

/** Int32 words of a batch's fixed part: position, size, control type, count, header (61 bytes). */
export const BATCH_WORDS = 4 + 16;
/** Words per record: offset delta and key length (two runs of `count`), then 4 digest words. */
export const RECORD_WORDS = 6;
/** Word indexes in a batch's fixed part. */
export const W_POSITION = 0;
export const W_SIZE = 1;
export const W_CONTROL_TYPE = 2;
export const W_COUNT = 3;
export const W_HEADER = 4;
/** W_CONTROL_TYPE of a batch that is no control batch, or one without a record. */
export const NO_CONTROL_TYPE = -0x80000000;

/** Shared Int32Array slots: result bytes sent, consumed (wrapping), and the last cancelled job. */
export const S_SENT = 0;
export const S_CONSUMED = 1;
export const S_CANCELLED = 2;
export const SHARED_WORDS = 4;

export interface MapJobSegment {
  path: string;
  baseOffset: number;
  size: number;
  startPosition: number;
  /** Positions whose CRCs this run has checked already (not computed again). */
  verifiedFrom: number;
  verifiedTo: number;
}

export interface MapJob {
  id: number;
  segments: MapJobSegment[];
  /** Bounds of the job (0: none): a larger batch, or larger decompressed records, end it. */
  maxDecompressedBytes: number;
  maxBatchBytes: number;
}

/** One message: whole batches of segment `seg`; `end` when the segment is done, `failed` when the job stopped before it. */
export interface MapResult {
  id: number;
  seg: number;
  batches: number;
  words: number;
  buf: ArrayBuffer;
  end: boolean;
  failed: boolean;
}

/** The message a worker sends once it has warmed up and takes jobs. */
export const MAP_WORKER_READY = 'ready';

export interface MapWorkerData {
  entry: string;
  shared: Int32Array;
}

/** Bytes of the results of a batch of `records` records. */
export function resultBytesFor(records: number): number {
  return 4 * (BATCH_WORDS + RECORD_WORDS * records);
}

class MapJobRunner {
  private readonly reader = new BatchReader(nativeIO);
  private readonly refs = new RecordRefs();
  private readonly digest = new Int32Array(4);
  private out = new Int32Array(MAP_RESULT_MESSAGE_BYTES / 4);
  private outBytes = Buffer.from(this.out.buffer);
  private words = 0;
  private batches = 0;

  /** Results are dropped, with no allowance, and nothing cancels the job (the start's warm-up). */
  warming = false;
  /** Opens a job's segment. */
  open: (s: MapJobSegment) => { seg: LogSegment; close(): void } = openSegment;

  constructor(
    private readonly shared: Int32Array,
    private readonly post: (m: MapResult) => void,
  ) {}

  run(job: MapJob): void {
    // Nothing of a cancelled job's last message is sent with this one's.
    this.words = this.batches = 0;
    for (let i = 0; i < job.segments.length; i++) {
      if (!this.segment(job, i)) {
        this.send(job.id, i, false, true);
        return;
      }
      if (!this.send(job.id, i, true, false)) return;
    }
  }

  private cancelled(id: number): boolean {
    return !this.warming && Atomics.load(this.shared, S_CANCELLED) >= id;
  }

  /** One segment's batches into messages; false when the job stops before its end. */
  private segment(job: MapJob, index: number): boolean {
    const s = job.segments[index]!;
    let file: { seg: LogSegment; close(): void };
    try {
      file = this.open(s);
    } catch {
      return false;
    }
    const seg = file.seg;
    const refs = this.refs;
    const opts = { file: s.path, filePosition: 0, maxDecompressedBytes: job.maxDecompressedBytes || undefined };
    this.reader.maxBufferBytes = job.maxBatchBytes || Infinity;
    try {
      for (const e of this.reader.batches(seg, s.startPosition, { from: s.verifiedFrom, to: s.verifiedTo })) {
        if (this.cancelled(job.id)) return false;
        opts.filePosition = e.position;
        walkRecords(e.buf, e.bufPos, e.header, refs, opts);
        const n = refs.count;
        const need = BATCH_WORDS + RECORD_WORDS * n;
        if (this.words + need > this.out.length) {
          if (this.batches > 0 && !this.send(job.id, index, false, false)) return false;
          if (need > this.out.length) this.fresh(need);
        }
        const out = this.out;
        const w = this.words;
        out[w + W_POSITION] = e.position;
        out[w + W_SIZE] = e.size;
        out[w + W_CONTROL_TYPE] = (e.header.attributes & Attr.control) !== 0 ? (controlType(refs) ?? NO_CONTROL_TYPE) : NO_CONTROL_TYPE;
        out[w + W_COUNT] = n;
        e.buf.copy(this.outBytes, 4 * (w + W_HEADER), e.bufPos, e.bufPos + RECORD_BATCH_OVERHEAD);
        const od = w + BATCH_WORDS;
        const kl = od + n;
        const dg = kl + n;
        const data = refs.data;
        const digest = this.digest;
        for (let r = 0; r < n; r++) {
          out[od + r] = refs.offsetDelta[r]!;
          const len = refs.keyLen[r]!;
          out[kl + r] = len;
          if (len < 0) continue;
          const ks = refs.keyStart[r]!;
          keyDigestInto(data, ks, ks + len, digest);
          const d = dg + 4 * r;
          out[d] = digest[0]!;
          out[d + 1] = digest[1]!;
          out[d + 2] = digest[2]!;
          out[d + 3] = digest[3]!;
        }
        this.words = w + need;
        this.batches++;
      }
      return true;
    } catch {
      // The main thread reads on from the first batch not delivered and reports what it finds.
      return false;
    } finally {
      file.close();
    }
  }

  private fresh(words: number): void {
    this.out = new Int32Array(Math.max(words, MAP_RESULT_MESSAGE_BYTES / 4));
    this.outBytes = Buffer.from(this.out.buffer);
    this.words = 0;
    this.batches = 0;
  }

  /** Sends the batches gathered (once the main thread has room for them); false when cancelled. */
  private send(id: number, seg: number, end: boolean, failed: boolean): boolean {
    const buf = this.out.buffer as ArrayBuffer;
    const bytes = buf.byteLength;
    const sh = this.shared;
    if (this.warming) {
      this.words = this.batches = 0;
      return true;
    }
    for (;;) {
      if (this.cancelled(id)) return false;
      const consumed = Atomics.load(sh, S_CONSUMED);
      const inFlight = (Atomics.load(sh, S_SENT) - consumed) | 0;
      if (inFlight <= 0 || inFlight + bytes <= MAP_RESULTS_IN_FLIGHT_BYTES) break;
      Atomics.wait(sh, S_CONSUMED, consumed);
    }
    Atomics.add(sh, S_SENT, bytes);
    this.post({ id, seg, batches: this.batches, words: this.words, buf, end, failed });
    this.fresh(0);
    return true;
  }
}

/** A segment file, read through its own descriptor. */
function openSegment(s: MapJobSegment): { seg: LogSegment; close(): void } {
  const fd = nativeIO.open(s.path, 'r');
  const file = { read: (b: Buffer, o: number, l: number, p: number) => nativeIO.read(fd, b, o, l, p) };
  return { seg: { io: nativeIO, file, size: s.size, logPath: s.path, baseOffset: s.baseOffset } as unknown as LogSegment, close: () => nativeIO.close(fd) };
}

/** Batches of the start's warm-up: enough calls for V8 to compile the job's code. */
const WARM_UP_BATCHES = 600;

/**
 * Maps WARM_UP_BATCHES batches of 100 keyed records from memory, results dropped, so that the
 * first job runs compiled code on memory already touched: a worker's first job over the bench's
 * 256 MiB log took 450–620 ms of CPU cold against ~110 warm (page faults of a new thread's heap
 * and allocations, ~19 µs each on this VM, and code not yet compiled).
 */
function warmUp(runner: MapJobRunner): void {
  const records = Array.from({ length: 100 }, (_, i) => ({ key: Buffer.from(`warm-up-key-${i}`), value: Buffer.alloc(100, i), timestamp: 1_700_000_000_000 + i }));
  const batch = encodeBatch(records, { baseOffset: 0 });
  const bytes = Buffer.allocUnsafe(batch.length * WARM_UP_BATCHES);
  for (let i = 0; i < WARM_UP_BATCHES; i++) {
    batch.copy(bytes, i * batch.length);
    writeInt64(bytes, i * batch.length, i * records.length); // the base offset lies outside the CRC
  }
  const file = { read: (b: Buffer, o: number, l: number, p: number) => bytes.copy(b, o, p, Math.min(p + l, bytes.length)) };
  const seg = { io: nativeIO, file, size: bytes.length, logPath: 'warm-up', baseOffset: 0 } as unknown as LogSegment;
  runner.open = () => ({ seg, close: () => {} });
  runner.warming = true;
  runner.run({ id: 0, segments: [{ path: 'warm-up', baseOffset: 0, size: bytes.length, startPosition: 0, verifiedFrom: 0, verifiedTo: 0 }], maxDecompressedBytes: 0, maxBatchBytes: 0 });
  runner.warming = false;
  runner.open = openSegment;
}

if (isWorkerEntry(import.meta.url) && parentPort) {
  const port = parentPort;
  const data = workerData as MapWorkerData;
  const runner = new MapJobRunner(data.shared, (m) => port.postMessage(m, [m.buf]));
  warmUp(runner);
  port.on('message', (job: MapJob) => runner.run(job));
  port.postMessage(MAP_WORKER_READY);
}
