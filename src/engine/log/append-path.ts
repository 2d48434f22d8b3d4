/**
 * The append path of one partition (Kafka's UnifiedLog.append down to LocalLog.append): encode
 * once, assign offsets, hold batches in the write buffer, and commit them to the active segment —
 * rolling first where Kafka would — in as few write(2)s as possible. When to commit and fsync is
 * flush/group-commit.ts's decision; docs/durability.md says what each acknowledgement promises.
 */
import type { LogConfig } from '../config.js';
import type { AppendOptions, AppendResult, ValueSliceAppendOptions } from './append-types.js';
import { InvalidArgumentError, LogtoolError, assert } from '../errors.js';
import { encodeBatchAt, encodeRecordBatch, headerLastOffsetDelta, headerMaxTimestamp, setBaseOffset, LOG_OVERHEAD, type EncodeBatchOptions, type EncodedBatch, type RecordInput } from '../format/record-batch.js';
import { validateClientBatch } from '../format/batch-validator.js';
import { encodeValueSlices, type ValueSlices } from '../format/value-slices.js';
import type { AckStatus, FlushPipeline } from '../flush/group-commit.js';
import type { LogSegments } from './log-segments.js';
import type { Roller } from './roll.js';
import { OpenBatch, joinsOpenBatch, likelyBytes, type PendingBatch } from './open-batch.js';

export type { AppendOptions, AppendResult, ValueSliceAppendOptions } from './append-types.js';

/** A sync append's result once its flush settles (made only for appends that wait for one; no closure per append). */
const acknowledgement = (status: AckStatus, baseOffset: number, lastOffset: number, count: number): AppendResult => ({ baseOffset, lastOffset, count, status });

const NOTHING_COMMITTED: { bytes: number; records: number } = Object.freeze({ bytes: 0, records: 0 });
/** A run of small batches up to this size is joined into one write when committed together. */
const JOIN_WRITES_UP_TO_BYTES = 256 * 1024;
/** A sync batch this large is committed when appended instead of waiting for its group's write. */
const COMMIT_AT_ONCE_BYTES = 64 * 1024;
/** Largest write-buffer arena of buffered mode (commit.bytes plus room for the batch that crosses it). */
const MAX_ARENA_BYTES = 64 * 1024 * 1024;
/** Write-buffer arena of sync groups (256 one-record appends of 100 B fit). */
const SYNC_ARENA_BYTES = 64 * 1024;
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
  /** Buffered mode: the batch plain appends join (open-batch.ts), last in the write buffer while open. */
  private readonly openBatch = new OpenBatch();
  /** encodeOptions()'s object, all its fields present from the start (one shape for the encoders). */
  private readonly encodeOpts: EncodeBatchOptions = {
    baseOffset: 0,
    compression: undefined,
    producerId: undefined,
    producerEpoch: undefined,
    baseSequence: undefined,
    transactional: undefined,
    control: undefined,
    logAppendTime: undefined,
    nowMs: 0,
    into: undefined,
  };

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
    const mode = options.flushMode ?? this.host.config.flushMode;
    if (mode === 'buffered' && this.host.config.batchBytes > 0 && joinsOpenBatch(options)) {
      const joined = this.joinOpenBatch(records, options);
      if (joined !== undefined) return joined;
    }
    const baseOffset = this.nextOffset;
    const encodeOpts = this.encodeOptions(baseOffset, options);
    const into = this.encodeTarget(options);
    const start = into === this.arena ? this.arenaPos : 0;
    const end = start < into.length ? encodeBatchAt(records, encodeOpts, into, start) : -1;
    if (end < 0) {
      if (into === this.encodeScratch) encodeOpts.into = into; // the measured path still uses the scratch when the batch fits
      return this.appendEncodedOwn(encodeRecordBatch(records, encodeOpts), baseOffset, options, into);
    }
    const size = end - start;
    this.checkSize(size);
    if (into !== this.arena) return this.accept(this.pending(into, 0, size, baseOffset, records.length), options);
    return this.acceptInArena(this.pending(into, start, size, baseOffset, records.length), options);
  }

  /**
   * A plain buffered append joined to the open batch, or opening one: undefined when its records
   * cannot (headers, unsafe timestamps, larger than a joined batch), for append() to encode alone.
   */
  private joinOpenBatch(records: readonly RecordInput[], options: AppendOptions): Promise<AppendResult> | undefined {
    const maxBytes = Math.min(this.host.config.batchBytes, this.host.config.maxMessageBytes);
    const baseOffset = this.nextOffset;
    const nowMs = Date.now();
    const likely = likelyBytes(records);
    const added = this.openBatch.extend(records, likely, this.arena, this.arenaPos, nowMs, maxBytes);
    if (added < 0) {
      const arena = this.encodeTarget(options);
      const opened = this.openBatch.open(records, likely, arena, this.arenaPos, baseOffset, nowMs, maxBytes);
      return opened === undefined ? undefined : this.acceptInArena(opened, options);
    }
    const lastOffset = baseOffset + records.length - 1;
    this.arenaPos += added;
    this.nextOffset = lastOffset + 1;
    this.writtenTotal += added;
    this.writeBufferBytes += added;
    this.pipeline.noteBuffered();
    return Promise.resolve({ baseOffset, lastOffset, count: records.length, status: 'written' });
  }

  /**
   * Log.appendValueSlices: the slices encoded as one uncompressed batch at the log end offset, into
   * the same space append() uses, and appended as append() does.
   */
  appendValueSlices(slices: ValueSlices, options: ValueSliceAppendOptions): Promise<AppendResult> {
    this.host.ensureWritable();
    if (slices.count === 0) throw new LogtoolError('invalid-argument', 'append needs at least one record');
    const baseOffset = this.nextOffset;
    const encodeOpts = this.encodeOptions(baseOffset, options);
    const into = this.encodeTarget(options);
    const start = into === this.arena ? this.arenaPos : 0;
    if (start < into.length) encodeOpts.into = start === 0 ? into : into.subarray(start);
    const encoded = encodeValueSlices(slices, encodeOpts);
    if (into !== this.arena || encoded.buf.buffer !== into.buffer) return this.appendEncodedOwn(encoded, baseOffset, options, into);
    // In the arena at `start`: kept as arena bytes, so the committer joins it with its neighbours.
    const size = encoded.buf.length;
    if (baseOffset !== this.nextOffset) assert(false, `batch encoded at offset ${baseOffset} but the log end offset is ${this.nextOffset}`);
    this.checkSize(size);
    const { lastOffsetDelta, maxTimestamp, count } = encoded;
    return this.acceptInArena({ buf: into, start, size, lastOffset: baseOffset + lastOffsetDelta, maxTimestamp, baseOffset, records: count }, options);
  }

  /** accept() of a batch encoded in the arena at arenaPos: the arena space is taken, and given back if accept throws. */
  private acceptInArena(pending: PendingBatch, options: AppendOptions): Promise<AppendResult> {
    const start = pending.start;
    const end = start + pending.size;
    this.arenaPos = end; // before accepting it: a commit it triggers resets the arena
    try {
      return this.accept(pending, options);
    } catch (e) {
      if (this.arenaPos === end) this.arenaPos = start;
      throw e;
    }
  }

  /**
   * The encoder's options for one append: one object per log, every field set again on each call
   * (no allocation per append; the encoders keep nothing of it once they return).
   */
  private encodeOptions(baseOffset: number, options: AppendOptions): EncodeBatchOptions {
    const o = this.encodeOpts;
    o.baseOffset = baseOffset;
    o.compression = options.compression;
    o.producerId = options.producerId;
    o.producerEpoch = options.producerEpoch;
    o.baseSequence = options.baseSequence;
    o.transactional = options.transactional;
    o.control = options.control;
    o.logAppendTime = options.logAppendTime;
    o.nowMs = Date.now();
    o.into = undefined;
    return o;
  }

  /**
   * Where a batch is encoded, in place, with no view or result object per batch: a batch committed
   * before append returns (async, ackBeforeSync, large sync batches) into reused scratch space, so
   * it needs no allocation and is still in the CPU cache for write(2) (accept() copies it out when
   * it has to keep it); buffered batches, and sync ones that wait for their group, one after
   * another into the write-buffer arena (from arenaPos), which the committer writes with one
   * write(2) per contiguous run, without a copy per append nor a joining copy per group. The
   * batch starts at arenaPos in the arena, at 0 in the scratch (no { into, start } per append).
   */
  private encodeTarget(options: AppendOptions): Buffer {
    const mode = options.flushMode ?? this.host.config.flushMode;
    const inArena = mode === 'buffered' || (mode === 'sync' && !options.ackBeforeSync && !this.pipeline.flushesAtOnce());
    if (!inArena) return (this.encodeScratch ??= Buffer.allocUnsafeSlow(65536));
    // A sync group's arena stays small (one per partition; a larger group spills to its own
    // buffers); buffered mode's grows to commit.bytes once nothing is held in it.
    const arenaBytes = mode === 'buffered' ? Math.min(MAX_ARENA_BYTES, Math.max(SYNC_ARENA_BYTES, this.host.config.commitBytes + 65536)) : SYNC_ARENA_BYTES;
    if (!this.arena || (this.arena.length < arenaBytes && this.arenaPos === 0)) this.arena = Buffer.allocUnsafeSlow(arenaBytes);
    return this.arena;
  }

  /** The batch encodeBatchAt just wrote at buf[start, start + size). */
  private pending(buf: Buffer, start: number, size: number, baseOffset: number, records: number): PendingBatch {
    if (baseOffset !== this.nextOffset) assert(false, `batch encoded at offset ${baseOffset} but the log end offset is ${this.nextOffset}`);
    return { buf, start, size, lastOffset: baseOffset + headerLastOffsetDelta, maxTimestamp: headerMaxTimestamp, baseOffset, records };
  }

  /**
   * A batch append() could not encode in place in one pass (compressed, headers, timestamps beyond
   * ±2^53, or larger than the room left), encoded by the measured path — into the scratch space
   * when it fits, else into a buffer of its own: no validation, no re-reading, no offset rewrite.
   * A batch larger than the scratch space makes append() allocate a larger one.
   */
  private appendEncodedOwn(encoded: EncodedBatch, baseOffset: number, options: AppendOptions, into: Buffer): Promise<AppendResult> {
    const { buf, lastOffsetDelta, count, maxTimestamp } = encoded;
    if (baseOffset !== this.nextOffset) assert(false, `batch encoded at offset ${baseOffset} but the log end offset is ${this.nextOffset}`);
    if (into === this.encodeScratch && buf.buffer !== into.buffer && buf.length > into.length && buf.length <= MAX_ENCODE_SCRATCH_BYTES) {
      this.encodeScratch = Buffer.allocUnsafeSlow(Math.min(MAX_ENCODE_SCRATCH_BYTES, 2 ** Math.ceil(Math.log2(buf.length))));
    }
    this.checkSize(buf.length);
    return this.accept({ buf, start: 0, size: buf.length, lastOffset: baseOffset + lastOffsetDelta, maxTimestamp, baseOffset, records: count }, options);
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
    const pending: PendingBatch = { buf: batch, start: 0, size: batch.length, lastOffset, maxTimestamp, baseOffset, records: count };
    return this.accept(pending, options);
  }

  /** Takes a batch whose offsets are assigned: buffers it or commits it now, by mode. */
  private accept(pending: PendingBatch, options: AppendOptions): Promise<AppendResult> {
    const { baseOffset, records: count } = pending;
    const { size, lastOffset } = pending;
    if (this.openBatch.batch !== pending) this.openBatch.seal(); // nothing joins the open batch from behind another
    this.nextOffset = lastOffset + 1;
    this.writtenTotal += size;
    const mode = options.flushMode ?? this.host.config.flushMode;
    const pipeline = this.pipeline;
    const waitsForFlush = mode === 'sync' && !options.ackBeforeSync;
    // Buffered batches, and small sync ones (their group is committed with one write), wait in
    // the write buffer — unless a lone producer's group is flushed at once (no copy, no wait).
    if (mode === 'buffered' || (waitsForFlush && size < COMMIT_AT_ONCE_BYTES && !pipeline.flushesAtOnce())) {
      if (pending.buf !== this.arena && pending.buf.buffer === this.encodeScratch?.buffer) {
        pending.buf = Buffer.from(pending.buf.subarray(pending.start, pending.start + size)); // append()'s scratch is reused
        pending.start = 0;
      }
      this.writeBuffer.push(pending);
      this.writeBufferBytes += size;
      if (mode === 'buffered') {
        pipeline.noteBuffered();
        return Promise.resolve({ baseOffset, lastOffset, count, status: 'written' });
      }
      return pipeline.waitForFlush(this.writtenTotal, size, count, acknowledgement, baseOffset, lastOffset);
    }
    // Committed now, after anything still buffered (in order): async, ackBeforeSync, a lone sync
    // producer's, and sync batches of COMMIT_AT_ONCE_BYTES or more (written while hot; they still
    // wait for the flush).
    let committedBytes = size;
    let committedRecords = count;
    if (this.writeBuffer.length === 0) {
      try {
        this.commitBatches([pending]);
      } catch (e) {
        this.fail(e);
        throw e;
      }
    } else {
      this.writeBuffer.push(pending);
      this.writeBufferBytes += size;
      ({ bytes: committedBytes, records: committedRecords } = this.commitBuffered());
    }
    if (waitsForFlush) return pipeline.waitForFlush(this.writtenTotal, size, count, acknowledgement, baseOffset, lastOffset);
    pipeline.noteCommitted(committedBytes, committedRecords);
    if (mode === 'sync') pipeline.requestFlush();
    return Promise.resolve({ baseOffset, lastOffset, count, status: 'committed' });
  }

  /** Writes the write buffer to the file, in order. A failure fails the log. */
  commitBuffered(): { bytes: number; records: number } {
    if (this.writeBuffer.length === 0) return NOTHING_COMMITTED;
    this.openBatch.seal();
    const pending = this.writeBuffer;
    const bytes = this.writeBufferBytes;
    this.writeBuffer = [];
    this.writeBufferBytes = 0;
    let records = 0;
    for (let i = 0; i < pending.length; i++) records += pending[i]!.records; // no iterator result per batch
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
      this.host.roller.maybeRoll(first.size, first.baseOffset, first.lastOffset, first.maxTimestamp);
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
    const firstTs = seg.size > 0 ? seg.firstBatchMaxTimestamp() : first.maxTimestamp;
    const segSize = seg.size; // the segment's numbers as locals: this loop runs over every batch of a commit
    const segBaseOffset = seg.baseOffset;
    const segmentBytes = c.segmentBytes;
    let j = i + 1;
    let bytes = first.size;
    while (j < batches.length && j - i < indexRoom) {
      const b = batches[j]!;
      if (segSize + bytes > segmentBytes - b.size) break;
      if (b.lastOffset - segBaseOffset > 0x7fffffff) break;
      if ((firstTs >= 0 ? b.maxTimestamp - firstTs : Date.now() - seg.createdMs) > maxSegmentMs) break;
      bytes += b.size;
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
      let runBytes = batches[k]!.size;
      let adjacent = true;
      while (m < j) {
        const prev = batches[m - 1]!;
        const cur = batches[m]!;
        adjacent &&= cur.buf === prev.buf && cur.start === prev.start + prev.size;
        if (!adjacent && runBytes + cur.size > JOIN_WRITES_UP_TO_BYTES) break;
        runBytes += cur.size;
        m++;
      }
      const head = batches[k]!;
      if (m - k === 1) seg.append(head.buf, head.start, head.start + runBytes, [head]);
      else {
        const run = k === 0 && m === batches.length ? batches : batches.slice(k, m); // a whole commit: no copy of its list
        if (adjacent) seg.append(head.buf, head.start, head.start + runBytes, run);
        else seg.append(Buffer.concat(run.map((b) => b.buf.subarray(b.start, b.start + b.size)), runBytes), 0, runBytes, run);
      }
      this.committedTotal += runBytes;
      this.committedNextOffset = batches[m - 1]!.lastOffset + 1;
      k = m;
    }
  }
}
