/**
 * Work the cleaner does once per run (Kafka's Cleaner, kafka-format.md §15): each batch's
 * CRC-32C is verified once — the recopy does not recompute what the key check and the map build
 * verified — yet a corrupt batch, in the already-clean part or in the dirty part, still stops
 * compaction before anything changes, naming the file and the batch's byte position; and each
 * dirty record's key is hashed once — the recopy reads the map's marks instead of hashing again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/engine/log/log.js';
import { LogtoolError } from '../../../src/engine/errors.js';
import { removeTempDirs, tempPartitionPath } from '../../helpers/fixtures.js';
import { buildLog, fingerprint, modelCompaction, rawBatches, readAll, strip, type BatchSpec, type Rec } from './helpers.js';

afterAll(removeTempDirs);

const T0 = 1_700_000_000_000;
const CONFIG = { segmentBytes: 1200 };

const segmentLogs = (dir: string) => fs.readdirSync(dir).filter((n) => /^\d{20}\.log$/.test(n)).sort().map((n) => path.join(dir, n));

function batches(count: number, from: number): BatchSpec[] {
  return Array.from({ length: count }, (_, b) => ({
    records: Array.from({ length: 4 }, (_, r) => ({ key: `k${(b * 4 + r) % 7}`, value: `v${from + b * 4 + r}`, timestamp: T0 + from + b * 4 + r })),
  }));
}

async function compact(dir: string, opts: Parameters<Log['compact']>[0] = {}) {
  const log = Log.open(dir, { config: CONFIG });
  try {
    return await log.compact({ deleteDelayMs: 0, nowMs: T0, ...opts });
  } finally {
    await log.close();
  }
}

/**
 * A log with an already-clean part (compacted once) and a dirty part after it; returns the
 * records written, the clean part's segment files and the dirty part's (the active one excluded).
 */
async function cleanAndDirty(): Promise<{ dir: string; written: Rec[]; clean: string[]; dirty: string[] }> {
  const dir = tempPartitionPath('verify-0');
  const written = await buildLog(dir, batches(30, 0), CONFIG);
  await compact(dir);
  const afterFirst = segmentLogs(dir);
  written.push(...(await buildLog(dir, batches(30, 120), CONFIG)));
  const all = segmentLogs(dir);
  const clean = afterFirst.slice(0, -1);
  const dirty = all.filter((f) => !clean.includes(f)).slice(0, -1);
  expect(clean.length).toBeGreaterThan(0);
  expect(dirty.length).toBeGreaterThan(1);
  return { dir, written, clean, dirty };
}

describe('compaction work done once per run', () => {
  it('verifies every batch of the range exactly once, though the recopy reads the dirty part again', async () => {
    const { dir, written } = await cleanAndDirty();
    const r = await compact(dir);
    expect(r.passes).toBe(1);
    expect(r.firstDirtyOffset).toBeGreaterThan(0);
    // The map build read the dirty part and the recopy read everything again ...
    const dirtyBytes = r.bytesScanned - r.bytesBefore;
    expect(dirtyBytes).toBeGreaterThan(0);
    // ... yet each batch's CRC was computed once: the key check (clean part) and the map build
    // (dirty part) verified them, the recopy did not again.
    expect(r.bytesCrcChecked).toBe(r.bytesBefore);
    expect(strip(readAll(dir))).toEqual(strip(modelCompaction(written, r.cleanedThrough)));
  });

  it('hashes each dirty key once (the map build) and each clean key once (the recopy)', async () => {
    const { dir, written } = await cleanAndDirty();
    const before = readAll(dir);
    const r = await compact(dir);
    expect(r.offsetMap.markBytes).toBeGreaterThan(0);
    const cleanPart = before.filter((rec) => rec.offset < r.firstDirtyOffset).length;
    const dirtyPart = written.filter((rec) => rec.offset >= r.firstDirtyOffset && rec.offset < r.firstUncleanableOffset).length;
    expect(cleanPart).toBeGreaterThan(0);
    expect(dirtyPart).toBeGreaterThan(0);
    expect(r.offsetMap.keysHashed).toBe(cleanPart + dirtyPart);
    expect(strip(readAll(dir))).toEqual(strip(modelCompaction(written, r.cleanedThrough)));
  });

  for (const part of ['clean', 'dirty'] as const) {
    it(`stops at a corrupt batch in the ${part} part before changing anything, naming its file and position`, async () => {
      const setup = await cleanAndDirty();
      const file = setup[part].filter((f) => fs.statSync(f).size > 0)[part === 'clean' ? 0 : 1]!;
      const target = rawBatches(setup.dir).filter((b) => b.file === file).at(-1)!;
      const fd = fs.openSync(file, 'r+');
      try {
        // One byte of the first record's body: the header stays readable, only the CRC disagrees.
        const at = target.position + 61 + 3;
        const b = Buffer.alloc(1);
        fs.readSync(fd, b, 0, 1, at);
        b[0] ^= 0x5a;
        fs.writeSync(fd, b, 0, 1, at);
      } finally {
        fs.closeSync(fd);
      }
      const before = fingerprint(path.dirname(setup.dir));
      const err = await compact(setup.dir).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LogtoolError);
      expect(err).toMatchObject({ kind: 'corrupt', file, position: target.position });
      expect((err as Error).message).toMatch(/CRC-32C mismatch in batch at offset \d+; compaction stopped before changing anything/);
      expect(fingerprint(path.dirname(setup.dir))).toEqual(before);
    });
  }
});
