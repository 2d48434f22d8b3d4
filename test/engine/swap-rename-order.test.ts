/**
 * Regression (crash-states, compaction, LOGTOOL_CRASH_SEED=24301): a power loss during a swap kept
 * the rename `00…0.log.swap` → `00…0.log` but lost the earlier rename of an old segment inside
 * its range (`00…18.log` → `.deleted`), as no directory fsync ordered them. No `.log.swap` was
 * left, so the loader (Kafka's rules: only `.log.swap` files name the range to clear) kept the new
 * segment and the old one side by side, and both a read-only and a writable open read offsets
 * 20, 21, 18, … The swap now fsyncs the directory between its `.deleted` and final renames.
 *
 * The layout is built directly (two old segments, an active one, and the `.cleaned` output of a
 * compaction of the first two), swapSegments runs on the simulated power-loss file system, and
 * every crash state of it is opened read-only and, on a copy, writable: both must read the same
 * offsets, in increasing order, and keep every record of the active segment.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, LogtoolError, type LogConfig } from '../../src/api.js';
import { swapSegments } from '../../src/engine/cleaner/swap.js';
import { INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, segmentFileName } from '../../src/engine/segment/segment.js';
import { CrashFS, CrashSimulator, seededRandom, type CrashState } from '../helpers/crash-io.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

const config: Partial<LogConfig> = { flushMode: 'sync', segmentBytes: 300, indexIntervalBytes: 100, maxWaitMs: 0 };
const T0 = 1_700_000_000_000;

function offsets(log: Log): number[] {
  return [...log.read()].map((r) => r.offset);
}

describe('swap: renames to final names never reach the disk before the old files are .deleted', () => {
  it('every crash state of a swap: a read-only open and a writable open read the same offsets, in order', async () => {
    const root = makeTempDir('logtool-swap-order-');
    const dir = path.join(root, 'logs', 't-0');
    fs.mkdirSync(dir, { recursive: true }); // real directory for the writer's flock only
    const build = new CrashFS({ files: new Map(), dirs: new Set([path.dirname(dir)]) }, { record: false });
    const log = Log.open(dir, { io: build, config });
    for (let i = 0; i < 12; i++) await log.append([{ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}:${'x'.repeat(100)}`), timestamp: T0 + i }]);
    await log.close();
    const initial: CrashState = build.liveState();
    const bases = [...initial.files.keys()].filter((f) => f.endsWith(LOG_SUFFIX)).map((f) => Number(path.basename(f, LOG_SUFFIX))).sort((a, b) => a - b);
    expect(bases.length).toBeGreaterThanOrEqual(3);
    const [first, second] = bases as [number, number];
    const file = (base: number, suffix: string) => path.join(dir, segmentFileName(base, suffix));
    const all = offsets(Log.open(dir, { io: new CrashFS(initial, { record: false }), config, readOnly: true }));

    // The cleaned segment (base `first`) keeps only the second segment's records: its bytes, whose
    // batches carry their own offsets, with empty (sparse) indexes.
    initial.files.set(file(first, LOG_SUFFIX) + '.cleaned', Buffer.from(initial.files.get(file(second, LOG_SUFFIX))!));
    initial.files.set(file(first, INDEX_SUFFIX) + '.cleaned', Buffer.alloc(0));
    initial.files.set(file(first, TIME_INDEX_SUFFIX) + '.cleaned', Buffer.alloc(0));
    const oldFiles = (base: number) => [LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX].map((s) => file(base, s)).filter((f) => initial.files.has(f));

    const io = new CrashFS(initial);
    swapSegments({ io, dir, newBases: [first], old: [first, second].map((baseOffset) => ({ baseOffset, files: oldFiles(baseOffset) })), deleteNow: true });

    const sim = new CrashSimulator(io.journal, initial);
    const rng = seededRandom(1);
    const activeOffsets = all.filter((o) => o >= bases[2]!);
    let states = 0;
    for (let point = 1; point <= sim.length; point++) {
      sim.advanceTo(point);
      for (const state of sim.crashStates({ rng, samples: 20, maxExhaustiveOps: 10 })) {
        const names = [...state.files.keys()].map((f) => path.basename(f)).sort().join(' ');
        const where = `journal point ${point}/${sim.length}, files ${names}`;
        let readerSaw: number[] | undefined;
        try {
          const ro = Log.open(dir, { io: new CrashFS(state, { record: false }), config, readOnly: true, onWarning: () => {} });
          try {
            readerSaw = offsets(ro);
          } finally {
            await ro.close();
          }
        } catch (e) {
          if (!(e instanceof LogtoolError) || e.exitCode !== 3) throw e;
        }
        const w = Log.open(dir, { io: new CrashFS(state, { record: false }), config, onWarning: () => {} });
        const kept = offsets(w);
        await w.close();
        for (let i = 1; i < kept.length; i++) expect(kept[i]!, `${where}: the loader keeps ${kept.join()}`).toBeGreaterThan(kept[i - 1]!);
        if (readerSaw !== undefined) expect(readerSaw, `${where}: read-only view`).toEqual(kept);
        expect(kept.filter((o) => o >= bases[2]!), where).toEqual(activeOffsets);
        states++;
      }
    }
    expect(states).toBeGreaterThan(100);
  });
});
