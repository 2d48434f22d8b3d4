/**
 * Recovery rebuilds each recovered segment's `.txnindex` from the markers exactly as Kafka's
 * recovery would (txn-index-rebuild.ts: LogSegment.recover with the producer state at the
 * segment's base): on the kafkajs-built partition of test/helpers/txn-partition.ts, whose
 * `.txnindex` is the one Kafka's append path keeps (written by hand from Kafka's rules: P2's abort,
 * first 4, marker 11, LSO 12), a recovery that finds it missing writes those exact bytes; one that
 * finds it correct writes no byte; a wrong one is rewritten. `rebuild-index` does the same.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/api.js';
import { makeTempDir, removeTempDirs } from '../../helpers/fixtures.js';
import { buildTxnPartition, writeTxnIndexByHand } from '../../helpers/txn-partition.js';
import { cli } from '../../helpers/cli.js';
import { ensureBuilt } from '../../helpers/build.js';

afterAll(removeTempDirs);

/** Makes the next writable open recover every segment: no clean-shutdown marker, no recovery point. */
function forgetCleanShutdown(dir: string): void {
  for (const f of ['.kafka_cleanshutdown', 'recovery-point-offset-checkpoint']) fs.rmSync(path.join(path.dirname(dir), f), { force: true });
}

describe('recovery writes .txnindex as Kafka would', () => {
  it("missing: rebuilt to Kafka's bytes; correct: not touched; wrong: rewritten", async () => {
    const dir = path.join(makeTempDir(), 'txn-0');
    await buildTxnPartition(dir);
    const file = path.join(dir, '00000000000000000000.txnindex');
    const kafka = fs.readFileSync(file);
    expect(kafka.length).toBe(34);

    fs.rmSync(file);
    forgetCleanShutdown(dir);
    const log = Log.open(dir);
    expect(log.loadReport.indexesRebuilt).toContain(file);
    await log.close();
    expect(fs.readFileSync(file).equals(kafka)).toBe(true);

    const stamp = fs.statSync(file).mtimeMs;
    forgetCleanShutdown(dir);
    const again = Log.open(dir);
    expect(again.loadReport.indexesRebuilt).not.toContain(file);
    await again.close();
    expect(fs.statSync(file).mtimeMs).toBe(stamp);

    writeTxnIndexByHand(dir, [[2000, 5, 11, 12]]); // a wrong first offset
    forgetCleanShutdown(dir);
    await Log.open(dir).close();
    expect(fs.readFileSync(file).equals(kafka)).toBe(true);
  });
});

describe('rebuild-index writes .txnindex as Kafka would', () => {
  it("missing: rebuilt to Kafka's bytes and reported; correct: no byte written", async () => {
    ensureBuilt();
    const dir = path.join(makeTempDir(), 'txn-0');
    await buildTxnPartition(dir);
    const file = path.join(dir, '00000000000000000000.txnindex');
    const kafka = fs.readFileSync(file);
    fs.rmSync(file);
    const verify = await cli('rebuild-index', dir, '--verify', '--json');
    expect(verify.stdout).toContain('"txnIndexRebuilt":true');
    expect(fs.existsSync(file)).toBe(false);
    const r = await cli('rebuild-index', dir, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('"txnIndexRebuilt":true');
    expect(fs.readFileSync(file).equals(kafka)).toBe(true);
    const stamp = fs.statSync(file).mtimeMs;
    const again = await cli('rebuild-index', dir, '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toContain('txnIndexRebuilt');
    expect(fs.statSync(file).mtimeMs).toBe(stamp);
  });
});
