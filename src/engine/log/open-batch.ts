/**
 * Buffered mode's open batch, as a Kafka producer builds its batches (RecordAccumulator keeps one
 * open ProducerBatch per partition; its MemoryRecordsBuilder appends each send()'s records and
 * writes the v2 header and CRC once, when the batch is closed — kafka-format.md §2). Consecutive
 * plain buffered appends (no producer id, epoch or sequence, not transactional or control, no
 * compression, no LogAppendTime, records without headers) are joined into one batch in the write
 * buffer's arena of up to `batch.bytes` (config.batchBytes; 16 KiB, the producer's default
 * batch.size): one header and one CRC-32C per batch instead of one per append. Each record keeps
 * the offset, timestamp, key and value it would have had in a batch of its own append; only the
 * batch boundaries differ, as a producer's batches differ from its sends. The batch is sealed
 * (header and CRC written) before anything else joins the write buffer and before the buffer is
 * committed, so no unsealed byte reaches a file.
 */
import { putBatchHeader, type EncodeBatchOptions } from '../format/batch-encode.js';
import { RECORD_BATCH_OVERHEAD } from '../format/batch-header.js';
import { CompressionType } from '../format/compression.js';
import { onePassMaxTimestamp, writeRecordsFrom, writeRecordsOnePass } from '../format/record-writer.js';
import type { RecordInput } from '../format/record-batch.js';
import type { AppendedBatchInfo } from '../segment/segment.js';
import type { AppendOptions } from './append-types.js';

/**
 * A batch with assigned offsets, its bytes buf[start, start + size); what the segment's append
 * takes of each batch itself (one object per batch: buffered mode holds thousands until commit).
 */
export interface PendingBatch extends AppendedBatchInfo {
  buf: Buffer;
  start: number;
  baseOffset: number;
  records: number;
}

/** Whether an append's records may join an open batch: nothing in its options that is per batch. */
export function joinsOpenBatch(o: AppendOptions): boolean {
  return o.producerId === undefined && o.producerEpoch === undefined && o.baseSequence === undefined && !o.compression && !o.transactional && !o.control && !o.logAppendTime;
}

/** A record's bytes beyond its key and value when small (length, attributes, deltas, key and value lengths, header count: 7–10). */
const RECORD_FIELDS_TYPICAL_BYTES = 10;

/**
 * The bytes `records` would likely take in a batch: what decides, before writing them, whether
 * they join the open batch or start the next (a wrong guess costs a rewrite, never a byte).
 */
export function likelyBytes(records: readonly RecordInput[]): number {
  let n = records.length * RECORD_FIELDS_TYPICAL_BYTES;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    n += (r.key == null ? 0 : r.key.length) + (r.value === null ? 0 : r.value.length);
  }
  return n;
}

export class OpenBatch {
  /** The open batch — the last in the write buffer, its header not yet written — or undefined. */
  batch: PendingBatch | undefined = undefined;
  private baseTimestamp = -1;
  /** putBatchHeader's options for a plain batch: only the base offset varies. */
  private readonly headerOpts: EncodeBatchOptions = { baseOffset: 0 };

  /**
   * Opens a batch at arena[start] holding `records` from `baseOffset` on (its header space left
   * blank until seal). Returns it, or undefined — arena bytes from `start` on partly overwritten —
   * when the records are not plain enough for the one-pass writer or (by `likely`, their
   * likelyBytes) exceed `maxBytes`.
   */
  open(records: readonly RecordInput[], likely: number, arena: Buffer, start: number, baseOffset: number, nowMs: number, maxBytes: number): PendingBatch | undefined {
    if (this.batch !== undefined) this.seal();
    if (RECORD_BATCH_OVERHEAD + likely > maxBytes) return undefined;
    const baseTimestamp = records[0]!.timestamp ?? nowMs;
    if (typeof baseTimestamp !== 'number' || !Number.isSafeInteger(baseTimestamp)) return undefined;
    const end = writeRecordsOnePass(records, arena, start, Math.min(arena.length, start + maxBytes), baseTimestamp, nowMs, undefined);
    if (end < 0) return undefined;
    this.baseTimestamp = baseTimestamp;
    const count = records.length;
    this.batch = { buf: arena, start, size: end - start, lastOffset: baseOffset + count - 1, maxTimestamp: onePassMaxTimestamp, baseOffset, records: count };
    return this.batch;
  }

  /**
   * Writes `records` behind the open batch's last record, which ends at `arenaPos` of `arena`.
   * Returns the bytes added, or −1 — nothing taken, the arena past arenaPos perhaps partly
   * overwritten — when no batch is open there or the batch would (by `likely`, the records'
   * likelyBytes) outgrow `maxBytes`.
   */
  extend(records: readonly RecordInput[], likely: number, arena: Buffer | undefined, arenaPos: number, nowMs: number, maxBytes: number): number {
    const b = this.batch;
    if (b === undefined || b.buf !== arena || b.start + b.size !== arenaPos || b.size + likely > maxBytes) return -1;
    const end = writeRecordsFrom(records, arena, arenaPos, Math.min(arena.length, b.start + maxBytes), this.baseTimestamp, nowMs, undefined, b.records);
    if (end < 0) return -1;
    const count = records.length;
    b.size = end - b.start;
    b.records += count;
    b.lastOffset += count;
    if (onePassMaxTimestamp > b.maxTimestamp) b.maxTimestamp = onePassMaxTimestamp;
    return end - arenaPos;
  }

  /** Writes the open batch's header and CRC-32C; no batch is open after. */
  seal(): void {
    const b = this.batch;
    if (b === undefined) return;
    this.batch = undefined;
    this.headerOpts.baseOffset = b.baseOffset;
    putBatchHeader(b.buf, b.start, b.start + b.size, this.headerOpts, CompressionType.none, b.records, this.baseTimestamp, b.maxTimestamp, 0);
  }
}
