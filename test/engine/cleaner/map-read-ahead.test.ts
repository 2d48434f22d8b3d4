/**
 * The offset map build's read-ahead worker (engine/cleaner/map-read-ahead.ts, map-worker.ts),
 * run from dist/ (the worker entry is compiled JavaScript): compaction with the worker writes the
 * same files and reports the same work as without it — transactions, several passes, a map
 * build that ends early — and a corrupt batch or record stops it with the same error, file and
 * byte position, with nothing changed; a failed run terminates the worker, an idle one does not
 * keep a process alive.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distDir, engineEntry, ensureBuilt } from '../../helpers/build.js';
import { makeTempDir, removeTempDirs } from '../../helpers/fixtures.js';

type Api = typeof import('../../../src/api.js');
type ReadAhead = typeof import('../../../src/engine/cleaner/map-read-ahead.js');
type Batches = typeof import('../../../src/engine/format/record-batch.js');
let api: Api;
let ra: ReadAhead;
let rb: Batches;

const T0 = 1_700_000_000_000;
const CONFIG = { segmentBytes: 64 * 1024, flushMode: 'async' as const, cleanupPolicy: 'compact' as const };

beforeAll(async () => {
  ensureBuilt();
  api = (await import(pathToFileURL(engineEntry).href)) as Api;
  ra = (await import(pathToFileURL(path.join(distDir, 'engine/cleaner/map-read-ahead.js')).href)) as ReadAhead;
  rb = (await import(pathToFileURL(path.join(distDir, 'engine/format/record-batch.js')).href)) as Batches;
}, 240_000);
afterAll(async () => {
  await ra?.closeMapReadAhead();
  removeTempDirs();
});

/** A keyed log over several segments, with an aborted and a committed transaction in the middle. */
async function buildLog(dir: string, batches = 120, keylessAt = -1): Promise<void> {
  const log = api.Log.open(dir, { config: CONFIG });
  const control = (type: number) => [{ key: Buffer.from([0, 0, 0, type]), value: Buffer.from([0, 0, 0, 0, 0, 5]), timestamp: T0 }];
  try {
    for (let b = 0; b < batches; b++) {
      if (b === 40 || b === 70) {
        const pid = b === 40 ? 7 : 8;
        await log.append([{ key: Buffer.from(`txn-${b}`), value: Buffer.from('in a transaction'), timestamp: T0 + b }], { producerId: pid, producerEpoch: 0, baseSequence: 0, transactional: true });
        await log.append(control(b === 40 ? 0 : 1), { producerId: pid, producerEpoch: 0, baseSequence: -1, transactional: true, control: true });
      }
      await log.append(
        Array.from({ length: 20 }, (_, r) => ({ key: b === keylessAt && r === 3 ? null : Buffer.from(`key-${(b * 20 + r) % 97}`), value: Buffer.alloc(100, b + r), timestamp: T0 + b * 20 + r })),
      );
    }
  } finally {
    await log.close();
  }
}

function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir).sort()) {
    if (f.endsWith('.lock') || fs.statSync(path.join(dir, f)).isDirectory()) continue;
    out[f] = crypto.createHash('sha256').update(fs.readFileSync(path.join(dir, f))).digest('hex');
  }
  return out;
}

/** A copy of the log directory with its parent's files (recovery points, clean-shutdown marker: opening it recovers nothing). */
function copyLog(dir: string): string {
  const to = makeTempDir('logtool-readahead-');
  fs.cpSync(path.dirname(dir), to, { recursive: true });
  return path.join(to, path.basename(dir));
}

interface Outcome {
  report?: { passes: number };
  error?: { name: string; kind?: string; message: string; file?: string; position?: number };
}

type CompactOptions = NonNullable<Parameters<ReturnType<Api['Log']['open']>['compact']>[0]>;

async function compact(dir: string, opts: CompactOptions): Promise<{ report?: unknown; error?: unknown }> {
  const log = api.Log.open(dir, { config: CONFIG });
  try {
    const r = await log.compact({ deleteDelayMs: 0, nowMs: T0 + 1e9, ...opts });
    const { durationMs: _d, memory: _m, ...report } = r;
    return { report };
  } catch (e) {
    const err = e as { name: string; kind?: string; message: string; file?: string; position?: number };
    return { error: { name: err.name, kind: err.kind, message: err.message, file: err.file, position: err.position } };
  } finally {
    await log.close();
  }
}

/** Starts the worker (a first compaction) and waits until it has warmed up. */
async function workerReady(): Promise<void> {
  if (ra.MapReadAhead.state !== 'ready') {
    const dir = path.join(makeTempDir('logtool-readahead-'), 'warm-0');
    await buildLog(dir, 10);
    await compact(dir, { readAheadMinBytes: 0 });
  }
  for (let i = 0; i < 300 && ra.MapReadAhead.state !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
  expect(ra.MapReadAhead.state).toBe('ready');
}

/** Compacts copies of `dir` with the worker and without; both outcomes, the files after, and the batches the worker delivered. */
async function bothWays(dir: string, opts: CompactOptions = {}) {
  await workerReady();
  // Separate parents: the cleaner's checkpoint file is the log directory's parent's (as Kafka's).
  const withDir = copyLog(dir);
  const withoutDir = copyLog(dir);
  const delivered = ra.readAheadStats.batchesDelivered;
  // Outcomes with the directory's name left out (the two copies' names differ).
  const outcome = async (d: string, o: CompactOptions) => JSON.parse(JSON.stringify(await compact(d, o)).split(d).join('<dir>')) as Outcome;
  const withWorker = await outcome(withDir, { ...opts, readAheadMinBytes: 0 });
  const viaWorker = ra.readAheadStats.batchesDelivered - delivered;
  const without = await outcome(withoutDir, { ...opts, readAheadMinBytes: Infinity });
  expect(ra.readAheadStats.batchesDelivered - delivered).toBe(viaWorker);
  return { withWorker, without, viaWorker, filesWith: fingerprint(withDir), filesWithout: fingerprint(withoutDir) };
}

/** Batch positions of a segment file. */
function batchPositions(file: string): number[] {
  const buf = fs.readFileSync(file);
  const out: number[] = [];
  for (let p = 0; p + 12 <= buf.length; p += buf.readInt32BE(p + 8) + 12) out.push(p);
  return out;
}

const segmentFiles = (dir: string) => fs.readdirSync(dir).filter((f) => /^\d{20}\.log$/.test(f)).sort().map((f) => path.join(dir, f));

describe('offset map build on a worker thread', () => {
  it('writes the same files and reports the same work as the map build on one thread', async () => {
    const dir = path.join(makeTempDir('logtool-readahead-'), 'log-0');
    await buildLog(dir);
    expect(segmentFiles(dir).length).toBeGreaterThan(3);
    const r = await bothWays(dir);
    expect(r.viaWorker).toBeGreaterThan(100);
    expect(r.withWorker.error).toBeUndefined();
    expect(r.withWorker.report).toEqual(r.without.report);
    expect(r.filesWith).toEqual(r.filesWithout);
  });

  it('gives every pass of a map too small for the range the same keys (several passes, each map build ending early)', async () => {
    const dir = path.join(makeTempDir('logtool-readahead-'), 'log-0');
    await buildLog(dir);
    const r = await bothWays(dir, { offsetMapBytes: 24 * 80 });
    expect(r.without.report!.passes).toBeGreaterThan(2);
    expect(r.viaWorker).toBeGreaterThan(0);
    expect(r.withWorker.report).toEqual(r.without.report);
    expect(r.filesWith).toEqual(r.filesWithout);
  });

  it('stops at a batch with a bad CRC with the same error, file and position, changing nothing; the worker is terminated', async () => {
    const dir = path.join(makeTempDir('logtool-readahead-'), 'log-0');
    await buildLog(dir);
    const seg = segmentFiles(dir)[2]!;
    const at = batchPositions(seg)[5]!;
    const fd = fs.openSync(seg, 'r+');
    fs.writeSync(fd, Buffer.from([0xee]), 0, 1, at + 100); // a value byte: the CRC no longer matches
    fs.closeSync(fd);
    const before = fingerprint(dir);
    const r = await bothWays(dir);
    expect(r.viaWorker).toBeGreaterThan(0);
    expect(ra.MapReadAhead.state).toBe('none');
    expect(r.withWorker.error).toMatchObject({ kind: 'corrupt', file: `<dir>/${path.basename(seg)}`, position: at });
    expect(r.withWorker.error!.message).toContain('CRC-32C mismatch');
    expect(r.withWorker.error).toEqual(r.without.error);
    expect(r.filesWith).toEqual(before);
    expect(r.filesWithout).toEqual(before);
  });

  it('stops at a record that runs past its batch (CRC intact) with the same error', async () => {
    const dir = path.join(makeTempDir('logtool-readahead-'), 'log-0');
    await buildLog(dir);
    const seg = segmentFiles(dir)[1]!;
    const at = batchPositions(seg)[3]!;
    const buf = fs.readFileSync(seg);
    const size = buf.readInt32BE(at + 8) + 12;
    buf[at + 61] = 0x7e; // the first record's length varint: 63 bytes, not its real length
    buf.writeUInt32BE(rb.computeBatchCrc(buf, at, size), at + 17);
    fs.writeFileSync(seg, buf);
    const r = await bothWays(dir);
    expect(r.viaWorker).toBeGreaterThan(0);
    expect(r.withWorker.error).toMatchObject({ kind: 'corrupt', file: `<dir>/${path.basename(seg)}`, position: at });
    expect(r.withWorker.error!.message).toContain('batch at offset');
    expect(r.withWorker.error).toEqual(r.without.error);
    expect(r.filesWith).toEqual(r.filesWithout);
  });

  it('refuses records without a key with the same error', async () => {
    const dir = path.join(makeTempDir('logtool-readahead-'), 'log-0');
    await buildLog(dir, 120, 90);
    const r = await bothWays(dir);
    expect(r.viaWorker).toBeGreaterThan(0);
    expect(r.withWorker.error).toMatchObject({ kind: 'unsupported' });
    expect(r.withWorker.error!.message).toContain('without a key');
    expect(r.withWorker.error).toEqual(r.without.error);
    expect(r.filesWith).toEqual(r.filesWithout);
  });

  it('leaves no worker keeping a process alive after a compaction', () => {
    const dir = path.join(makeTempDir('logtool-readahead-'), 'log-0');
    const script = `
      const api = await import(${JSON.stringify(pathToFileURL(engineEntry).href)});
      const ra = await import(${JSON.stringify(pathToFileURL(path.join(distDir, 'engine/cleaner/map-read-ahead.js')).href)});
      const dir = ${JSON.stringify(dir)};
      for (let i = 0; i < 2; i++) {
        const log = api.Log.open(dir, { config: { segmentBytes: 65536, flushMode: 'async' } });
        for (let b = 0; b < 60; b++) await log.append(Array.from({ length: 20 }, (_, r) => ({ key: Buffer.from('k' + ((b + r) % 13)), value: Buffer.alloc(100, r) })));
        log.roll();
        await log.compact({ readAheadMinBytes: 0, deleteDelayMs: 0 });
        await log.close();
        while (ra.MapReadAhead.state === 'starting') await new Promise((r) => setTimeout(r, 20));
      }
      console.log(ra.MapReadAhead.state, ra.readAheadStats.batchesDelivered);
    `;
    const t0 = performance.now();
    // Started with `node -e`, whose --input-type the worker must not inherit.
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    // The worker was started and used, and the process ended on its own well before the idle timeout.
    expect(out.trim()).toMatch(/^ready [1-9]/);
    expect(performance.now() - t0).toBeLessThan(ra.MAP_WORKER_IDLE_MS);
  });
});
