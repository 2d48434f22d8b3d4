/**
 * Kafka's isolation levels on a partition built with kafkajs (test/helpers/txn-partition.ts):
 * committed, aborted and still-open transactions interleaved with plain and idempotent batches.
 * Expected lists are written by hand from Kafka's rules (partition-state/isolation.ts):
 * read_committed stops at the last stable offset (first offset of the open transaction, 14),
 * skips P2's aborted records and every control record; read_uncommitted returns every data record.
 * In a broker's directory the checkpointed high watermark bounds it too, and a transaction whose
 * marker is not below the high watermark is still unstable (Kafka's unreplicatedTxns).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/api.js';
import { committedView, scanProducerState } from '../../../src/engine/partition-state/isolation.js';
import { collectAbortedTxns } from '../../../src/engine/partition-state/transaction-index.js';
import { makeTempDir, removeTempDirs } from '../../helpers/fixtures.js';
import { buildTxnPartition, layoutValues, P1, P2, P3, T0, writeTxnIndexByHand } from '../../helpers/txn-partition.js';
import { realIO } from '../../../src/engine/io.js';

afterAll(removeTempDirs);

const values = layoutValues();
let dir: string;

beforeAll(async () => {
  dir = path.join(makeTempDir(), 'txn-0');
  await buildTxnPartition(dir);
});

function readValues(d: string, opts: Parameters<Log['read']>[0] = {}): string[] {
  const log = Log.open(d, { readOnly: true });
  try {
    return [...log.read(opts)].map((r) => `${r.offset}:${r.value!.toString()}`);
  } finally {
    void log.close();
  }
}

const at = (...offsets: number[]) => offsets.map((o) => `${o}:${values.get(o)}`);

describe('read isolation levels', () => {
  it('read_uncommitted returns every data record, no control record', () => {
    expect(readValues(dir)).toEqual(at(0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 13, 14, 15, 16, 17, 19, 20));
    expect(readValues(dir, { isolationLevel: 'read_uncommitted' })).toEqual(readValues(dir));
  });

  it('read_committed: committed and plain records below the last stable offset, not P2s aborted ones', () => {
    expect(readValues(dir, { isolationLevel: 'read_committed' })).toEqual(at(0, 1, 2, 3, 6, 7, 12, 13));
    expect(at(0, 1, 2, 3, 6, 7, 12, 13).map((s) => s.split(':')[1])).toEqual(['a0', 'a1', 't1-0', 't1-1', 'b0', 'b1', 'c0', 'c1']);
  });

  it('read_committed from inside the aborted transaction still skips it; includeControl does not apply', () => {
    expect(readValues(dir, { isolationLevel: 'read_committed', fromOffset: 5 })).toEqual(at(6, 7, 12, 13));
    expect(readValues(dir, { isolationLevel: 'read_committed', fromOffset: 9, includeControl: true })).toEqual(at(12, 13));
    expect(readValues(dir, { isolationLevel: 'read_committed', fromOffset: 14 })).toEqual([]);
    expect(readValues(dir, { isolationLevel: 'read_committed', maxRecords: 3 })).toEqual(at(0, 1, 2));
  });

  it('the producer state has the open transaction, the aborted one, and the producers epochs', () => {
    const log = Log.open(dir, { readOnly: true });
    try {
      const state = scanProducerState(log.segments);
      expect(state.openTransactions()).toEqual([{ producerId: P3.producerId, producerEpoch: P3.producerEpoch, firstOffset: 14, lastOffset: 15, lastTimestamp: T0 + 14_001 }]);
      // LSO when P2 aborted: no other transaction open (P1 committed at 8) → the marker's offset + 1.
      expect(state.aborted).toEqual([{ producerId: P2.producerId, firstOffset: 4, lastOffset: 11, lastStableOffset: 12 }]);
      expect(state.lastStableOffset(log.nextOffset)).toBe(14);
      expect(state.producers.get(P1.producerId)).toMatchObject({ epoch: 0, coordinatorEpoch: 7, txnFirst: -1, lastDataOffset: 17 });
      expect(state.producers.get(P2.producerId)).toMatchObject({ epoch: 3, coordinatorEpoch: 9, txnFirst: -1 });
    } finally {
      void log.close();
    }
  });

  it('aborted transactions below the recovery point come from .txnindex (as Kafkas fetch), above it from the markers', () => {
    // The partition's parent holds its recovery-point-offset-checkpoint (21 after the clean close).
    const logDir = makeTempDir();
    fs.cpSync(path.dirname(dir), logDir, { recursive: true });
    const copy = path.join(logDir, 'txn-0');
    const log = Log.open(copy, { readOnly: true });
    expect(log.positions().recoveryPoint).toBe(21);
    expect(committedView(log, 0).aborted).toEqual([{ producerId: 2000, firstOffset: 4, lastOffset: 11, lastStableOffset: 12 }]);
    void log.close();
    // Below the recovery point the index is what counts: without it P2's records are not known aborted.
    fs.rmSync(path.join(copy, '00000000000000000000.txnindex'));
    expect(readValues(copy, { isolationLevel: 'read_committed' })).toEqual(at(0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 13));
    // With the recovery point at 0 (nothing indexed by a recovery yet) the markers say it.
    fs.writeFileSync(path.join(logDir, 'recovery-point-offset-checkpoint'), '0\n1\ntxn 0 0\n');
    expect(readValues(copy, { isolationLevel: 'read_committed' })).toEqual(at(0, 1, 2, 3, 6, 7, 12, 13));
    const idx = path.join(copy, 'x.txnindex');
    writeTxnIndexByHand(copy, [[7, 1, 2, 3], [8, 4, 11, 14]]);
    fs.renameSync(path.join(copy, '00000000000000000000.txnindex'), idx);
    expect(collectAbortedTxns(realIO, idx, 3, 14)).toEqual({ aborted: [{ producerId: 8, firstOffset: 4, lastOffset: 11, lastStableOffset: 14 }], complete: true });
    expect(collectAbortedTxns(realIO, idx, 0, 20)).toEqual({ aborted: [{ producerId: 7, firstOffset: 1, lastOffset: 2, lastStableOffset: 3 }, { producerId: 8, firstOffset: 4, lastOffset: 11, lastStableOffset: 14 }], complete: false });
  });

  it('in a broker log directory the checkpointed high watermark bounds read_committed, and a marker at or above it keeps its transaction unstable', async () => {
    const logDir = makeTempDir();
    const copy = path.join(logDir, 'txn-0');
    fs.cpSync(dir, copy, { recursive: true });
    fs.writeFileSync(path.join(logDir, 'meta.properties'), 'version=1\nnode.id=1\ncluster.id=abc\n');
    const withHw = (hw: number) => fs.writeFileSync(path.join(logDir, 'replication-offset-checkpoint'), `0\n1\ntxn 0 ${hw}\n`);
    // HW 12: both markers (8, 11) replicated; LSO 14 > HW → stops at 12.
    withHw(12);
    expect(readValues(copy, { isolationLevel: 'read_committed' })).toEqual(at(0, 1, 2, 3, 6, 7));
    // HW 7: P1's COMMIT (8) is not replicated, its transaction (from 2) is unstable → stops at 2.
    withHw(7);
    expect(readValues(copy, { isolationLevel: 'read_committed' })).toEqual(at(0, 1));
    // read_uncommitted ignores the high watermark (as before).
    expect(readValues(copy).length).toBe(18);
    // No entry for this partition: no high-watermark bound.
    fs.writeFileSync(path.join(logDir, 'replication-offset-checkpoint'), '0\n1\nother 0 3\n');
    expect(readValues(copy, { isolationLevel: 'read_committed' })).toEqual(at(0, 1, 2, 3, 6, 7, 12, 13));
  });
});
