/**
 * The recovery bench functions (src/bench/recovery.ts) on a small log: they run end to end and
 * return consistent numbers (the baseline and both scenarios cover the same bytes; the 10-segment
 * log has 10 segments and its clean open scans none). Speed targets are judged by `bench`, never
 * by tests.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { benchRecovery } from '../../src/bench/recovery.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

describe('recovery bench', () => {
  it('measures full recovery, rebuild-index and clean open against the raw read + CRC baseline', async () => {
    const r = await benchRecovery({ scratchDir: path.join(makeTempDir(), 'scratch'), totalBytes: 6 * 1024 * 1024, cleanOpenBytes: 2 * 1024 * 1024 });
    expect(r.log.bytes).toBeGreaterThan(5 * 1024 * 1024);
    expect(r.baseline.bytes).toBe(r.log.bytes);
    expect(r.baseline.batches).toBe(r.log.batches);
    expect(r.fullRecovery.bytes).toBe(r.log.bytes);
    expect(r.fullRecovery.batches).toBe(r.log.batches);
    expect(r.rebuildIndex.bytes).toBe(r.log.bytes);
    for (const t of [r.baseline, r.fullRecovery, r.rebuildIndex]) expect(t.mbPerSec).toBeGreaterThan(0);
    expect(r.cleanOpen.segments).toBe(10);
    expect(r.cleanOpen.cleanOpenSeconds).toBeGreaterThan(0);
    expect(r.cleanOpen.ratio).toBe(r.cleanOpen.cleanOpenSeconds / r.cleanOpen.fullRecoverySeconds);
  });
});
