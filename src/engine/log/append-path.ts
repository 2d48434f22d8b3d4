/**
 * The append path of one partition (Kafka's UnifiedLog.append down to LocalLog.append): encode
 * once, assign offsets, hold batches in the write buffer, and commit them to the active segment —
 * rolling first where Kafka would — in as few write(2)s as possible. When to commit and fsync is
 * flush/group-commit.ts's decision; docs/durability.md says what each acknowledgement promises.
 */
import type { FlushMode, LogConfig } from '../config.js';
import { InvalidArgumentError, LogtoolError, assert } from '../errors.js';
import type { AppendedBatchInfo } from '../segment/segment.js';
import { encodeRecordBatch, setBaseOffset, LOG_OVERHEAD, type EncodeBatchOptions, type EncodedBatch, type RecordInput } from '../format/record-batch.js';
import { validateClientBatch } from '../format/batch-validator.js';
import { encodeValueSlices, type ValueSlices } from '../format/value-slices.js';
import type { AckStatus, FlushPipeline } from '../flush/group-commit.js';
import type { LogSegments } from './log-segments.js';
import type { Roller } from './roll.js';

export interface AppendOptions {
  /** Override the log's flush mode for this append. */
  flushMode?: FlushMode;
  /** Sync mode: resolve once committed; the data still rides the next group fsync. */
  ackBeforeSync?: boolean;
  compression?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  transactional?: boolean;
  control?: boolean;
  logAppendTime?: boolean;
}

/** Log.appendValueSlices takes no producer, compression or control fields: plain records only. */
export type ValueSliceAppendOptions = Pick<AppendOptions, 'flushMode' | 'ackBeforeSync'>;

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  count: number;
  /**
   * What is guaranteed when the promise resolves:
   * - `flushed`: on disk (fdatasync returned), survives power loss;
   * - `committed`: handed to the OS (write returned), survives a crash of the process, not power loss;
   * - `written`: in the process's write buffer, lost if the process dies before the committer runs;
   * - `timed-out`: sync mode only — not flushed within syncTimeoutMs; it may or may not become durable.
   */
  status: AckStatus;
  /** An idempotent batch that retried one of the producer's last five: nothing was written, the original offsets are returned (Log.append). */
  duplicate?: boolean;
}

interface PendingBatch {
  buf: Buffer;
  info: AppendedBatchInfo;
  baseOffset: number;
  records: number;
}

const NOTHING_COMMITTED: { bytes: number; records: number } = Object.freeze({ bytes: 0, records: 0 });
/** A run of small batches up to this size is joined into one write when committed together. */
const JOIN_WRITES_UP_TO_BYTES = 256 * 1024;
/** A sync batch this large is committed when appended instead of waiting for its group's write. */
const COMMIT_AT_ONCE_BYTES = 64 * 1024;
/** Largest write-buffer arena of buffered mode (commit.bytes plus room for the batch that crosses it). */
const MAX_ARENA_BYTES = 64 * 1024 * 1024;
/** Largest reused encoding buffer of append() (larger batches get their own). */
const MAX_ENCODE_SCRATCH_BYTES = 4 * 1024 * 1024;

export interface AppendHost {
  readonly dir: string;
  readonly config: LogConfig;
  readonly segments: LogSegments;
  readonly roller: Roller;
  /** Throws when the log is closed, read-only or failed. */
  ensureWritable(): void;
}

export class AppendPath {
  private readonly host: AppendHost;
  private pipeline!: FlushPipeline;
  /** Offset the next appended record gets (includes the write buffer). */
  nextOffset: number;
  committedNextOffset: number;
  committedTotal = 0;
  /** Bytes accepted since open (committed + write buffer). */
  writtenTotal = 0;
  writeBufferBytes = 0;
  /** The first failed commit or background flush: the log is failed from then on. */
  failure: unknown;
  private writeBuffer: PendingBatch[] = [];
  /** Reused by append() for batches that are committed before it returns (async, ackBeforeSync). */
  private encodeScratch: Buffer | undefined;
  /** Buffered mode: append() encodes into this arena at arenaPos; reset once the buffer is committed. */
  private arena: Buffer | undefined;
  private arenaPos = 0;

  constructor(host: AppendHost, nextOffset: number) {
    this.host = host;
    this.nextOffset = nextOffset;
    this.committedNextOffset = nextOffset;
  }

  /** The flush pipeline deciding when buffered batches are committed and flushed (writable logs). */
  attach(pipeline: FlushPipeline): void {
    this.pipeline = pipeline;
  }

  fail(e: unknown): void {
    this.failure ??= e;
  }

  /** Log.applyRetention / deleteRecordsBefore: the log end offset retention works to, after committing the write buffer. */
  endForRetention(dryRun: boolean | undefined, log: { readonly readOnly: boolean; readonly closed: boolean }): number {
    if (!dryRun) this.host.ensureWritable();
    if (!log.readOnly && !log.closed) this.commitBuffered();
    return log.readOnly ? this.nextOffset : this.committedNextOffset;
  }

  /** Log.append: encodes the records as one batch at the log end offset and appends it. */
  append(records: readonly RecordInput[], options: AppendOptions): Promise<AppendResult> {
    this.host.ensureWritable();
    if (records.length === 0) throw new LogtoolError('invalid-argument', 'append needs at least one record');
    return this.appendBy((o) => encodeRecordBatch(records, o), options);
  }

  /** Log.appendValueSlices: the slices encoded as one uncompressed batch at the log end offset and appended as append() does. */
  appendValueSlices(slices: ValueSlices, options: ValueSliceAppendOptions): Promise<AppendResult> {
    this.host.ensureWritable();
    if (slices.count === 0) throw new LogtoolError('invalid-argument', 'append needs at least one record');
    return this.appendBy((o) => encodeValueSlices(slices, o), options);
  }

  /** Encodes one batch with `encode` (at the log end offset, into reused space) and appends it. */
  private appendBy(encode: (o: EncodeBatchOptions) => EncodedBatch, options: AppendOptions): Promise<AppendResult> {
    const encodeOpts: EncodeBatchOptions = {
      baseOffset: this.nextOffset,
      compression: options.compression,
      producerId: options.producerId,
      producerEpoch: options.producerEpoch,
      baseSequence: options.baseSequence,
      transactional: options.transactional,
      control: options.control,
      logAppendTime: options.logAppendTime,
    };
    // Encoded into reused scratch space: a batch committed before append returns (async,
    // ackBeforeSync, large sync batches) needs no allocation and is still in the CPU cache for
    // write(2); accept() copies a batch out of it when it has to keep it.
    // Buffered batches, and sync ones that wait for their group, are encoded one after another
    // into the write-buffer arena, which the committer writes with one write(2) per contiguous run,
    // without a copy per append nor a joining copy per group.
    const mode = options.flushMode ?? this.host.config.flushMode;
    const scratch = mode !== 'buffered' && !(mode === 'sync' && !options.ackBeforeSync && !this.pipeline.flushesAtOnce());
    if (scratch) encodeOpts.into = this.encodeScratch;
    else {
      this.arena ??= Buffer.allocUnsafeSlow(Math.min(MAX_ARENA_BYTES, Math.max(65536, this.host.config.commitBytes + 65536)));
      if (this.arenaPos < this.arena.length) encodeOpts.into = this.arena.subarray(this.arenaPos);
    }
    const encoded = encode(encodeOpts);
    const buf = encoded.buf;
    if (scratch) {
      if (buf.buffer !== this.encodeScratch?.buffer && buf.length <= MAX_ENCODE_SCRATCH_BYTES) {
        this.encodeScratch = Buffer.allocUnsafeSlow(Math.min(MAX_ENCODE_SCRATCH_BYTES, 2 ** Math.ceil(Math.log2(Math.max(buf.length, 65536)))));
      }
      return this.appendOwn(encoded, encodeOpts.baseOffset, options);
    }
    const inArena = buf.buffer === this.arena!.buffer;
    if (inArena) this.arenaPos += buf.length; // before accepting it: a commit it triggers resets the arena
    try {
      return this.appendOwn(encoded, encodeOpts.baseOffset, options);
    } catch (e) {
      if (inArena && this.arenaPos === buf.byteOffset - this.arena!.byteOffset + buf.length) this.arenaPos -= buf.length;
      throw e;
    }
  }

  /** A batch append() encoded at baseOffset: no validation, no re-reading, no offset rewrite. */
  private appendOwn(encoded: EncodedBatch, baseOffset: number, options: AppendOptions): Promise<AppendResult> {
    const { buf, lastOffsetDelta, count, maxTimestamp } = encoded;
    if (baseOffset !== this.nextOffset) assert(false, `batch encoded at offset ${baseOffset} but the log end offset is ${this.nextOffset}`);
    this.checkSize(buf.length);
    return this.accept({ buf, info: { size: buf.length, lastOffset: baseOffset + lastOffsetDelta, maxTimestamp }, baseOffset, records: count }, options);
  }

  private checkSize(bytes: number): void {
    const max = this.host.config.maxMessageBytes;
    if (bytes > max) throw new LogtoolError('too-large', `batch of ${bytes} bytes exceeds max.message.bytes (${max})`, { file: this.host.dir });
  }

  /**
   * Log.appendEncoded: a batch from outside, so its shape is checked, it is validated as Kafka's
   * LogValidator validates a producer's, its base offset is rewritten and its header read.
   */
  appendEncoded(batch: Buffer, options: AppendOptions): Promise<AppendResult> {
    this.host.ensureWritable();
    const dir = this.host.dir;
    if (batch.length < 61 || batch[16] !== 2 || batch.readInt32BE(8) + LOG_OVERHEAD !== batch.length) {
      throw new InvalidArgumentError(['batch'], 'appendEncoded takes exactly one v2 record batch');
    }
    this.checkSize(batch.length);
    validateClientBatch(batch, { file: dir, allowControl: options.control === true, logAppendTime: options.logAppendTime === true });
    const baseOffset = this.nextOffset;
    setBaseOffset(batch, 0, baseOffset);
    const lastOffsetDelta = batch.readInt32BE(23);
    const count = batch.readInt32BE(57);
    const lastOffset = baseOffset + lastOffsetDelta;
    const maxTimestamp = batch.readInt32BE(35) * 4294967296 + batch.readUInt32BE(39);
    const pending: PendingBatch = { buf: batch, info: { size: batch.length, lastOffset, maxTimestamp }, baseOffset, records: count };
    return this.accept(pending, options);
  }

  /** Takes a batch whose offsets are assigned: buffers it or commits it now, by mode. */
  private accept(pending: PendingBatch, options: AppendOptions): Promise<AppendResult> {
    const { baseOffset, records: count } = pending;
    const { size, lastOffset } = pending.info;
    this.nextOffset = lastOffset + 1;
    this.writtenTotal += size;
    const mode = options.flushMode ?? this.host.config.flushMode;
    const pipeline = this.pipeline;
    const waitsForFlush = mode === 'sync' && !options.ackBeforeSync;
    const result = (status: AckStatus): AppendResult => ({ baseOffset, lastOffset, count, status });
    // Buffered batches, and small sync ones (their group is committed with one write), wait in
    // the write buffer — unless a lone producer's group is flushed at once (no copy, no wait).
    if (mode === 'buffered' || (waitsForFlush && size < COMMIT_AT_ONCE_BYTES && !pipeline.flushesAtOnce())) {
      if (pending.buf.buffer === this.encodeScratch?.buffer) pending.buf = Buffer.from(pending.buf); // append()'s scratch is reused
      this.writeBuffer.push(pending);
      this.writeBufferBytes += size;
      if (mode === 'buffered') {
        pipeline.noteBuffered();
        return Promise.resolve(result('written'));
      }
      return pipeline.waitForFlush(this.writtenTotal, size, count, result);
    }
    // Committed now, after anything still buffered (in order): async, ackBeforeSync, a lone sync
    // producer's, and sync batches of COMMIT_AT_ONCE_BYTES or more (written while hot; they still
    // wait for the flush).
    let committed: { bytes: number; records: number };
    if (this.writeBuffer.length === 0) {
      try {
        this.commitBatches([pending]);
      } catch (e) {
        this.fail(e);
        throw e;
      }
      committed = { bytes: size, records: count };
    } else {
      this.writeBuffer.push(pending);
      this.writeBufferBytes += size;
      committed = this.commitBuffered();
    }
    if (waitsForFlush) return pipeline.waitForFlush(this.writtenTotal, size, count, result);
    pipeline.noteCommitted(committed.bytes, committed.records);
    if (mode === 'sync') pipeline.requestFlush();
    return Promise.resolve(result('committed'));
  }

  /** Writes the write buffer to the file, in order. A failure fails the log. */
  commitBuffered(): { bytes: number; records: number } {
    if (this.writeBuffer.length === 0) return NOTHING_COMMITTED;
    const pending = this.writeBuffer;
    const bytes = this.writeBufferBytes;
    this.writeBuffer = [];
    this.writeBufferBytes = 0;
    let records = 0;
    for (const p of pending) records += p.records;
    try {
      this.commitBatches(pending);
    } catch (e) {
      this.fail(e);
      throw e;
    }
    this.arenaPos = 0; // nothing buffered refers to the arena any more
    return { bytes, records };
  }

  /**
   * Writes batches to the active segment, rolling first where Kafka would. Consecutive batches
   * that the segment takes without a roll are committed together.
   */
  private commitBatches(batches: PendingBatch[]): void {
    let i = 0;
    while (i < batches.length) {
      const first = batches[i]!;
      this.host.roller.maybeRoll(first.info.size, first.baseOffset, first.info.lastOffset, first.info.maxTimestamp);
      const j = this.groupEnd(batches, i);
      this.writeRuns(batches, i, j);
      i = j;
    }
  }

  /** End (exclusive) of the batches from i on that the active segment takes without a roll. */
  private groupEnd(batches: PendingBatch[], i: number): number {
    const c = this.host.config;
    const seg = this.host.segments.active;
    const maxSegmentMs = this.host.roller.maxSegmentMs;
    const first = batches[i]!;
    // Each batch adds at most one entry to each index: stay within their free slots.
    const indexRoom = Math.min(seg.offsetIndex.maxEntries - seg.offsetIndex.entries, seg.timeIndex.maxEntries - 1 - seg.timeIndex.entries);
    const firstTs = seg.size > 0 ? seg.firstBatchMaxTimestamp() : first.info.maxTimestamp;
    let j = i + 1;
    let bytes = first.info.size;
    while (j < batches.length && j - i < indexRoom) {
      const b = batches[j]!;
      if (seg.size + bytes > c.segmentBytes - b.info.size) break;
      if (b.info.lastOffset - seg.baseOffset > 0x7fffffff) break;
      if ((firstTs >= 0 ? b.info.maxTimestamp - firstTs : Date.now() - seg.createdMs) > maxSegmentMs) break;
      bytes += b.info.size;
      j++;
    }
    return j;
  }

  /**
   * Writes batches [i, j) to the active segment in runs, one write(2) each: batches lying back to
   * back in memory (the buffered arena) as they are, small scattered ones joined by a copy, a
   * large one alone (no copy).
   */
  private writeRuns(batches: PendingBatch[], i: number, j: number): void {
    const seg = this.host.segments.active;
    let k = i;
    while (k < j) {
      let m = k + 1;
      let runBytes = batches[k]!.info.size;
      let adjacent = true;
      while (m < j) {
        const prev = batches[m - 1]!.buf;
        const cur = batches[m]!.buf;
        adjacent &&= cur.buffer === prev.buffer && cur.byteOffset === prev.byteOffset + prev.length;
        if (!adjacent && runBytes + cur.length > JOIN_WRITES_UP_TO_BYTES) break;
        runBytes += cur.length;
        m++;
      }
      if (m - k === 1) {
        const b = batches[k]!;
        seg.append(b.buf, 0, b.info.size, [b.info]);
      } else {
        const run = batches.slice(k, m);
        const head = run[0]!.buf;
        const bytes = adjacent ? Buffer.from(head.buffer, head.byteOffset, runBytes) : Buffer.concat(run.map((b) => b.buf), runBytes);
        seg.append(bytes, 0, runBytes, run.map((b) => b.info));
      }
      this.committedTotal += runBytes;
      this.committedNextOffset = batches[m - 1]!.info.lastOffset + 1;
      k = m;
    }
  }
}
