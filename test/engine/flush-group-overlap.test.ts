/**
 * Sync group commit with a burst of re-appends that outlasts an fdatasync (issue 15,
 * sync-group-256; flush/group-overlap.ts): the group closes halfway through the burst so its
 * fdatasync runs under the rest, and yet every append is acknowledged only after an fdatasync that
 * began once its bytes were in the file. Real files and real fdatasync; the I/O layer only watches.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, realIO, type FileIO } from '../../src/api.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

/** Busy-waits `ms` (a producer's own CPU work between its acknowledgement and its next append). */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('sync group commit: overlapping a group\'s fdatasync with the next group\'s CPU', () => {
  it('closes groups early when the re-appends outlast an fdatasync, and acknowledges nothing before a covering fdatasync', async () => {
    let log!: Log;
    // For each fdatasync: the committed offset when it began, and whether it has ended.
    const fsyncs: { coversBelow: number; ended: boolean }[] = [];
    let inFlight = 0;
    let startedDuringAnother = 0;
    const io: FileIO = {
      ...realIO,
      async datasyncAsync(fd) {
        const f = { coversBelow: log.positions().committed.offset, ended: false };
        fsyncs.push(f);
        if (inFlight++ > 0) startedDuringAnother++;
        try {
          await realIO.datasyncAsync(fd);
        } finally {
          inFlight--;
          f.ended = true;
        }
      },
    };
    log = Log.open(path.join(makeTempDir('logtool-overlap-'), 't-0'), { config: { flushMode: 'sync', syncBlockingFsyncMaxMs: 0 }, rememberConfig: false, io });
    const producers = 32;
    const rounds = 30;
    const uncovered: number[] = [];
    // Each producer works 2 ms between appends: a burst of 32 re-appends takes ~64 ms, longer than an fdatasync.
    const producer = async (): Promise<void> => {
      for (let r = 0; r < rounds; r++) {
        const res = await log.append([{ value: Buffer.alloc(100, 1) }]);
        expect(res.status).toBe('flushed');
        if (!fsyncs.some((f) => f.ended && f.coversBelow > res.lastOffset)) uncovered.push(res.lastOffset);
        spin(2);
      }
    };
    await Promise.all(Array.from({ length: producers }, producer));
    const s = log.flushStats;
    await log.close();
    expect(uncovered).toEqual([]);
    expect(s.groupedAppends).toBe(producers * rounds);
    // Without the overlap every group held all 32 appends (one per round); with it, most rounds are split in two.
    expect(s.groups).toBeGreaterThan(rounds * 1.5);
    // The fdatasyncs never run two at a time: the next group's starts after the previous one's ended.
    expect(startedDuringAnother).toBe(0);
    const again = Log.open(log.dir);
    expect([...again.read()].length).toBe(producers * rounds);
    await again.close();
  });
});
