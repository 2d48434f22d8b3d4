/**
 * Walks over batch headers read only the headers (Kafka's FileChannelRecordBatch, which loads a
 * batch's body only when asked): the index checks of `verify` and the producer-state replay at
 * close read a few KiB per batch, not the whole `.log` again (issue 15, peak memory: each full
 * re-read allocated a fresh buffer per batch and left hundreds of MiB of garbage behind).
 * Bytes are counted through the file-I/O layer (a counting layer over the real one).
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { verifyLog } from '../../src/engine/recovery/log-verifier.js';
import { EntryScanner, entryBytes } from '../../src/engine/segment/file-records.js';
import { realIO, withIO } from '../../src/engine/io.js';
import { countingIO } from '../helpers/counting-io.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

const LOG0 = '00000000000000000000.log';
const BATCHES = 40;
const RECORDS_PER_BATCH = 64;
const VALUE_BYTES = 1000;

const value = (b: number, r: number): Buffer => Buffer.from(`value-${b}-${r}-`.padEnd(VALUE_BYTES, 'v'));

/** A partition of BATCHES batches of about 64 KiB each, closed cleanly. */
async function partition(name: string): Promise<{ dir: string; logBytes: number }> {
  const dir = path.join(makeTempDir('logtool-headers-'), name);
  const log = Log.open(dir, { config: { flushMode: 'async' }, rememberConfig: false });
  for (let b = 0; b < BATCHES; b++) await log.append(Array.from({ length: RECORDS_PER_BATCH }, (_, r) => ({ key: null, value: value(b, r) })));
  await log.close();
  return { dir, logBytes: realIO.stat(path.join(dir, LOG0))!.size };
}

describe('a headers-only scan', () => {
  it('yields every entry a full scan yields, each incomplete, reading a few KiB per entry; a body loads on demand', async () => {
    const { dir, logBytes } = await partition('headers-0');
    const file = path.join(dir, LOG0);
    const full = [...new EntryScanner({ io: realIO, path: file, verifyCrc: true }).entries()].map((e) => ({ position: e.position, size: e.size, baseOffset: e.baseOffset, lastOffset: e.lastOffset, crc: e.header!.crc }));
    const { io, logBytesRead } = countingIO();
    const scanner = new EntryScanner({ io, path: file, headersOnly: true });
    const headers = [];
    let lastBody: Buffer | undefined;
    for (const e of scanner.entries()) {
      headers.push(e);
      if (headers.length === BATCHES) {
        const { buf, pos } = entryBytes(e); // while the scan's file is open
        lastBody = buf.subarray(pos, pos + e.size);
      }
    }
    expect(scanner.end).toEqual({ kind: 'end' });
    expect(headers.map((e) => ({ position: e.position, size: e.size, baseOffset: e.baseOffset, lastOffset: e.lastOffset, crc: e.header!.crc }))).toEqual(full);
    expect(full).toHaveLength(BATCHES);
    expect(headers.every((e) => !e.complete)).toBe(true);
    expect(logBytesRead()).toBeLessThanOrEqual(BATCHES * 4096 + 4096 + full[BATCHES - 1]!.size); // headers, and the one body loaded
    expect(logBytesRead()).toBeLessThan(logBytes / 8);
    expect(lastBody?.length).toBe(full[BATCHES - 1]!.size);
    expect(lastBody!.includes(value(BATCHES - 1, RECORDS_PER_BATCH - 1))).toBe(true);
  });
});

describe('verify reads the .log once', () => {
  it('its index checks walk batch headers, not the whole file twice more', async () => {
    const { dir, logBytes } = await partition('verify-0');
    const { io, logBytesRead } = countingIO();
    const report = await withIO(io, async () => {
      const log = Log.open(dir, { readOnly: true });
      try {
        return verifyLog(log, { deep: true });
      } finally {
        await log.close();
      }
    });
    expect(report.problems).toEqual([]);
    expect(report.records).toBe(BATCHES * RECORDS_PER_BATCH);
    expect(report.indexEntries).toBeGreaterThan(BATCHES / 2);
    // Before: about 3x (the entries, then the offset index walk and the time index walk each reading every body).
    expect(logBytesRead()).toBeGreaterThanOrEqual(logBytes);
    expect(logBytesRead()).toBeLessThan(logBytes * 1.25);
  });
});

describe('closing a log after appends', () => {
  it('replays producer state from batch headers, not by reading every body again', async () => {
    const dir = path.join(makeTempDir('logtool-headers-'), 'close-0');
    const { io, logBytesRead } = countingIO();
    await withIO(io, async () => {
      const log = Log.open(dir, { config: { flushMode: 'async' }, rememberConfig: false });
      for (let b = 0; b < BATCHES; b++) await log.append(Array.from({ length: RECORDS_PER_BATCH }, (_, r) => ({ key: null, value: value(b, r) })));
      await log.close();
    });
    const logBytes = realIO.stat(path.join(dir, LOG0))!.size;
    expect(logBytes).toBeGreaterThan(BATCHES * RECORDS_PER_BATCH * VALUE_BYTES);
    // Before: the whole log was read at close (one body per batch).
    expect(logBytesRead()).toBeLessThan(logBytes / 8);
  });
});
