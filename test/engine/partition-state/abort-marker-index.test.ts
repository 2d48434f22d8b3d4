/**
 * An ABORT marker appended as encoded bytes (Log.appendEncoded, as a copy from another log or a
 * coordinator's marker arrives) adds its transaction to the `.txnindex` of the segment it lands in,
 * as Kafka's append does (UnifiedLog.append → LogSegment.updateTxnIndex; kafka-format.md §6.3):
 * producer id, first offset of the transaction, the marker's offset, the last stable offset once
 * it completed. A COMMIT, or an ABORT ending no transaction, adds nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/api.js';
import { realIO } from '../../../src/engine/io.js';
import { encodeBatch } from '../../../src/engine/format/record-batch.js';
import { endTxnMarkerRecord } from '../../../src/engine/partition-state/abort-transaction.js';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../../../src/engine/partition-state/producer-state.js';
import { collectAbortedTxns } from '../../../src/engine/partition-state/transaction-index.js';
import { makeTempDir, removeTempDirs } from '../../helpers/fixtures.js';

afterAll(removeTempDirs);

const marker = (type: number, producerId: number) =>
  encodeBatch([endTxnMarkerRecord(type, 2, Date.now())], { baseOffset: 0, producerId, producerEpoch: 0, baseSequence: -1, transactional: true, control: true });
const recs = (n: number) => Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`) }));
const txnIndex = (dir: string, base: number) => path.join(dir, `${String(base).padStart(20, '0')}.txnindex`);

describe('ABORT markers through appendEncoded', () => {
  it('index the aborted transaction in the segment holding the marker; COMMIT and empty ABORTs add nothing', async () => {
    const dir = path.join(makeTempDir(), 'abort-0');
    const log = Log.open(dir, { config: { flushMode: 'sync' } });
    const txn = (pid: number, n: number, baseSequence: number) => log.append(recs(n), { producerId: pid, producerEpoch: 0, baseSequence, transactional: true });
    await txn(5, 2, 0); // 0-1
    await log.append(recs(1)); // 2
    await txn(6, 1, 0); // 3
    expect((await log.appendEncoded(marker(CONTROL_ABORT, 5), { control: true })).baseOffset).toBe(4);
    // Producer 6's transaction is still open: the last stable offset when 5's abort completed is 3.
    expect(collectAbortedTxns(realIO, txnIndex(dir, 0), 0, Infinity).aborted).toEqual([{ producerId: 5, firstOffset: 0, lastOffset: 4, lastStableOffset: 3 }]);
    await log.appendEncoded(marker(CONTROL_COMMIT, 6), { control: true }); // 5
    await log.appendEncoded(marker(CONTROL_ABORT, 5), { control: true }); // 6: ends no transaction
    expect(fs.statSync(txnIndex(dir, 0)).size).toBe(34);
    log.roll();
    await txn(7, 2, 0); // 7-8
    await log.appendEncoded(marker(CONTROL_ABORT, 7), { control: true }); // 9
    expect(collectAbortedTxns(realIO, txnIndex(dir, 7), 0, Infinity).aborted).toEqual([{ producerId: 7, firstOffset: 7, lastOffset: 9, lastStableOffset: 10 }]);
    expect(fs.statSync(txnIndex(dir, 0)).size).toBe(34);
    await log.close();
  });
});
