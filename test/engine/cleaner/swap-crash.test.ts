/**
 * Crash safety of the `.cleaned` → `.swap` → replace protocol: a compaction is stopped right after
 * each of its steps in turn (every rename, every directory fsync, the checkpoint), the process's
 * state is dropped (Log.abandon: no flush, no close), and the directory is reopened with Log.open,
 * whose loader must complete or undo the interrupted swap. Every time the reopened log must hold
 * no temporary files, only valid batches, offsets in order, every record of the fully compacted
 * log and nothing that was not in the original; compacting it again must give exactly the fully
 * compacted log. (Real SIGKILLs of a compacting process are in test/commands/compact.test.ts.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/engine/log/log.js';
import type { SwapStep } from '../../../src/engine/cleaner/swap.js';
import { makeTempDir, removeTempDirs } from '../../helpers/fixtures.js';
import { buildLog, checkAllCrcs, compactStoppingAt as compactAt, copyDir, readAll, strip, type BatchSpec } from './helpers.js';

afterAll(removeTempDirs);

const NOW = 1_700_000_000_000;
const CONFIG = { segmentBytes: 500, deleteRetentionMs: 86_400_000 };

const compactStoppingAt = (dir: string, stopAt: number) => compactAt(dir, stopAt, CONFIG, NOW);

describe('crash at every step of the swap protocol', () => {
  it('the loader completes or undoes it, and the log is always old-or-new, never broken', async () => {
    const root = makeTempDir();
    const template = path.join(root, 'template', 'crash-0');
    const specs: BatchSpec[] = [];
    for (let i = 0; i < 16; i++) specs.push({ records: [{ key: `k${i % 5}`, value: `v${i}`, timestamp: NOW + i }, { key: `j${i % 3}`, value: i % 11 === 0 ? null : `w${i}`, timestamp: NOW + i }] });
    await buildLog(template, specs, CONFIG);
    const original = strip(readAll(template));

    // A full run: the steps, and the compacted result.
    const full = path.join(root, 'full', 'crash-0');
    copyDir(template, full);
    const steps = await compactStoppingAt(full, -1);
    const compacted = strip(readAll(full));
    expect(compacted.length).toBeLessThan(original.length);
    const phases = new Set(steps.map((s) => s.phase));
    for (const p of ['cleaned-written', 'cleaned-to-swap', 'swap-durable', 'old-to-deleted', 'swap-to-final', 'final-durable', 'deleted-removed', 'checkpointed']) expect(phases.has(p as SwapStep['phase'])).toBe(true);
    // Several groups: several swaps.
    expect(steps.filter((s) => s.phase === 'swap-durable').length).toBeGreaterThan(1);

    const originalSet = new Set(original);
    for (let k = 0; k < steps.length; k++) {
      const dir = path.join(root, `k${k}`, 'crash-0');
      copyDir(template, dir);
      const seen = await compactStoppingAt(dir, k);
      expect(seen.length).toBe(k + 1);
      // Reopen as a writer: the loader resolves what the crash left.
      const log = Log.open(dir, { config: CONFIG });
      const report = log.loadReport;
      await log.close();
      const left = fs.readdirSync(dir).filter((n) => /\.(cleaned|swap|deleted)$/.test(n));
      expect(left, `step ${k} (${steps[k]!.phase})`).toEqual([]);
      checkAllCrcs(dir);
      const after = strip(readAll(dir));
      const offsets = after.map((r) => Number(r.split('|')[0]));
      for (let i = 1; i < offsets.length; i++) expect(offsets[i]!).toBeGreaterThan(offsets[i - 1]!);
      for (const r of after) expect(originalSet.has(r), `step ${k}: ${r} was never written`).toBe(true);
      const afterSet = new Set(after);
      for (const r of compacted) expect(afterSet.has(r), `step ${k} (${steps[k]!.phase}): ${r} lost`).toBe(true);
      // A swap that had reached .swap for every file is completed by the loader, one that had not is undone.
      if (steps[k]!.phase === 'swap-durable' || steps[k]!.phase === 'old-to-deleted') expect(report.swapsCompleted.length).toBeGreaterThan(0);
      // Compacting again finishes the job: exactly the fully compacted log.
      await compactStoppingAt(dir, -1);
      expect(strip(readAll(dir)), `step ${k}`).toEqual(compacted);
    }
  });
});
