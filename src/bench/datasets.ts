/**
 * Data sets shared by the read scenarios and their baselines: built once per bench run (by the
 * first scenario that asks, untimed) in the run's data directory, described by a small JSON file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Log } from '../engine/log/log.js';
import type { BenchContext } from './types.js';

export interface Dataset {
  /** Partition directory. */
  dir: string;
  records: number;
  valueBytes: number;
  batchRecords: number;
  /** `.log` files in offset order. */
  logFiles: string[];
  /** Total bytes of the `.log` files. */
  fileBytes: number;
  /** Every batch: segment file index, byte position, size, base offset. */
  batches: { file: number; position: number; size: number; baseOffset: number }[];
}

/** Deterministic payload of a given size (not all one byte, so nothing compresses by accident). */
export function payload(bytes: number, seed = 1): Buffer {
  const b = Buffer.allocUnsafe(bytes);
  let x = seed * 2654435761;
  for (let i = 0; i < bytes; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = 0x21 + ((x >>> 16) % 94);
  }
  return b;
}

/**
 * The data set of `records` records of `valueBytes`-byte values (null keys) in batches of
 * `batchRecords`, written through the engine in async mode and closed cleanly.
 */
export async function dataset(ctx: BenchContext, records = ctx.records, valueBytes = 100, batchRecords = 500): Promise<Dataset> {
  const name = `records${valueBytes}b-0`;
  const dir = path.join(ctx.dataDir, name);
  const metaFile = path.join(ctx.dataDir, `${name}.json`);
  if (fs.existsSync(metaFile)) return JSON.parse(fs.readFileSync(metaFile, 'utf8')) as Dataset;
  fs.rmSync(dir, { recursive: true, force: true });
  const log = Log.open(dir, { config: { flushMode: 'async' }, rememberConfig: false });
  const value = payload(valueBytes);
  const batch = Array.from({ length: batchRecords }, () => ({ key: null, value }));
  const positions: { segment: number; position: number; size: number; baseOffset: number }[] = [];
  try {
    for (let written = 0; written < records; ) {
      const n = Math.min(batchRecords, records - written);
      const before = log.positions().committed;
      const r = await log.append(n === batchRecords ? batch : batch.slice(0, n));
      const after = log.positions().committed;
      // A roll puts the batch at the start of the new segment.
      const position = after.segment === before.segment ? before.position : 0;
      positions.push({ segment: after.segment, position, size: after.position - position, baseOffset: r.baseOffset });
      written += n;
    }
  } finally {
    await log.close();
  }
  const logFiles = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .sort()
    .map((f) => path.join(dir, f));
  const bases = logFiles.map((f) => Number(path.basename(f, '.log')));
  const ds: Dataset = {
    dir,
    records,
    valueBytes,
    batchRecords,
    logFiles,
    fileBytes: logFiles.reduce((n, f) => n + fs.statSync(f).size, 0),
    batches: positions.map((p) => ({ file: bases.indexOf(p.segment), position: p.position, size: p.size, baseOffset: p.baseOffset })),
  };
  fs.writeFileSync(metaFile, JSON.stringify(ds));
  return ds;
}

/** A small seeded PRNG (xorshift32) so lookups are the same in every run. */
export function prng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}
