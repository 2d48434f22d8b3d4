/**
 * Producer-state snapshots taken and loaded as Kafka does (snapshot-keeper.ts, producer-state-load.ts):
 *
 *  - against a real KRaft broker's idempotent partition (kraft-idempotent-multisegment-erickimm-2025/
 *    stock-trades-0, Kafka 3.9: 3586.snapshot at its roll, 5579.snapshot at its close): a copy of the
 *    first segment rolled by logtool at 3586 gets Kafka's exact 3586.snapshot; the state loaded from
 *    Kafka's 3586.snapshot plus the batches after it gives Kafka's exact 5579.snapshot. Kafka left out
 *    the producers idle for a day by then (producer.id.expiration.ms); logtool judges that by the
 *    log's clock (its largest timestamp below the snapshot's offset), so it leaves out the same;
 *  - a random idempotent/transactional workload with rolls and reopens: the state from the newest
 *    snapshot at or below the recovery point plus the batches after it equals a full scan's, and
 *    reads fewer batches;
 *  - a no-op open and close (writable or read-only) writes no file; one that appended writes
 *    `<log end>.snapshot`.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/api.js';
import { realIO } from '../../../src/engine/io.js';
import { encodeBatch } from '../../../src/engine/format/record-batch.js';
import { endTxnMarkerRecord } from '../../../src/engine/partition-state/abort-transaction.js';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../../../src/engine/partition-state/producer-state.js';
import { scanProducerState } from '../../../src/engine/partition-state/isolation.js';
import { loadProducerState, snapshotEntriesOf } from '../../../src/engine/partition-state/producer-state-load.js';
import { encodeProducerSnapshot } from '../../../src/engine/partition-state/producer-snapshot.js';
import { listProducerSnapshots } from '../../../src/engine/partition-state/snapshot-files.js';
import { fixturePath, makeTempDir, removeTempDirs, requireFixtures, treeSnapshot } from '../../helpers/fixtures.js';
import { countingIO } from '../../helpers/counting-io.js';

const haveFixtures = requireFixtures(import.meta.url);
afterAll(removeTempDirs);

const SRC = fixturePath('segments/kraft-idempotent-multisegment-erickimm-2025', 'stock-trades-0');
const name = (o: number, suffix: string) => `${String(o).padStart(20, '0')}${suffix}`;
/** The log's clock at 3586 (its largest timestamp below it): producers idle for a day by then are expired. */
const KAFKA_ROLL_MS = 1_757_971_954_430;

/** A writable copy of the fixture partition with only the files named. */
function copyOf(files: string[]): string {
  const dir = path.join(makeTempDir(), 'stock-trades-0');
  fs.mkdirSync(dir);
  for (const f of files) {
    fs.copyFileSync(path.join(SRC, f), path.join(dir, f));
    fs.chmodSync(path.join(dir, f), 0o644);
  }
  return dir;
}

describe.runIf(haveFixtures)("Kafka's snapshots of a real broker's idempotent partition", () => {
  it("logtool's roll at 3586 writes Kafka's exact 00000000000000003586.snapshot", async () => {
    const dir = copyOf([name(0, '.log'), name(0, '.index'), name(0, '.timeindex'), 'leader-epoch-checkpoint', 'partition.metadata']);
    const log = Log.open(dir);
    expect(log.nextOffset).toBe(3586);
    log.roll(3586);
    await log.close(); // close's snapshot would be at 3586 too: not written again
    const kafka = fs.readFileSync(path.join(SRC, name(3586, '.snapshot')));
    expect(fs.readFileSync(path.join(dir, name(3586, '.snapshot'))).equals(kafka)).toBe(true);
    expect(listProducerSnapshots(realIO, dir).map((s) => s.offset)).toEqual([3586]);
  });

  it("Kafka's 3586.snapshot plus the batches after it give Kafka's exact 5579.snapshot (its close)", () => {
    const dir = copyOf(fs.readdirSync(SRC).filter((f) => f !== name(5579, '.snapshot')));
    const log = Log.open(dir, { readOnly: true });
    try {
      const loaded = loadProducerState(log, { maxSnapshotOffset: 5579 });
      expect(loaded.snapshotOffset).toBe(3586);
      const full = scanProducerState(log.segments);
      const allBatches = loadProducerState(log, { maxSnapshotOffset: -1 }).batchesScanned;
      expect(loaded.batchesScanned).toBeLessThan(allBatches);
      const bytes = encodeProducerSnapshot(snapshotEntriesOf(loaded.state, KAFKA_ROLL_MS));
      expect(bytes.equals(fs.readFileSync(path.join(SRC, name(5579, '.snapshot'))))).toBe(true);
      // The full scan knows the producers Kafka had expired; without them it writes the same bytes.
      expect(full.producers.size).toBeGreaterThan(loaded.state.producers.size);
      expect(encodeProducerSnapshot(snapshotEntriesOf(full, KAFKA_ROLL_MS)).equals(bytes)).toBe(true);
    } finally {
      void log.close();
    }
  });

  it('a no-op open and close, writable or read-only, writes no file; an append makes close write <log end>.snapshot', async () => {
    const dir = copyOf(fs.readdirSync(SRC));
    await Log.open(dir).close(); // the first open recovers the copy (no clean-shutdown marker): it may rewrite indexes
    const before = treeSnapshot(dir);
    await Log.open(dir, { readOnly: true }).close();
    await Log.open(dir).close();
    // Same files, same bytes; the snapshots not even touched. (The recovery-point checkpoint and the
    // clean-shutdown marker live in the parent; a writable open re-extends and trims the active
    // segment's indexes, which touches their mtime only.)
    const after = treeSnapshot(dir);
    const bytesOnly = (t: Record<string, string>) => Object.fromEntries(Object.entries(t).map(([f, v]) => [f, f.endsWith('.snapshot') ? v : v.split(':')[0]]));
    expect(bytesOnly(after)).toEqual(bytesOnly(before));
    const log = Log.open(dir);
    await log.append([{ key: null, value: Buffer.from('x') }]);
    await log.close();
    expect(listProducerSnapshots(realIO, dir).map((s) => s.offset)).toEqual([3586, 5579, 5580]);
  });
});

describe('the snapshot at close, when no producer id was appended since open', () => {
  it('reads no batch of the log (Kafka writes it from memory) and holds what a full scan holds', async () => {
    const dir = path.join(makeTempDir(), 'q-0');
    const value = Buffer.alloc(100, 1);
    const plain = async (log: Log, n: number) => {
      for (let i = 0; i < n; i++) await log.append([{ key: null, value }]);
    };
    /** `.log` reads of close(), of a log opened on the counting I/O layer that appended `n` records without a producer id. */
    const closeReads = async (n: number): Promise<number> => {
      const counting = countingIO();
      const log = Log.open(dir, { io: counting.io, config: { flushMode: 'async' } });
      await plain(log, n);
      const before = counting.logReads();
      await log.close();
      return counting.logReads() - before;
    };
    // At most one read: the clean-shutdown marker's check of the tail after the last index entry
    // (clean-shutdown.ts). The replay of every batch header since the last snapshot took 14.
    expect(await closeReads(300)).toBeLessThanOrEqual(1); // a new log
    let log = Log.open(dir);
    for (const pid of [7, 8]) await log.append([{ key: null, value }, { key: null, value }], { producerId: pid, producerEpoch: 0, baseSequence: 0 });
    await log.close();
    expect(await closeReads(300)).toBeLessThanOrEqual(1); // a reopened one
    log = Log.open(dir, { readOnly: true });
    const full = scanProducerState(log.segments);
    await log.close();
    const last = listProducerSnapshots(realIO, dir).at(-1)!;
    expect(last.offset).toBe(604);
    expect(fs.readFileSync(path.join(dir, name(604, '.snapshot'))).equals(encodeProducerSnapshot(snapshotEntriesOf(full)))).toBe(true);
    expect(snapshotEntriesOf(full).map((e) => e.producerId)).toEqual(expect.arrayContaining([7n, 8n]));
  });
});

type Step =
  | { kind: 'data'; pid: number; count: number; txn: boolean }
  | { kind: 'marker'; pid: number; abort: boolean }
  | { kind: 'plain'; count: number }
  | { kind: 'roll' }
  | { kind: 'reopen' };

const pidArb = fc.constantFrom(7, 8, 9);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('data' as const), pid: pidArb, count: fc.integer({ min: 1, max: 3 }), txn: fc.boolean() }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('marker' as const), pid: pidArb, abort: fc.boolean() }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('plain' as const), count: fc.integer({ min: 1, max: 3 }) }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'roll' as const }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'reopen' as const }), weight: 1 },
);

describe('producer state from the newest snapshot plus the tail equals a full scan', () => {
  it('over random idempotent and transactional workloads with rolls and reopens', async () => {
    let sawSnapshotLoad = false;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 40 }), async (steps) => {
        const dir = path.join(makeTempDir(), 'ps-0');
        let log = Log.open(dir, { config: { flushMode: 'sync' } });
        const seq = new Map<number, number>();
        const inTxn = new Map<number, boolean>();
        const rec = (n: number) => Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`) }));
        try {
          for (const s of steps) {
            if (s.kind === 'reopen') {
              await log.close();
              log = Log.open(dir, { config: { flushMode: 'sync' } });
            } else if (s.kind === 'roll') {
              if (log.activeSegment.size > 0) log.roll();
            } else if (s.kind === 'plain') {
              await log.append(rec(s.count));
            } else if (s.kind === 'data') {
              // A producer inside a transaction writes transactional batches only (Kafka refuses others).
              const txn = s.txn || inTxn.get(s.pid) === true;
              const baseSequence = seq.get(s.pid) ?? 0;
              await log.append(rec(s.count), { producerId: s.pid, producerEpoch: 0, baseSequence, transactional: txn });
              seq.set(s.pid, baseSequence + s.count);
              if (txn) inTxn.set(s.pid, true);
            } else {
              const marker = encodeBatch([endTxnMarkerRecord(s.abort ? CONTROL_ABORT : CONTROL_COMMIT, 3, Date.now())], {
                baseOffset: 0,
                producerId: s.pid,
                producerEpoch: 0,
                baseSequence: -1,
                transactional: true,
                control: true,
              });
              await log.appendEncoded(marker, { control: true });
              inTxn.set(s.pid, false);
            }
          }
          await log.flush();
          const recoveryPoint = log.positions().recoveryPoint;
          const loaded = loadProducerState(log, { maxSnapshotOffset: recoveryPoint });
          const full = scanProducerState(log.segments);
          const byId = (st: typeof full) => snapshotEntriesOf(st).sort((a, b) => Number(a.producerId - b.producerId));
          expect(byId(loaded.state)).toEqual(byId(full));
          expect(loaded.state.openTransactions()).toEqual(full.openTransactions());
          expect(loaded.state.lastStableOffset(log.nextOffset)).toBe(full.lastStableOffset(log.nextOffset));
          const from = loaded.snapshotOffset ?? -1;
          expect(loaded.state.aborted).toEqual(full.aborted.filter((t) => t.lastOffset >= from));
          const allBatches = loadProducerState(log, { maxSnapshotOffset: -1 }).batchesScanned;
          if (loaded.snapshotOffset !== undefined && loaded.snapshotOffset > log.segments[0]!.baseOffset && allBatches > 0) {
            sawSnapshotLoad = true;
            expect(loaded.batchesScanned).toBeLessThan(allBatches);
          }
        } finally {
          await log.close();
        }
      }),
      { numRuns: 60 },
    );
    expect(sawSnapshotLoad).toBe(true);
  }, 300_000);
});
