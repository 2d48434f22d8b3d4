/**
 * Producer-state snapshots a writable log takes, where Kafka takes them (UnifiedLog.roll:
 * updateMapEndOffset(newSegment.baseOffset) then ProducerStateManager.takeSnapshot, named
 * `<new base offset>.snapshot`; UnifiedLog.close: takeSnapshot at the log end; kafka-format.md §7)
 * — but only once the log's records changed since it was opened (an append, a roll): a read-only
 * or no-op open and close writes no file. Kafka's takeSnapshot skips an offset already snapshotted
 * (lastMapOffset > lastSnapOffset); so does this.
 *
 * The state at a snapshot's offset is the state at the previous one (or, first, the newest usable
 * snapshot at or below the recovery point the log opened with) plus the batches between them, less
 * the producers expired by then (Kafka's removeExpiredProducers; see logClockMs); when
 * no batch with a producer id was appended in between, nothing is read — neither for the first
 * snapshot after open, whose state is then the state where this writer's appends began (Kafka
 * writes its snapshot from the in-memory state, it does not rescan). Memory: one entry per
 * producer id. Removing snapshots stays with the log's ends (log-ends.ts, segment-changes.ts:
 * Kafka's deleteSnapshotsBefore and the snapshot retired with a deleted segment).
 */
import { RECORD_BATCH_OVERHEAD, readBatchHeader } from '../format/record-batch.js';
import type { ProducerStateManager } from './producer-state.js';
import { loadProducerState, replayBatches, snapshotEntriesOf, type ProducerStateSource } from './producer-state-load.js';
import { writeProducerSnapshot } from './snapshot-files.js';

export class ProducerSnapshotKeeper {
  /** The producer state at `offset`, kept from the last snapshot taken. */
  private cached: { offset: number; state: ProducerStateManager } | undefined;
  private changed = false;
  /** One past the last offset of the last batch with a producer id appended since open. */
  private producerBatchesEnd = -1;
  /** The lowest base offset appended since open (undefined: none). */
  private firstAppended: number | undefined;
  private lastTaken = -1;
  /** Snapshots written by rolls and not fsynced yet. */
  private unsynced: string[] = [];

  constructor(
    private readonly source: ProducerStateSource,
    /** The recovery point the log opened with: snapshots above it are not trusted. */
    private readonly recoveryPointAtOpen: number,
    private readonly onCorrupt: (file: string, message: string) => void = () => {},
  ) {}

  /** A batch [baseOffset, lastOffset] was appended (producerId −1: none). */
  noteAppend(producerId: number, baseOffset: number, lastOffset: number): void {
    this.changed = true;
    if (this.firstAppended === undefined || baseOffset < this.firstAppended) this.firstAppended = baseOffset;
    if (producerId >= 0) this.producerBatchesEnd = Math.max(this.producerBatchesEnd, lastOffset + 1);
  }

  /** An encoded batch was appended (its base offset already set by the append path). */
  noteEncoded(batch: Buffer): void {
    if (batch.length < RECORD_BATCH_OVERHEAD) return;
    const h = readBatchHeader(batch, 0);
    this.noteAppend(h.producerId, h.baseOffset, h.baseOffset + h.lastOffsetDelta);
  }

  /**
   * A roll created the segment at `newBaseOffset`: Kafka's snapshot named after it, written
   * without an fsync on the append path (Kafka: takeSnapshot(false)); the next flush syncs it.
   */
  onRolled(newBaseOffset: number): string | undefined {
    this.changed = true;
    const file = this.take(newBaseOffset, false);
    if (file) this.unsynced.push(file);
    return file;
  }

  /** Close at `logEndOffset` (everything committed): a durable snapshot there if the log changed. */
  onClose(logEndOffset: number): string | undefined {
    return this.changed ? this.take(logEndOffset, true) : undefined;
  }

  /** For the flush: fdatasync of the snapshots rolls wrote (before the directory sync). Returns the fsyncs. */
  async syncRolled(): Promise<number> {
    const files = this.unsynced;
    this.unsynced = [];
    const { io } = this.source;
    for (let i = 0; i < files.length; i++) {
      if (!io.stat(files[i]!)) continue; // removed since (retention)
      try {
        const fd = io.open(files[i]!, 'r');
        try {
          await io.datasyncAsync(fd);
        } finally {
          io.close(fd);
        }
      } catch (e) {
        this.unsynced = files.slice(i).concat(this.unsynced);
        throw e;
      }
    }
    return files.length;
  }

  /** Batches read to build the snapshots so far (for tests and reports). */
  batchesScanned = 0;

  private take(offset: number, durable: boolean): string | undefined {
    if (offset <= this.lastTaken) return undefined;
    const state = this.stateAt(offset);
    const file = writeProducerSnapshot(this.source.io, this.source.dir, offset, snapshotEntriesOf(state, this.logClockMs(offset)), { durable });
    this.lastTaken = offset;
    return file;
  }

  /**
   * The clock producer expiry is judged by: the largest timestamp of the records below `offset` —
   * a live broker's clock when it wrote them. Not the wall clock: a partition rolled offline long
   * after its last write keeps its producers, as the broker that wrote it would have (its loader
   * expires them by its own clock later).
   */
  private logClockMs(offset: number): number {
    let ms = -1;
    for (const s of this.source.segments) if (s.baseOffset < offset) ms = Math.max(ms, s.largestTimestamp);
    return ms;
  }

  private stateAt(offset: number): ProducerStateManager {
    const c = this.cached;
    if (c && c.offset <= offset) {
      if (this.producerBatchesEnd > c.offset) this.batchesScanned += replayBatches(c.state, this.source.segments, c.offset, offset);
      c.offset = offset;
      return c.state;
    }
    // No batch appended since open has a producer id: they change no producer (Kafka's update skips
    // them), so the state at `offset` is the state where this writer's appends began.
    const quietFrom = this.producerBatchesEnd < 0 ? this.firstAppended : undefined;
    const upTo = quietFrom === undefined ? offset : Math.min(offset, quietFrom);
    const loaded = loadProducerState(this.source, { maxSnapshotOffset: this.recoveryPointAtOpen, upTo, onCorrupt: this.onCorrupt });
    this.batchesScanned += loaded.batchesScanned;
    this.cached = { offset, state: loaded.state };
    return loaded.state;
  }
}
