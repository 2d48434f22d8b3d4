/**
 * Small keyed logs for compaction tests, written and read in-process with the engine (spawning the
 * CLI for each check is slow): `makeKeyedLog` appends single-record batches with keys k0..k{keys-1},
 * `readRecordLines` lists every record as `offset|key|value`.
 */
import path from 'node:path';
import { Log } from '../../src/engine/log/log.js';
import { makeTempDir } from './fixtures.js';

export const T0 = 1_700_000_000_000;

/** A log of `count` single-record batches with keys k0..k{keys-1}; returns its directory. */
export async function makeKeyedLog(name: string, count: number, keys: number, opts: { keyless?: number[]; segmentBytes?: number; ts?: (i: number) => number } = {}): Promise<string> {
  const dir = path.join(makeTempDir('logtool-compact-'), name);
  const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: opts.segmentBytes ?? 400 } });
  for (let i = 0; i < count; i++) {
    const key = opts.keyless?.includes(i) ? null : Buffer.from(`k${i % keys}`);
    await log.append([{ key, value: Buffer.from(`v${i}`), timestamp: opts.ts ? opts.ts(i) : T0 + i }]);
  }
  await log.close();
  return dir;
}

/** Every record as offset|key|value. */
export function readRecordLines(dir: string): string[] {
  const log = Log.open(dir, { readOnly: true });
  try {
    return [...log.read()].map((r) => `${r.offset}|${r.key?.toString() ?? null}|${r.value?.toString() ?? null}`);
  } finally {
    void log.close();
  }
}
