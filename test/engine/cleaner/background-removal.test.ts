/**
 * Step 5 of Kafka's swap (LocalLog.replaceSegments, kafka-format.md §15.4) with no delete delay:
 * the cleaner removes a group's `.deleted` files in libuv's thread pool while it filters the next
 * group (unlinking a large segment makes the file system free and discard its blocks), yet every
 * step keeps its order — a group's removals come before the next group's `cleaned-written` — and
 * nothing `.deleted` is left when compaction resolves. unlinkAsync (io.ts) uses the thread pool
 * for the native layer only; any other layer's own unlink is called at once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/engine/log/log.js';
import { realIO, unlinkAsync, type FileIO } from '../../../src/engine/io.js';
import type { SwapStep } from '../../../src/engine/cleaner/swap.js';
import { makeTempDir, removeTempDirs, tempPartitionPath } from '../../helpers/fixtures.js';
import { buildLog, checkAllCrcs, modelCompaction, readAll, strip, type BatchSpec } from './helpers.js';

afterAll(removeTempDirs);

const T0 = 1_700_000_000_000;
const CONFIG = { segmentBytes: 1200 };

function batches(count: number): BatchSpec[] {
  return Array.from({ length: count }, (_, b) => ({
    records: Array.from({ length: 4 }, (_, r) => ({ key: `k${(b * 4 + r) % 7}`, value: `v${b * 4 + r}`, timestamp: T0 + b * 4 + r })),
  }));
}

describe('removal of replaced segments in the background', () => {
  it('removes a group\'s files while the next group is filtered, in step order, all gone at the end', async () => {
    const dir = tempPartitionPath('removal-0');
    const written = await buildLog(dir, batches(40), CONFIG);
    const steps: SwapStep[] = [];
    /** At each group's first removal: the `.cleaned` logs present (the next group's output, being written). */
    const cleanedAtFirstRemoval: string[][] = [];
    const log = Log.open(dir, { config: CONFIG });
    let report;
    try {
      report = await log.compact({
        nowMs: T0,
        deleteDelayMs: 0,
        onStep: (s) => {
          if (s.phase === 'deleted-removed' && steps[steps.length - 1]?.phase !== 'deleted-removed') {
            cleanedAtFirstRemoval.push(fs.readdirSync(dir).filter((n) => n.endsWith('.log.cleaned')));
          }
          steps.push(s);
        },
      });
    } finally {
      await log.close();
    }
    const swaps = steps.filter((s) => s.phase === 'final-durable').length;
    expect(swaps).toBeGreaterThan(2);
    // Every group's removals started while the following group's output was being written.
    expect(cleanedAtFirstRemoval.length).toBe(swaps);
    for (let g = 0; g < swaps - 1; g++) expect(cleanedAtFirstRemoval[g]!.length, `group ${g}`).toBe(1);
    // Steps in order: each group's removals after its final-durable, before the next group's cleaned-written.
    const order = steps.map((s) => s.phase).filter((p) => p !== 'cleaned-to-swap' && p !== 'old-to-deleted' && p !== 'swap-to-final');
    const collapsed = order.filter((p, i) => p !== order[i - 1]);
    const group = ['cleaned-written', 'swap-durable', 'deleted-durable', 'final-durable', 'deleted-removed'];
    expect(collapsed).toEqual([...Array.from({ length: swaps }, () => group).flat(), 'checkpointed']);
    // Each removed file was removed once, and nothing temporary is left.
    const removed = steps.filter((s) => s.phase === 'deleted-removed').map((s) => s.file);
    expect(new Set(removed).size).toBe(removed.length);
    expect(removed).toEqual(report.removedFiles.map((f) => `${f.file}.deleted`));
    expect(fs.readdirSync(dir).filter((n) => /\.(cleaned|swap|deleted)$/.test(n))).toEqual([]);
    checkAllCrcs(dir);
    expect(strip(readAll(dir))).toEqual(strip(modelCompaction(written, report.cleanedThrough)));
  });

  it('unlinkAsync: the native layer answers after the event loop turns; another layer\'s unlink runs at once', async () => {
    const root = makeTempDir();
    const a = path.join(root, 'a');
    fs.writeFileSync(a, 'x');
    let settled = false;
    const pending = unlinkAsync(realIO, a).then(() => (settled = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(settled).toBe(false); // a thread-pool call, not one made on this thread
    await pending;
    expect(fs.existsSync(a)).toBe(false);
    await unlinkAsync(realIO, a); // missing: not an error

    const b = path.join(root, 'b');
    fs.writeFileSync(b, 'x');
    const calls: string[] = [];
    const layer: FileIO = { ...realIO, unlink: (p) => (calls.push(p), realIO.unlink(p)) };
    const done = unlinkAsync(layer, b);
    expect(calls).toEqual([b]);
    expect(fs.existsSync(b)).toBe(false);
    await done;
    const failing: FileIO = { ...realIO, unlink: () => { throw new Error('EIO'); } };
    await expect(unlinkAsync(failing, b)).rejects.toThrow('EIO');
  });
});
