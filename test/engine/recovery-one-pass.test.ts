/**
 * Full recovery (Kafka's LogSegment.recover, kafka-format.md §10.3) reads each `.log` once: the
 * validating scan that rebuilds the offset and time indexes also feeds the producer state the
 * `.txnindex` is rebuilt from (txn-index-rebuild.ts), instead of a second, header-only walk of
 * every segment after it (issue 15, recovery speed). Bytes and reads are counted through the
 * file-I/O layer (a counting layer over the real one).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { realIO, withIO } from '../../src/engine/io.js';
import { countingIO } from '../helpers/counting-io.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { encodeBatch } from '../../src/engine/format/record-batch.js';
import { endTxnMarkerRecord } from '../../src/engine/partition-state/abort-transaction.js';
import { CONTROL_ABORT, CONTROL_COMMIT } from '../../src/engine/partition-state/producer-state.js';

afterAll(removeTempDirs);

const BATCHES = 600;
const RECORDS_PER_BATCH = 8;
const VALUE_BYTES = 100;

describe('full recovery', () => {
  it('reads each .log once: the index scan feeds the producer state for the .txnindex', async () => {
    const dir = path.join(makeTempDir('logtool-recovery-pass-'), 'p-0');
    const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 256 * 1024 }, rememberConfig: false });
    const value = Buffer.alloc(VALUE_BYTES, 0x61);
    for (let b = 0; b < BATCHES; b++) await log.append(Array.from({ length: RECORDS_PER_BATCH }, () => ({ key: null, value })));
    await log.close();
    const logs = fs.readdirSync(dir).filter((n) => n.endsWith('.log'));
    const logBytes = logs.reduce((n, f) => n + realIO.stat(path.join(dir, f))!.size, 0);
    expect(logs.length).toBeGreaterThan(2);

    fs.rmSync(path.join(path.dirname(dir), '.kafka_cleanshutdown'), { force: true });
    const { io, logBytesRead, logReads } = countingIO();
    const report = await withIO(io, () => {
      const reopened = Log.open(dir, { recovery: { forceRecoverAll: true } });
      const r = reopened.loadReport;
      return reopened.close().then(() => r);
    });
    expect(report.segmentsScanned).toBe(logs.length);
    expect(report.batchesValidated).toBe(BATCHES);
    expect(report.bytesValidated).toBe(logBytes);
    expect(report.repaired).toBe(false);
    // Before: a header-only walk after each segment's scan, one read per batch (~2x the bytes).
    expect(logBytesRead()).toBeGreaterThanOrEqual(logBytes);
    expect(logBytesRead()).toBeLessThan(logBytes * 1.25);
    expect(logReads()).toBeLessThan(BATCHES / 4);
  });
});

const marker = (type: number, producerId: number) =>
  encodeBatch([endTxnMarkerRecord(type, 2, Date.now())], { baseOffset: 0, producerId, producerEpoch: 0, baseSequence: -1, transactional: true, control: true });
const recs = (n: number) => Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`) }));

describe('full recovery of transactions spanning segments', () => {
  it('rebuilds every .txnindex to the bytes the append path wrote (producer state carried from segment to segment)', async () => {
    const dir = path.join(makeTempDir('logtool-recovery-pass-'), 'txn-0');
    const log = Log.open(dir, { config: { flushMode: 'sync' }, rememberConfig: false });
    const txn = (pid: number, n: number, baseSequence: number) => log.append(recs(n), { producerId: pid, producerEpoch: 0, baseSequence, transactional: true });
    await txn(5, 2, 0); // 0-1
    await txn(6, 1, 0); // 2
    log.roll();
    await log.append(recs(1)); // 3
    await log.appendEncoded(marker(CONTROL_ABORT, 5), { control: true }); // 4: 5's txn began in segment 0; 6's still open
    log.roll();
    await txn(6, 1, 1); // 5
    await txn(7, 2, 0); // 6-7
    await log.appendEncoded(marker(CONTROL_ABORT, 6), { control: true }); // 8
    await log.appendEncoded(marker(CONTROL_COMMIT, 7), { control: true }); // 9
    await log.close();
    const txnFiles = fs.readdirSync(dir).filter((n) => n.endsWith('.txnindex')).sort();
    const written = new Map(txnFiles.map((f) => [f, fs.readFileSync(path.join(dir, f))]));
    expect([...written.values()].filter((b) => b.length > 0)).toHaveLength(2);

    for (const f of txnFiles) fs.rmSync(path.join(dir, f));
    fs.rmSync(path.join(path.dirname(dir), '.kafka_cleanshutdown'), { force: true });
    const reopened = Log.open(dir, { recovery: { forceRecoverAll: true } });
    expect(reopened.loadReport.segmentsScanned).toBe(3);
    await reopened.close();
    for (const [f, bytes] of written) expect(fs.existsSync(path.join(dir, f)) ? fs.readFileSync(path.join(dir, f)) : Buffer.alloc(0), f).toEqual(bytes);
  });
});
