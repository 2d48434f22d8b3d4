/**
 * Producer state from the newest usable snapshot plus the batches after it, as Kafka's loader
 * builds it (UnifiedLog.rebuildProducerState; ProducerStateManager.loadFromSnapshot,
 * loadProducerEntry, readSnapshot / writeSnapshot; kafka-format.md §7, §10.1 step 9) instead of a
 * scan of the whole log:
 *
 * - the snapshot used is the newest one at or below `maxSnapshotOffset` that reads and checks
 *   (callers pass the recovery point: what lies above it was never made durable with its data);
 *   a corrupt one is passed over with a warning (Kafka deletes it; logtool leaves files alone);
 * - then every whole batch whose last offset is at or above the snapshot's offset and below
 *   `upTo` is replayed (Kafka's segment.read(startOffset) includes the batch holding it).
 *
 * A snapshot entry records a producer's last data batch only, as Kafka's does: a state loaded
 * from one knows one batch per producer for duplicate detection where a full scan knows five,
 * the last offset of an open transaction is the producer's last data offset, and the partition
 * leader epoch of its last batch is unknown (−1) until a batch of it is replayed.
 */
import type { FileIO } from '../io.js';
import type { LogSegment } from '../segment/segment.js';
import type { LogEntry } from '../segment/file-records.js';
import { decodeEntryRecords } from '../format/entry-records.js';
import { controlTypeOf } from '../format/record-batch.js';
import { CONTROL_ABORT, CONTROL_COMMIT, DEFAULT_PRODUCER_ID_EXPIRATION_MS, ProducerStateManager, type ControlMarker, type ProducerState } from './producer-state.js';
import type { ProducerSnapshotEntry } from './producer-snapshot.js';
import { kafkaSnapshotOrder, newestUsableSnapshot } from './snapshot-files.js';

/** A control record's marker from its key and value. */
export function markerOf(key: Buffer | null, value: Buffer | null): ControlMarker | undefined {
  const t = controlTypeOf(key);
  if (!t) return undefined;
  const endTxn = (t.type === CONTROL_ABORT || t.type === CONTROL_COMMIT) && value !== null && value.length >= 6;
  return { type: t.type, coordinatorEpoch: endTxn ? value.readInt32BE(2) : -1 };
}

/** The control record of a control batch (undefined: no readable record). */
export function entryControlMarker(entry: LogEntry): ControlMarker | undefined {
  try {
    const r = decodeEntryRecords(entry)[0];
    return r ? markerOf(r.key, r.value) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Feeds `state` every whole batch with lastOffset in [fromOffset, upTo), in log order. Stops quietly
 * at a torn or corrupt entry (readers report those). Returns the batches read.
 */
export function replayBatches(state: ProducerStateManager, segments: readonly LogSegment[], fromOffset: number, upTo: number): number {
  let batches = 0;
  if (fromOffset >= upTo) return 0; // nothing between (a snapshot at upTo itself): no lookup either
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const next = segments[i + 1];
    if (next && next.baseOffset <= fromOffset) continue; // wholly below the start
    if (seg.baseOffset >= upTo) break;
    const start = fromOffset > seg.baseOffset ? seg.translateOffset(fromOffset) : undefined;
    if (fromOffset > seg.baseOffset && !start) continue; // nothing in it reaches fromOffset
    const scanner = seg.scanner({ startPosition: start?.position ?? 0, headersOnly: true, reuseBuffer: true }); // keeps nothing of an entry
    for (const entry of scanner.entries()) {
      if (entry.lastOffset >= upTo) return batches;
      if (!entry.header || entry.lastOffset < fromOffset) continue;
      batches++;
      state.update(entry.header, () => entryControlMarker(entry));
    }
    if (scanner.end.kind !== 'end') break;
  }
  return batches;
}

/** Kafka's writeSnapshot entry of one producer. */
function snapshotEntryOf(p: ProducerState): ProducerSnapshotEntry {
  return {
    producerId: BigInt(p.producerId),
    epoch: p.epoch,
    lastSequence: p.lastDataOffset < 0 ? -1 : p.lastSequence,
    lastOffset: BigInt(p.lastDataOffset),
    offsetDelta: p.lastDataOffset < 0 ? 0 : p.lastOffsetDelta,
    timestamp: BigInt(p.lastTimestamp),
    coordinatorEpoch: p.coordinatorEpoch,
    currentTxnFirstOffset: BigInt(p.txnFirst),
  };
}

/**
 * The entries of a snapshot of `state` taken at `nowMs`, in the order Kafka's HashMap writes them:
 * producers expired then (idle for producer.id.expiration.ms, no open transaction) are left out,
 * as Kafka's removeExpiredProducers has removed them from the map it writes (and its loader drops
 * them anyway). `nowMs` undefined: every producer.
 */
export function snapshotEntriesOf(state: ProducerStateManager, nowMs?: number, producerIdExpirationMs = DEFAULT_PRODUCER_ID_EXPIRATION_MS): ProducerSnapshotEntry[] {
  const producers = nowMs === undefined ? state.producers : state.activeProducers(nowMs, producerIdExpirationMs);
  return kafkaSnapshotOrder([...producers.values()].map(snapshotEntryOf));
}

/** Kafka's readSnapshot + loadProducerEntry: one producer of a snapshot as logtool keeps it. */
function producerOf(e: ProducerSnapshotEntry): ProducerState {
  const lastDataOffset = Number(e.lastOffset);
  const txnFirst = Number(e.currentTxnFirstOffset);
  const hasBatch = lastDataOffset >= 0;
  const firstSeq = e.lastSequence < 0 ? -1 : (((e.lastSequence - e.offsetDelta) % 0x80000000) + 0x80000000) % 0x80000000;
  return {
    producerId: Number(e.producerId),
    epoch: e.epoch,
    lastDataOffset: hasBatch ? lastDataOffset : -1,
    lastSequence: hasBatch ? e.lastSequence : -1,
    lastOffsetDelta: hasBatch ? e.offsetDelta : 0,
    lastTimestamp: Number(e.timestamp),
    coordinatorEpoch: e.coordinatorEpoch,
    txnFirst: txnFirst >= 0 ? txnFirst : -1,
    txnLast: txnFirst >= 0 ? Math.max(txnFirst, lastDataOffset) : -1,
    partitionLeaderEpoch: -1,
    batches: hasBatch && e.lastSequence >= 0 ? [{ firstSeq, lastSeq: e.lastSequence, firstOffset: lastDataOffset - e.offsetDelta, lastOffset: lastDataOffset }] : [],
  };
}

/** A producer state holding a snapshot's entries (in the snapshot's order). */
export function stateFromSnapshot(entries: readonly ProducerSnapshotEntry[], highWatermark?: number): ProducerStateManager {
  const state = new ProducerStateManager(highWatermark);
  for (const e of entries) state.loadEntry(producerOf(e));
  return state;
}

/** Where producer state is loaded from: a partition directory and its segments. */
export interface ProducerStateSource {
  readonly io: FileIO;
  readonly dir: string;
  readonly segments: readonly LogSegment[];
}

export interface LoadProducerStateOptions {
  /** Newest snapshot offset that may be used (the recovery point); below 0: none, a full scan. */
  maxSnapshotOffset: number;
  /** Replay stops before this offset (default: the log end). */
  upTo?: number;
  highWatermark?: number;
  onCorrupt?: (file: string, message: string) => void;
}

export interface LoadedProducerState {
  state: ProducerStateManager;
  /** The snapshot loaded (undefined: none, the state was built from the log start). */
  snapshotOffset: number | undefined;
  /** Batches replayed after it. */
  batchesScanned: number;
}

/** Kafka's loader: newest usable snapshot at or below maxSnapshotOffset, then the batches after it. */
export function loadProducerState(src: ProducerStateSource, opts: LoadProducerStateOptions): LoadedProducerState {
  const upTo = opts.upTo ?? Infinity;
  const snap = opts.maxSnapshotOffset >= 0 && src.io.stat(src.dir) ? newestUsableSnapshot(src.io, src.dir, Math.min(opts.maxSnapshotOffset, upTo), opts.onCorrupt) : undefined;
  const state = snap ? stateFromSnapshot(snap.entries, opts.highWatermark) : new ProducerStateManager(opts.highWatermark);
  const batchesScanned = replayBatches(state, src.segments, snap?.offset ?? -Infinity, upTo);
  return { state, snapshotOffset: snap?.offset, batchesScanned };
}
