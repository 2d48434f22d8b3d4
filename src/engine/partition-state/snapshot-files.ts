/**
 * A partition's producer-state snapshot files (kafka-format.md §7; Kafka's ProducerStateManager:
 * loadSnapshots, loadFromSnapshot, takeSnapshot / writeSnapshot): listing them, finding the newest
 * usable one at or below an offset, writing one, and the order Kafka writes a snapshot's entries in.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { assert } from '../errors.js';
import { writeFileAtomic } from '../checkpoint.js';
import { parseBaseOffset, segmentFileName } from '../segment/segment-files.js';
import { PRODUCER_SNAPSHOT_SUFFIX, encodeProducerSnapshot, readProducerSnapshot, type ProducerSnapshotEntry } from './producer-snapshot.js';

export interface ProducerSnapshotFile {
  offset: number;
  file: string;
}

/** The `<20-digit offset>.snapshot` files of a partition directory, lowest offset first. */
export function listProducerSnapshots(io: FileIO, dir: string): ProducerSnapshotFile[] {
  const out: ProducerSnapshotFile[] = [];
  for (const name of io.readdir(dir)) {
    if (!name.endsWith(PRODUCER_SNAPSHOT_SUFFIX) || name.length !== 20 + PRODUCER_SNAPSHOT_SUFFIX.length) continue;
    const offset = parseBaseOffset(name);
    if (offset !== undefined) out.push({ offset, file: path.join(dir, name) });
  }
  return out.sort((a, b) => a.offset - b.offset);
}

export interface LoadedProducerSnapshot extends ProducerSnapshotFile {
  entries: ProducerSnapshotEntry[];
}

/**
 * Kafka's loadFromSnapshot: the newest snapshot at or below `maxOffset` that reads and checks; a
 * corrupt one is passed over (Kafka deletes it; logtool leaves files alone here and reports it
 * through `onCorrupt`). undefined: none, so producer state starts empty at the log start.
 */
export function newestUsableSnapshot(io: FileIO, dir: string, maxOffset: number, onCorrupt: (file: string, message: string) => void = () => {}): LoadedProducerSnapshot | undefined {
  const candidates = listProducerSnapshots(io, dir).filter((s) => s.offset <= maxOffset);
  for (let i = candidates.length - 1; i >= 0; i--) {
    const s = candidates[i]!;
    try {
      return { ...s, entries: readProducerSnapshot(io, s.file) };
    } catch (e) {
      onCorrupt(s.file, (e as Error).message);
    }
  }
  return undefined;
}

/**
 * Writes `<offset>.snapshot` in Kafka's format, atomically and (unless `durable: false`, Kafka's
 * takeSnapshot(sync = false) at a roll, synced by the next flush) durably (Kafka: takeSnapshot).
 */
export function writeProducerSnapshot(io: FileIO, dir: string, offset: number, entries: readonly ProducerSnapshotEntry[], opts: { durable?: boolean } = {}): string {
  assert(Number.isSafeInteger(offset) && offset >= 0, `producer snapshot offset ${offset} is not a non-negative integer`);
  const file = path.join(dir, segmentFileName(offset, PRODUCER_SNAPSHOT_SUFFIX));
  writeFileAtomic(io, file, encodeProducerSnapshot(entries), opts);
  return file;
}

/**
 * The order Kafka writes a snapshot's entries in: the iteration order of its producers map, a
 * java.util.HashMap<Long, …> — by bucket (Long.hashCode spread as HashMap.hash does, masked by the
 * table size), then in insertion order within a bucket. `entries` must be in insertion order (the
 * order producers first appeared since the state was loaded). The table size is the smallest
 * power of two ≥ 16 holding the entries at load factor 0.75; a broker whose map was once larger
 * (producers expired since) has a larger table, so `tableSize` may be given.
 */
export function kafkaSnapshotOrder(entries: readonly ProducerSnapshotEntry[], tableSize?: number): ProducerSnapshotEntry[] {
  let size = tableSize ?? 16;
  while (tableSize === undefined && entries.length > size * 0.75) size *= 2;
  assert((size & (size - 1)) === 0 && size >= 1, `HashMap table size ${size} is not a power of two`);
  const bucket = (id: bigint) => {
    const u = BigInt.asUintN(64, id);
    const h = Number(BigInt.asIntN(32, u ^ (u >> 32n)));
    return (h ^ (h >>> 16)) & (size - 1);
  };
  return entries
    .map((e, i) => ({ e, i, b: bucket(e.producerId) }))
    .sort((x, y) => x.b - y.b || x.i - y.i)
    .map((x) => x.e);
}
