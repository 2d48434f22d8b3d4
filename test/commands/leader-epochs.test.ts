/**
 * Leader epochs shown and checked (issue 13): `segments` lists the epochs of leader-epoch-checkpoint
 * and the offsets each covers, `ls` the latest epoch and the entry count, `verify` checks the file
 * by Kafka's CheckpointFile format and LeaderEpochFileCache rules (epochs increasing, start offsets
 * not decreasing and within the log, no batch with an epoch below the entry in effect at its base
 * offset) and exits 3 naming the file and line. On a copy of a real KRaft broker partition with 33
 * epochs: kraft-confluentgo-mashakosher-2025/__consumer_offsets-15 (log end 1406, the last epoch
 * 78 from 1333). Every fixture broker directory checking clean is doctor.test.ts' first test (doctor
 * runs verify's check).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyPartitionWithLogDir, removeTempDirs, requireFixtures, segmentCases } from '../helpers/fixtures.js';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';

requireFixtures(import.meta.url);
afterAll(removeTempDirs);
beforeAll(ensureBuilt, 120_000);

const CASE = 'segments/kraft-confluentgo-mashakosher-2025';
const PARTITION = '__consumer_offsets-15';

function copy(): string {
  const c = segmentCases().find((x) => x.case === CASE)!;
  const dir = copyPartitionWithLogDir(c, PARTITION);
  for (const f of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, f), 0o644);
  return dir;
}

const checkpoint = (dir: string) => path.join(dir, 'leader-epoch-checkpoint');
const plant = (dir: string, rows: [number, number][]) => fs.writeFileSync(checkpoint(dir), `0\n${rows.length}\n${rows.map(([e, o]) => `${e} ${o}\n`).join('')}`);

interface Problem {
  file: string;
  line?: number;
  position?: number;
  message: string;
}

async function verifyJson(dir: string): Promise<{ code: number; problems: Problem[]; stderr: string }> {
  const r = await cli('verify', dir, '--json');
  return { code: r.code, problems: (JSON.parse(r.stdout) as { problems: Problem[] }).problems, stderr: r.stderr };
}

describe('segments and ls show the leader epochs', () => {
  it('segments: every epoch with the offsets it covers, in text and --json', async () => {
    const dir = copy();
    const json = await cli('segments', dir, '--json');
    expect(json.code, json.stderr).toBe(0);
    const summary = JSON.parse(json.stdout.trim().split('\n').pop()!);
    expect(summary.leaderEpochs).toHaveLength(33);
    expect(summary.leaderEpochs[0]).toEqual({ epoch: 0, startOffset: 0, endOffset: 57 });
    expect(summary.leaderEpochs.slice(-2)).toEqual([
      { epoch: 76, startOffset: 1332, endOffset: 1333 },
      { epoch: 78, startOffset: 1333, endOffset: 1406 },
    ]);
    const text = await cli('segments', dir);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/leader epoch\s+start offset\s+end offset \(exclusive\)/);
    expect(text.stdout).toMatch(/\n\s*78\s+1333\s+1406\s*\n/);
  });

  it('segments: a malformed checkpoint is a warning naming file and line, exit 3', async () => {
    const dir = copy();
    fs.writeFileSync(checkpoint(dir), '0\n1\n7\n');
    const r = await cli('segments', dir, '--json');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`${checkpoint(dir)}`);
    expect(r.stderr).toContain('line 3: expected 2 fields, found 1');
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!).leaderEpochs).toBeNull();
  });

  it('ls: the latest epoch and the number of entries, in text and --json', async () => {
    const dir = copy();
    const json = await cli('ls', path.dirname(dir), '--json');
    expect(json.code, json.stderr).toBe(0);
    const row = JSON.parse(json.stdout.split('\n')[0]!);
    expect(row).toMatchObject({ topic: '__consumer_offsets', partition: 15, leaderEpoch: 78, leaderEpochEntries: 33 });
    const text = await cli('ls', path.dirname(dir));
    expect(text.stdout).toMatch(/leader epoch/);
    expect(text.stdout).toContain('78 (33 entries)');
    fs.rmSync(checkpoint(dir));
    const none = await cli('ls', path.dirname(dir), '--json');
    expect(JSON.parse(none.stdout.split('\n')[0]!)).toMatchObject({ leaderEpoch: null, leaderEpochEntries: 0 });
  });
});

describe('verify checks the leader-epoch checkpoint', () => {
  it("the broker's checkpoint checks out", async () => {
    const r = await verifyJson(copy());
    expect(r.problems, r.stderr).toEqual([]);
    expect(r.code).toBe(0);
  });

  it('an epoch that does not increase: exit 3 naming the file and line', async () => {
    const dir = copy();
    plant(dir, [[0, 0], [2, 57], [2, 137], [78, 1333]]);
    const r = await verifyJson(dir);
    expect(r.code).toBe(3);
    expect(r.problems).toEqual([{ file: checkpoint(dir), line: 5, message: 'epoch 2 does not increase (previous entry has epoch 2)' }]);
    const text = await cli('verify', dir);
    expect(text.code).toBe(3);
    expect(text.stdout).toContain(`${checkpoint(dir)} line 5: epoch 2 does not increase`);
  });

  it('start offsets that decrease or lie beyond the log end: one problem each, by line', async () => {
    const dir = copy();
    plant(dir, [[0, 0], [2, 57], [4, 40], [78, 1407]]);
    const r = await verifyJson(dir);
    expect(r.code).toBe(3);
    expect(r.problems.map((p) => [p.line, p.message])).toEqual([
      [5, 'start offset 40 of epoch 4 is below 57, the start of epoch 2'],
      [6, 'start offset 1407 of epoch 78 is beyond the log end offset 1406'],
    ]);
  });

  it('an entry starting at the log end is allowed (a new leader that has written nothing yet)', async () => {
    const dir = copy();
    plant(dir, [[0, 0], [78, 1333], [80, 1406]]);
    expect((await verifyJson(dir)).problems).toEqual([]);
  });

  it('batches with an epoch below the entry in effect at their offset: a problem naming the entry line and the batch', async () => {
    const dir = copy();
    // The batches from 1333 on carry epoch 78 (the broker's last entry); claim epoch 90 from 1400.
    plant(dir, [[0, 0], [78, 1333], [90, 1400]]);
    const r = await verifyJson(dir);
    expect(r.code).toBe(3);
    expect(r.problems.length).toBeGreaterThan(0);
    for (const p of r.problems) {
      expect(p.file).toBe(checkpoint(dir));
      expect(p.line).toBe(5);
      expect(p.message).toMatch(/^epoch 90 starts at offset 1400, but the batch at offsets (\d+)\.\.(\d+) \(00000000000000001124\.log at byte \d+\) has the lower partition leader epoch 78; appending it would have removed this entry$/);
      expect(Number(/offsets (\d+)\.\./.exec(p.message)![1])).toBeGreaterThanOrEqual(1400);
    }
    // A higher batch epoch than the entry's is no problem by Kafka's rules (checked on the same batches).
    plant(dir, [[0, 0], [70, 1333]]);
    expect((await verifyJson(dir)).problems).toEqual([]);
  });

  it('a malformed checkpoint: exit 3 naming the file and line', async () => {
    const dir = copy();
    fs.writeFileSync(checkpoint(dir), '0\n2\n0 0\n');
    const r = await verifyJson(dir);
    expect(r.code).toBe(3);
    expect(r.problems).toEqual([{ file: checkpoint(dir), line: 2, message: 'expected 2 entries, found 1', unreadable: true }]);
  });
});
