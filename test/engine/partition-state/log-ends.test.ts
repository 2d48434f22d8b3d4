/**
 * Leader epochs and producer snapshots follow the log's ends (issue 13; Kafka's
 * LeaderEpochFileCache.truncateFromEnd / truncateFromStart, ProducerStateManager.truncateAndReload
 * / deleteSnapshotsBefore). The rules on Kafka's own examples (LeaderEpochFileCacheTest), then
 * the CLI's `recover`, `delete-records` and `retention` in child processes on copies of a real
 * KRaft broker partition with 33 epochs and three snapshots:
 * kraft-confluentgo-mashakosher-2025/__consumer_offsets-15 (segments 0 and 1124, log end 1406,
 * snapshots 1124, 1333, 1406).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { truncateEpochsFromEnd, truncateEpochsFromStart } from '../../../src/engine/partition-state/log-ends.js';
import type { LeaderEpochEntry } from '../../../src/engine/partition-state/leader-epochs.js';
import { copyPartitionWithLogDir, fileStamps, fixturePath, removeTempDirs, requireFixtures, segmentCases } from '../../helpers/fixtures.js';
import { ensureBuilt } from '../../helpers/build.js';
import { cli } from '../../helpers/cli.js';

requireFixtures(import.meta.url);
afterAll(removeTempDirs);
beforeAll(ensureBuilt, 120_000);

const E = (epoch: number, startOffset: number): LeaderEpochEntry => ({ epoch, startOffset });

describe("Kafka's truncation rules", () => {
  const entries = [E(2, 6), E(3, 8), E(4, 11)];
  it('truncateFromEnd removes entries starting at or above the end (LeaderEpochFileCacheTest)', () => {
    expect(truncateEpochsFromEnd(entries, 9)).toEqual([E(2, 6), E(3, 8)]);
    expect(truncateEpochsFromEnd(entries, 8)).toEqual([E(2, 6)]);
    expect(truncateEpochsFromEnd(entries, 12)).toEqual(entries);
    expect(truncateEpochsFromEnd(entries, 6)).toEqual([]);
    expect(truncateEpochsFromEnd(entries, -1)).toEqual(entries); // Kafka: UNDEFINED_EPOCH_OFFSET changes nothing
  });
  it('truncateFromStart keeps the epoch in effect at the new start, moved up to it', () => {
    expect(truncateEpochsFromStart(entries, 9)).toEqual([E(3, 9), E(4, 11)]);
    expect(truncateEpochsFromStart(entries, 8)).toEqual([E(3, 8), E(4, 11)]);
    expect(truncateEpochsFromStart(entries, 5)).toEqual(entries);
    expect(truncateEpochsFromStart(entries, 11)).toEqual([E(4, 11)]);
    expect(truncateEpochsFromStart(entries, 100)).toEqual([E(4, 100)]);
  });
});

const CASE = 'segments/kraft-confluentgo-mashakosher-2025';
const PARTITION = '__consumer_offsets-15';
const SNAP = (o: number) => `${String(o).padStart(20, '0')}.snapshot`;
const epochFile = (dir: string) => fs.readFileSync(path.join(dir, 'leader-epoch-checkpoint'), 'utf8');
const snapshots = (dir: string) => fs.readdirSync(dir).filter((f) => f.endsWith('.snapshot')).sort();
const checkpointText = (rows: [number, number][]) => `0\n${rows.length}\n${rows.map(([e, o]) => `${e} ${o}\n`).join('')}`;

function copy(): string {
  const c = segmentCases().find((x) => x.case === CASE)!;
  const dir = copyPartitionWithLogDir(c, PARTITION);
  for (const f of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, f), 0o644);
  for (const f of fs.readdirSync(path.dirname(dir))) if (fs.statSync(path.join(path.dirname(dir), f)).isFile()) fs.chmodSync(path.join(path.dirname(dir), f), 0o644);
  return dir;
}

const ORIGINAL_TAIL: [number, number][] = [
  [64, 1037], [66, 1113], [68, 1124], [70, 1196], [72, 1197], [74, 1326], [76, 1332], [78, 1333],
];

describe('commands that move the log ends', () => {
  it('the fixture is what these tests assume', () => {
    const dir = copy();
    expect(epochFile(dir).split('\n').slice(0, 2)).toEqual(['0', '33']);
    expect(epochFile(dir).endsWith(ORIGINAL_TAIL.map(([e, o]) => `${e} ${o}\n`).join(''))).toBe(true);
    expect(snapshots(dir)).toEqual([SNAP(1124), SNAP(1333), SNAP(1406)]);
  });

  it('recover cutting a torn tail at 1326 drops epochs 74, 76, 78 and the snapshots above 1326', async () => {
    const dir = copy();
    // Batch 1326 starts at byte 49311 of segment 1124 (129-byte batches around it): tear it.
    fs.truncateSync(path.join(dir, '00000000000000001124.log'), 49311 + 50);
    const text = await cli('recover', dir, '--full', '--dry-run');
    expect(text.stdout).toContain('would truncate  leader-epoch-checkpoint: epochs ');
    expect(text.stdout).toContain(' 72@1197 74@1326 76@1332 78@1333 → ');
    expect(text.stdout).toContain('would remove  00000000000000001406.snapshot');
    const dry = await cli('recover', dir, '--full', '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(3);
    expect(JSON.parse(dry.stdout).partitionState.snapshotsRemoved.map((f: string) => path.basename(f))).toEqual([SNAP(1333), SNAP(1406)]);
    expect(snapshots(dir)).toEqual([SNAP(1124), SNAP(1333), SNAP(1406)]); // the dry run removed nothing
    const r = await cli('recover', dir, '--full', '--json');
    expect(r.code, r.stderr).toBe(3);
    const report = JSON.parse(r.stdout);
    expect(report.logEndOffset).toBe(1326);
    const kept = fs.readFileSync(fixturePath(CASE, PARTITION, 'leader-epoch-checkpoint'), 'utf8').split('\n').slice(2, 32);
    expect(kept[kept.length - 1]).toBe('72 1197');
    expect(epochFile(dir)).toBe(`0\n30\n${kept.map((l) => `${l}\n`).join('')}`);
    expect(snapshots(dir)).toEqual([SNAP(1124)]);
    expect(report.partitionState.leaderEpochs.after).toHaveLength(30);
    expect(report.partitionState.leaderEpochs.before).toHaveLength(33);
    // Run again: the ends do not move, nothing is written.
    const stamps = fileStamps(dir);
    const again = await cli('recover', dir, '--full', '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).partitionState).toBeUndefined();
    expect(fileStamps(dir)['leader-epoch-checkpoint']).toBe(stamps['leader-epoch-checkpoint']);
  });

  it('delete-records --before-offset 1200 moves epoch 72 up to 1200 and removes snapshot 1124', async () => {
    const dir = copy();
    const dry = await cli('delete-records', dir, '--before-offset', '1200', '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout).partitionState.leaderEpochs.after[0]).toEqual({ epoch: 72, startOffset: 1200 });
    expect(snapshots(dir)).toEqual([SNAP(1124), SNAP(1333), SNAP(1406)]);
    expect(epochFile(dir).split('\n')[1]).toBe('33');
    const r = await cli('delete-records', dir, '--before-offset', '1200', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(epochFile(dir)).toBe(checkpointText([[72, 1200], [74, 1326], [76, 1332], [78, 1333]]));
    expect(snapshots(dir)).toEqual([SNAP(1333), SNAP(1406)]);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const text = await cli('delete-records', dir, '--before-offset', '1330');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('truncated  leader-epoch-checkpoint: epochs 72@1200 74@1326 76@1332 78@1333 → 74@1330 76@1332 78@1333');
  });

  it('delete-records at or below the log start writes no file', async () => {
    const dir = copy();
    const own = (stamps: Record<string, string>) => Object.entries(stamps).filter(([f]) => f === 'leader-epoch-checkpoint' || f.endsWith('.snapshot'));
    const before = own(fileStamps(dir));
    const r = await cli('delete-records', dir, '--before-offset', '0', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).partitionState).toBeUndefined();
    expect(own(fileStamps(dir))).toEqual(before);
  });

  it('retention deleting segment 0 moves the log start to 1124: epochs below it go, 68 starts there', async () => {
    const dir = copy();
    // 76721 bytes in all; segment 0 is 1286 of them: deleting it leaves exactly retention.bytes.
    // __consumer_offsets is compacted by Kafka's built-in config: delete is asked for explicitly.
    const r = await cli('retention', dir, '--config', 'cleanup.policy=delete', '--retention-ms', '-1', '--retention-bytes', '75435', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).logStartOffsetAfter).toBe(1124);
    expect(epochFile(dir)).toBe(checkpointText(ORIGINAL_TAIL.slice(2)));
    expect(snapshots(dir)).toEqual([SNAP(1124), SNAP(1333), SNAP(1406)]);
  });

  it('retention.ms deleting every segment (old timestamps) leaves epoch 78 at the new start 1406 and only its snapshot', async () => {
    const dir = copy();
    const r = await cli('retention', dir, '--config', 'cleanup.policy=delete', '--retention-ms', '1000', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).logStartOffsetAfter).toBe(1406);
    expect(epochFile(dir)).toBe(checkpointText([[78, 1406]]));
    expect(snapshots(dir)).toEqual([SNAP(1406)]);
  });
});
