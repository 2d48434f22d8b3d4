/**
 * What the cleaner retains of one batch (Kafka's MemoryRecords.filterTo with Cleaner's
 * RecordFilter: checkBatchRetention and shouldRetainRecord, kafka-format.md §15.3):
 *
 * - batches of aborted transactions and control markers that can be discarded go (a marker only
 *   once its delete horizon has passed), unless they are the last batch of an active producer or
 *   end at the round's upper bound — those stay, emptied if need be;
 * - a record is kept if its offset is the latest for its key in the offset map, or lies beyond
 *   what the map covers; a tombstone goes once its batch's delete horizon has passed;
 * - a batch that keeps tombstones (or a marker of an empty transaction) is stamped with a delete
 *   horizon = now + delete.retention.ms; a batch kept whole and unchanged is copied byte for byte.
 */
import { Attr } from '../format/record-batch.js';
import type { Batch } from './batch-reader.js';
import { controlType, emptyBatch, rebuildBatch } from './batch-records.js';
import type { CleanedWriter } from './cleaned-output.js';
import type { OffsetMap } from './offset-map.js';
import type { CleanRun } from './scan.js';
import type { ActiveProducer, CleanedTxnTracker } from './types.js';
import type { LogSegment } from '../segment/segment.js';

const enum Retention {
  Delete,
  DeleteEmpty,
  RetainEmpty,
}

export class RecordFilter {
  private readonly run: CleanRun;
  private readonly writer: CleanedWriter;
  private keep = new Int32Array(64);

  constructor(run: CleanRun, writer: CleanedWriter) {
    this.run = run;
    this.writer = writer;
  }

  /** Kafka's checkBatchRetention: what becomes of the batch as a whole. */
  private batchRetention(e: Batch, txn: CleanedTxnTracker, active: Map<number, ActiveProducer>, upperBound: number) {
    const h = e.header;
    const last = h.baseOffset + h.lastOffsetDelta;
    const control = (h.attributes & Attr.control) !== 0;
    const hasHorizon = (h.attributes & Attr.deleteHorizon) !== 0;
    const canDiscard = control ? txn.onControlBatchRead(h, controlType(this.run.scan.refs)) : txn.onBatchRead(h);
    const discardRecords = control ? canDiscard && hasHorizon && h.baseTimestamp <= this.run.nowMs : canDiscard;
    let retention: Retention;
    const p = h.producerId >= 0 ? active.get(h.producerId) : undefined;
    const lastOfProducer = p !== undefined && (p.lastDataOffset >= 0 ? last === p.lastDataOffset : control && h.producerEpoch === p.epoch);
    if (lastOfProducer) retention = Retention.RetainEmpty;
    else if (last + 1 === upperBound) retention = Retention.RetainEmpty;
    else if (discardRecords) retention = Retention.Delete;
    else retention = Retention.DeleteEmpty;
    return { retention, discardRecords, containsMarkerForEmptyTxn: canDiscard && control };
  }

  /**
   * Marks the records to keep in `keep[0, kept)`; counts the tombstones kept and dropped. A
   * record is kept when the map has no later offset for its key (or does not cover its offset).
   */
  private retainedRecords(e: Batch, map: OffsetMap): { kept: number; tombstones: number; tombstonesDropped: number } {
    const h = e.header;
    const refs = this.run.scan.refs;
    const control = (h.attributes & Attr.control) !== 0;
    const hasHorizon = (h.attributes & Attr.deleteHorizon) !== 0;
    const n = refs.count;
    if (this.keep.length < n) this.keep = new Int32Array(Math.max(n, this.keep.length * 2));
    const keep = this.keep;
    let kept = 0;
    let tombstones = 0;
    let tombstonesDropped = 0;
    const retainDeletes = !hasHorizon || this.run.nowMs < h.baseTimestamp;
    const latest = map.latestOffset;
    const data = refs.data;
    for (let i = 0; i < n; i++) {
      const offset = h.baseOffset + refs.offsetDelta[i]!;
      const isTombstone = refs.valueLen[i]! < 0;
      let retain: boolean;
      if (control || offset > latest) retain = true;
      else {
        const kl = refs.keyLen[i]!;
        if (kl < 0) retain = false;
        else {
          const latestOfKey = map.isLatest(offset, data, refs.keyStart[i]!, refs.keyStart[i]! + kl);
          retain = latestOfKey && (!isTombstone || retainDeletes);
          if (!retain && isTombstone && latestOfKey) tombstonesDropped++;
        }
      }
      if (retain) {
        keep[kept++] = i;
        if (isTombstone && !control) tombstones++;
      }
    }
    return { kept, tombstones, tombstonesDropped };
  }

  /**
   * Filters one batch into the writer. Returns true when the batch was copied byte for byte.
   */
  filterBatch(e: Batch, seg: LogSegment, txn: CleanedTxnTracker, active: Map<number, ActiveProducer>, upperBound: number, map: OffsetMap): boolean {
    const h = e.header;
    const r = this.run.report;
    const refs = this.run.scan.refs;
    const w = this.writer;
    const last = h.baseOffset + h.lastOffsetDelta;
    const hasHorizon = (h.attributes & Attr.deleteHorizon) !== 0;
    this.run.scan.walk(e, seg);
    const { retention, discardRecords, containsMarkerForEmptyTxn } = this.batchRetention(e, txn, active, upperBound);
    if (retention === Retention.Delete) {
      r.batchesRemoved++;
      r.recordsRemoved += refs.count;
      return false;
    }
    const n = refs.count;
    const { kept, tombstones, tombstonesDropped } = discardRecords ? { kept: 0, tombstones: 0, tombstonesDropped: 0 } : this.retainedRecords(e, map);
    r.tombstonesRemoved += tombstonesDropped;
    r.recordsRemoved += n - kept;
    r.recordsRetained += kept;
    if (kept > 0) {
      const needHorizon = (tombstones > 0 || containsMarkerForEmptyTxn) && !hasHorizon;
      if (kept === n && !needHorizon) {
        w.write(e.buf, e.bufPos, e.size, last, h.maxTimestamp);
        r.batchesCopied++;
        return true;
      }
      const horizon = needHorizon ? this.run.nowMs + this.run.log.config.deleteRetentionMs : hasHorizon ? h.baseTimestamp : undefined;
      if (needHorizon) r.deleteHorizonsSet++;
      const rebuilt = rebuildBatch(h, refs, this.keep, kept, { deleteHorizonMs: horizon }, w.alloc);
      w.commit(rebuilt.length, last, readMaxTimestamp(rebuilt));
      r.batchesRewritten++;
      return false;
    }
    if (retention === Retention.RetainEmpty) {
      const empty = emptyBatch(h, w.alloc, refs.exactMaxTimestamp);
      w.commit(empty.length, last, h.maxTimestamp);
      r.batchesEmptied++;
      // An already-empty batch written again unchanged.
      return empty.equals(e.buf.subarray(e.bufPos, e.bufPos + e.size));
    }
    r.batchesRemoved++;
    return false;
  }
}

function readMaxTimestamp(batch: Buffer): number {
  return batch.readInt32BE(35) * 4294967296 + batch.readUInt32BE(39);
}
