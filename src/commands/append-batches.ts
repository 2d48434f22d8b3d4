/**
 * `append`'s batches of records (the record path: NDJSON, and --lines with a transaction,
 * compression or an int64 timestamp; append-lines.ts feeds plain lines in as value ranges): each
 * appended as one Kafka record batch (kafka-format.md §2) bounded by --batch-records and
 * max.message.bytes, acknowledged in offset order under the flush mode.
 */
import type { Log } from '../api/log.js';
import type { LogTransaction } from '../inspect/transactions.js';
import { LogtoolError, type RecordInput, type ValueSlices } from '../api/format.js';
import type { Output } from '../render/output.js';
import { tooLargeRecord, BATCH_OVERHEAD_BYTES, RECORD_OVERHEAD_BOUND_BYTES, type SliceSink } from './append-lines.js';

/** Batches appended but not yet acknowledged, at most; more input waits (backpressure). */
const MAX_BATCHES_IN_FLIGHT = 16;

/**
 * Collects records into batches bounded by count and max.message.bytes. Up to
 * MAX_BATCHES_IN_FLIGHT batches await their acknowledgement at once (so sync appends of a fast
 * producer share group commits); acknowledgement lines are printed in offset order, each only
 * once its batch is acknowledged under the flush mode.
 */
export class BatchAppender implements SliceSink {
  private pending: RecordInput[] = [];
  private pendingBytes = 0;
  failure: LogtoolError | undefined;
  readonly maxBatchBytes: number;
  /** Resolves when every acknowledgement so far has been handled (printed or recorded). */
  private acked: Promise<void> = Promise.resolve();
  private readonly inFlight: Promise<void>[] = [];
  private error: unknown;

  constructor(
    private readonly log: Log,
    private readonly out: Output,
    private readonly opts: { json: boolean; compression?: number; ackBeforeSync?: boolean; batchRecords: number; txn?: LogTransaction },
  ) {
    this.maxBatchBytes = log.config.maxMessageBytes;
  }

  /** Takes a record; returns a promise only when a batch went out and the caller must wait for it. */
  add(r: RecordInput): Promise<void> | undefined {
    let size = (r.key?.length ?? 0) + (r.value?.length ?? 0) + RECORD_OVERHEAD_BOUND_BYTES;
    if (r.headers) for (const h of r.headers) size += Buffer.byteLength(h.key) + (h.value?.length ?? 0) + 10;
    const tooLarge = tooLargeRecord(size, this.maxBatchBytes);
    if (tooLarge) throw tooLarge;
    if (this.pendingBytes + size + BATCH_OVERHEAD_BYTES > this.maxBatchBytes) return this.flush().then(() => this.take(r, size));
    return this.take(r, size);
  }

  private take(r: RecordInput, size: number): Promise<void> | undefined {
    this.pending.push(r);
    this.pendingBytes += size;
    return this.pending.length >= this.opts.batchRecords ? this.flush() : undefined;
  }

  get batchRecords(): number {
    return this.opts.batchRecords;
  }

  /** Appends the pending records as one batch; returns once fewer than the in-flight limit await acknowledgement. */
  async flush(): Promise<void> {
    if (this.error) throw this.error;
    if (this.pending.length === 0) return;
    const records = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    // Offsets are assigned here, in call order; the acknowledgement may come later.
    const appendOpts = { compression: this.opts.compression, ackBeforeSync: this.opts.ackBeforeSync };
    await this.track(this.opts.txn ? this.opts.txn.append(records, appendOpts) : this.log.append(records, appendOpts));
  }

  /** appendLines' batches (no transaction, no compression), as flush() appends the pending records. */
  async appendSlices(slices: ValueSlices): Promise<void> {
    if (this.error) throw this.error;
    if (slices.count === 0) return;
    await this.track(this.log.appendValueSlices(slices, { ackBeforeSync: this.opts.ackBeforeSync }));
  }

  /** Prints (--json) or records a batch's acknowledgement in offset order; returns once fewer than the in-flight limit await one. */
  private async track(ack: Promise<{ baseOffset: number; lastOffset: number; count: number; status: string }>): Promise<void> {
    const handled = Promise.all([ack, this.acked]).then(async ([res]) => {
      if (res.status === 'timed-out') {
        this.failure ??= new LogtoolError('io', `batch ${res.baseOffset}..${res.lastOffset} was not confirmed durable within sync.timeout.ms; it may or may not be on disk`, { file: this.log.dir });
        return;
      }
      if (this.opts.json) await this.out.json({ baseOffset: res.baseOffset, lastOffset: res.lastOffset, count: res.count, status: res.status });
      await this.out.flush();
    });
    // Remember the first failure; later chained handlers see it through `acked`.
    handled.catch((e: unknown) => {
      this.error ??= e;
    });
    this.acked = handled;
    this.inFlight.push(handled);
    if (this.inFlight.length >= MAX_BATCHES_IN_FLIGHT) await this.inFlight.shift()!.catch(() => undefined);
    if (this.error) throw this.error;
  }

  /** Waits until every batch is acknowledged (or failed); throws the first failure. */
  async drain(): Promise<void> {
    await this.acked.catch(() => undefined);
    this.inFlight.length = 0;
    if (this.error) throw this.error;
  }
}
