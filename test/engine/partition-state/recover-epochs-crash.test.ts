/**
 * Recover's truncation of leader epochs and producer snapshots under simulated power loss (issue
 * 13; Kafka's LogLoader: leaderEpochCache.truncateFromEnd on every load, snapshots beyond the end
 * removed). A log of several segments with a corrupt batch in a middle segment, epochs starting
 * below, at and beyond the cut, and snapshots below and beyond it, is recovered on a recording
 * FileIO (test/helpers/crash-io.ts). For every crash point of that recovery and every crash state
 * there (exhaustive up to 6 unsynced operations, else 8 seeded samples; every point from the
 * first truncation on, ten before it), the next open must
 * leave: the log end at the cut, every record below it intact, no epoch starting beyond the log
 * end, no snapshot beyond it, and the entries and snapshots below the cut untouched.
 *
 * Before the loader followed the ends on every open, a crash after the log was cut but before the
 * checkpoint was rewritten left epochs and snapshots beyond the end for good: the next open found
 * nothing to cut and so never truncated them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, type LogConfig } from '../../../src/api.js';
import type { RecordInput } from '../../../src/engine/format/record-batch.js';
import { writeFileAtomic } from '../../../src/engine/checkpoint.js';
import { LEADER_EPOCH_CHECKPOINT, readLeaderEpochCheckpoint } from '../../../src/engine/partition-state/leader-epochs.js';
import { formatLeaderEpochCheckpoint } from '../../../src/engine/partition-state/log-ends.js';
import { listProducerSnapshots, writeProducerSnapshot } from '../../../src/engine/partition-state/snapshot-files.js';
import { CrashFS, CrashSimulator, seededRandom, type CrashState } from '../../helpers/crash-io.js';
import { makeTempDir, removeTempDirs } from '../../helpers/fixtures.js';

afterAll(removeTempDirs);

const SEED = Number(process.env.LOGTOOL_CRASH_SEED ?? 0x13e0);
const T0 = 1_700_000_000_000;
const config: Partial<LogConfig> = { flushMode: 'sync', segmentBytes: 700, indexIntervalBytes: 200, segmentIndexBytes: 240, maxWaitMs: 0 };
const RECORDS = 60;
const PER_BATCH = 3;
interface Case {
  name: string;
  /** The batch holding offset `cut` is corrupted: recovery cuts its segment there (and drops any later ones). */
  cut: number;
  /** Whether the cut is in the last segment (no later segment is dropped: only the .log truncation is durable before the checkpoint). */
  lastSegment: boolean;
  epochs: { epoch: number; startOffset: number }[];
  snapshots: number[];
}

const CASES: Case[] = [
  {
    name: 'cut in a middle segment, later segments dropped',
    cut: 30,
    lastSegment: false,
    epochs: [{ epoch: 0, startOffset: 0 }, { epoch: 2, startOffset: 12 }, { epoch: 4, startOffset: 27 }, { epoch: 5, startOffset: 30 }, { epoch: 7, startOffset: 45 }, { epoch: 9, startOffset: 57 }],
    snapshots: [12, 27, 45, 60],
  },
  {
    name: 'cut in the last segment',
    cut: 57,
    lastSegment: true,
    epochs: [{ epoch: 0, startOffset: 0 }, { epoch: 2, startOffset: 12 }, { epoch: 7, startOffset: 45 }, { epoch: 8, startOffset: 57 }, { epoch: 9, startOffset: 58 }, { epoch: 11, startOffset: 60 }],
    snapshots: [12, 45, 58, 60],
  },
];

const recordFor = (i: number): RecordInput & { timestamp: number } => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}:${'x'.repeat((i * 29) % 70)}`), timestamp: T0 + i });

/** The closed log, its epochs and snapshots, the batch at the cut corrupted, no marker and no recovery point: all durable. */
async function initialImage(logDir: string, c: Case): Promise<CrashState> {
  const dir = path.join(logDir, 't-0');
  const io = new CrashFS({ files: new Map(), dirs: new Set([logDir]) }, { record: false });
  const log = Log.open(dir, { io, config });
  for (let i = 0; i < RECORDS; i += PER_BATCH) await log.append(Array.from({ length: PER_BATCH }, (_, k) => recordFor(i + k)));
  const seg = log.segmentFor(c.cut)!;
  const pos = seg.translateOffset(c.cut)!.position;
  const segments = log.segments.length;
  await log.close();
  expect(segments).toBeGreaterThan(3);
  expect(log.segments.indexOf(seg) === segments - 1).toBe(c.lastSegment);
  writeFileAtomic(io, path.join(dir, LEADER_EPOCH_CHECKPOINT), formatLeaderEpochCheckpoint(c.epochs));
  for (const s of listProducerSnapshots(io, dir)) io.unlink(s.file); // the log's own (its rolls and close): the case plants its own
  for (const o of c.snapshots) writeProducerSnapshot(io, dir, o, []);
  const state = io.liveState();
  const logFile = seg.logPath;
  const bytes = Buffer.from(state.files.get(logFile)!);
  bytes[pos + 70] ^= 0xff; // inside the CRC-covered part of the batch at the cut
  state.files.set(logFile, bytes);
  for (const f of [...state.files.keys()]) if (path.dirname(f) === logDir) state.files.delete(f); // no marker, no checkpoints
  return state;
}

async function checkState(c: Case, state: CrashState, dir: string, where: string): Promise<void> {
  const io = new CrashFS(state, { record: false });
  const log = Log.open(dir, { io, config, discardLost: true, onWarning: () => {} });
  try {
    if (log.nextOffset !== c.cut) throw new Error(`${where}: log end offset ${log.nextOffset}, not the cut ${c.cut}`);
    let next = 0;
    for (const r of log.read()) {
      const want = recordFor(next);
      if (r.offset !== next || !r.value?.equals(want.value!) || !r.key?.equals(want.key!)) throw new Error(`${where}: offset ${r.offset} is not record ${next} as written`);
      next++;
    }
    if (next !== c.cut) throw new Error(`${where}: ${next} records read below the cut ${c.cut}`);
    const epochs = readLeaderEpochCheckpoint(io, path.join(dir, LEADER_EPOCH_CHECKPOINT));
    const beyond = epochs.filter((e) => e.startOffset > log.nextOffset);
    if (beyond.length > 0) throw new Error(`${where}: epochs beyond the log end ${log.nextOffset}: ${JSON.stringify(beyond)}`);
    const kept = c.epochs.filter((e) => e.startOffset < c.cut);
    if (JSON.stringify(epochs.slice(0, kept.length)) !== JSON.stringify(kept)) throw new Error(`${where}: epochs below the cut changed: ${JSON.stringify(epochs)}`);
    const snaps = listProducerSnapshots(io, dir).map((s) => s.offset);
    if (snaps.some((o) => o > log.nextOffset)) throw new Error(`${where}: snapshots beyond the log end ${log.nextOffset}: ${snaps.join(', ')}`);
    if (JSON.stringify(snaps) !== JSON.stringify(c.snapshots.filter((o) => o <= c.cut))) throw new Error(`${where}: snapshots below the cut changed: ${snaps.join(', ')}`);
  } finally {
    await log.close();
  }
}

describe.each(CASES.map((c) => [c.name, c] as const))('recover truncating with leader epochs and producer snapshots (%s), crash at every point', (_name, c) => {
  it('every crash state: the next open leaves epochs and snapshots within the log end, records below the cut intact', async () => {
    const logDir = path.join(makeTempDir('logtool-epoch-crash-'), 'logs');
    const dir = path.join(logDir, 't-0');
    fs.mkdirSync(dir, { recursive: true }); // real directory for the writer's flock only
    const initial = await initialImage(logDir, c);
    const io = new CrashFS(initial);
    const log = Log.open(dir, { io, config, discardLost: true, onWarning: () => {} });
    const report = log.loadReport;
    await log.close();
    expect(report.logEndOffset).toBe(c.cut);
    expect(report.partitionState?.leaderEpochs?.after).toEqual(c.epochs.filter((e) => e.startOffset < c.cut));
    expect(report.partitionState?.snapshotsRemoved.map((f) => Number(path.basename(f, '.snapshot')))).toEqual(c.snapshots.filter((o) => o > c.cut));
    const sim = new CrashSimulator(io.journal, initial);
    const rng = seededRandom(SEED);
    let states = 0;
    // Every point from the first truncation of the .log on (the window this test is about), and
    // ten spread over the passes before it.
    const firstCut = io.journal.findIndex((ev) => ev.e === 'trunc');
    expect(firstCut).toBeGreaterThan(0);
    const points = [...new Set([...Array.from({ length: 10 }, (_, i) => Math.floor((i * firstCut) / 10)), ...Array.from({ length: io.journal.length - firstCut + 1 }, (_, i) => firstCut + i)])];
    for (const point of points) {
      sim.advanceTo(point);
      let j = 0;
      for (const state of sim.crashStates({ rng, samples: 8, maxExhaustiveOps: 6 })) {
        await checkState(c, state, dir, `journal point ${point}/${io.journal.length}, state ${j++} (LOGTOOL_CRASH_SEED=${SEED})`);
        states++;
      }
    }
    expect(states).toBeGreaterThan(points.length);
    console.log(`recover with epochs and snapshots, ${c.name}: ${points.length} crash points of ${io.journal.length}, ${states} crash states checked`);
  }, 600_000);
});
