/**
 * Producer-state snapshots and leader-epoch checkpoints of Kafka's own partitions
 * (../shared/fixtures/kafka/segments, read-only; files found by walking each partition and
 * matched against cases.json's `snapshots` / `leaderEpochs` facts):
 *
 *  - every `.snapshot` parses, its entries re-encode to its exact bytes, and a byte flipped
 *    anywhere in it is refused as 'corrupt' naming the file and a byte position;
 *  - every `leader-epoch-checkpoint` parses to the entries cases.json lists, and the check finds
 *    no problem in any partition, but does find a planted decreasing epoch and an offset beyond
 *    the log end.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { realIO } from '../../../src/engine/io.js';
import { LogtoolError } from '../../../src/engine/errors.js';
import { decodeProducerSnapshot, encodeProducerSnapshot, readProducerSnapshot } from '../../../src/engine/partition-state/producer-snapshot.js';
import { checkLeaderEpochs, readLeaderEpochCheckpoint, type LeaderEpochBounds } from '../../../src/engine/partition-state/leader-epochs.js';
import { fixturePath, makeTempDir, removeTempDirs, requireFixtures, segmentCases, type PartitionFacts } from '../../helpers/fixtures.js';

requireFixtures(import.meta.url);
afterAll(removeTempDirs);

interface PartitionDir {
  name: string;
  dir: string;
  facts: PartitionFacts;
}

const partitions: PartitionDir[] = segmentCases().flatMap((c) =>
  Object.entries(c.partitions)
    .map(([p, facts]) => ({ name: `${c.case}/${p}`, dir: fixturePath(c.case, p), facts }))
    .filter((p) => fs.existsSync(p.dir)),
);
const snapshotFiles = partitions.flatMap((p) =>
  fs.readdirSync(p.dir).filter((f) => f.endsWith('.snapshot')).sort().map((f) => ({ partition: p, file: path.join(p.dir, f), label: `${p.name}/${f}` })),
);
const epochPartitions = partitions.filter((p) => fs.existsSync(path.join(p.dir, 'leader-epoch-checkpoint')));

/**
 * Log start and end from cases.json: segment base offsets, the collector's last offsets, log-start.
 * cases.json lists no segments for an `empty` partition: there the `.log` files present (all
 * without records) give both bounds.
 */
function boundsOf(p: PartitionDir): LeaderEpochBounds {
  const facts = p.facts;
  const listed = facts.empty ? fs.readdirSync(p.dir).filter((f) => f.endsWith('.log')).map((f) => f.slice(0, 20)) : (facts.segments ?? []);
  const bases = listed.map(Number).sort((a, b) => a - b);
  if (bases.length === 0) return {};
  const last = bases[bases.length - 1]!;
  const lastOffset = facts.selfDecoded?.[`${String(last).padStart(20, '0')}.log`]?.lastOffset;
  const logEnd = lastOffset === null || lastOffset === undefined ? last : Number(lastOffset) + 1;
  const logStart = Math.max(bases[0]!, facts['log-start'] === undefined ? -1 : Number(facts['log-start']));
  return { logStart, logEnd };
}

describe('producer-state snapshots', () => {
  it('the walk finds every snapshot cases.json lists, and some have entries', () => {
    expect(snapshotFiles.length).toBeGreaterThan(100);
    for (const p of partitions) {
      const found = fs.readdirSync(p.dir).filter((f) => f.endsWith('.snapshot'))
        .map((f) => `${Number(f.slice(0, 20))}:${fs.statSync(path.join(p.dir, f)).size}B`).sort();
      if (!p.facts.empty) expect(found, p.name).toEqual([...(p.facts.snapshots ?? [])].sort());
    }
    const entries = snapshotFiles.reduce((n, s) => n + readProducerSnapshot(realIO, s.file).length, 0);
    expect(entries).toBeGreaterThan(10);
  });

  it.each(snapshotFiles.map((s) => [s.label, s.file] as const))('%s parses and re-encodes to its exact bytes', (_label, file) => {
    const bytes = fs.readFileSync(file);
    const entries = readProducerSnapshot(realIO, file);
    expect(entries.length).toBe((bytes.length - 10) / 46);
    for (const e of entries) {
      expect(e.producerId).toBeGreaterThanOrEqual(0n);
      expect(e.epoch).toBeGreaterThanOrEqual(0);
    }
    expect(encodeProducerSnapshot(entries).equals(bytes)).toBe(true);
  });

  it.each(snapshotFiles.map((s) => [s.label, s.file] as const))('%s: a byte flipped anywhere is refused, naming the file', (_label, file) => {
    const bytes = fs.readFileSync(file);
    for (let pos = 0; pos < bytes.length; pos++) {
      for (const mask of [0x01, 0x80, 0xff]) {
        const bad = Buffer.from(bytes);
        bad[pos]! ^= mask;
        let err: unknown;
        try {
          decodeProducerSnapshot(bad, file);
        } catch (e) {
          err = e;
        }
        expect(err, `byte ${pos} ^ ${mask}`).toBeInstanceOf(LogtoolError);
        const le = err as LogtoolError;
        expect(le.kind).toBe('corrupt');
        expect(le.file).toBe(file);
        expect(le.position).toBeTypeOf('number');
        expect(le.describe()).toContain(file);
      }
    }
  });

  it('a damaged file on disk is refused by readProducerSnapshot with its path and byte, and a truncated one too', () => {
    const src = snapshotFiles.find((s) => fs.statSync(s.file).size > 10)!.file;
    const dir = makeTempDir();
    const flipped = path.join(dir, path.basename(src));
    const bytes = fs.readFileSync(src);
    bytes[bytes.length - 1]! ^= 0x10;
    fs.writeFileSync(flipped, bytes);
    expect(() => readProducerSnapshot(realIO, flipped)).toThrow(expect.objectContaining({ kind: 'corrupt', file: flipped, position: 2 }));
    const truncated = path.join(dir, '00000000000000000001.snapshot');
    fs.writeFileSync(truncated, bytes.subarray(0, bytes.length - 1));
    expect(() => readProducerSnapshot(realIO, truncated)).toThrow(expect.objectContaining({ kind: 'corrupt', file: truncated, position: 6 }));
  });
});

describe('leader-epoch checkpoints', () => {
  it('the walk finds a checkpoint in every partition cases.json gives epochs for', () => {
    expect(epochPartitions.length).toBeGreaterThan(100);
    for (const p of partitions) if ((p.facts.leaderEpochs ?? []).length > 0) expect(epochPartitions, p.name).toContain(p);
    // the bounds are known almost everywhere (not where the corpus left out a partition's segments)
    expect(epochPartitions.filter((p) => boundsOf(p).logEnd !== undefined).length).toBeGreaterThan(epochPartitions.length * 0.9);
  });

  it.each(epochPartitions.map((p) => [p.name, p] as const))('%s parses to the facts and has no problem', (_name, p) => {
    const entries = readLeaderEpochCheckpoint(realIO, path.join(p.dir, 'leader-epoch-checkpoint'));
    if (!p.facts.empty) expect(entries.map((e) => `${e.epoch} ${e.startOffset}`)).toEqual(p.facts.leaderEpochs ?? []);
    expect(checkLeaderEpochs(entries, boundsOf(p))).toEqual([]);
  });

  it('finds a planted decreasing epoch and a planted offset beyond the log end, and nothing else', () => {
    // a partition whose last epoch is above 0, so the planted lower epoch is not also negative
    const p = epochPartitions.find((q) => boundsOf(q).logEnd !== undefined && /^[1-9]/.test((q.facts.leaderEpochs ?? []).at(-1) ?? ''))!;
    const bounds = boundsOf(p);
    const original = fs.readFileSync(path.join(p.dir, 'leader-epoch-checkpoint'), 'utf8');
    const entries = readLeaderEpochCheckpoint(realIO, path.join(p.dir, 'leader-epoch-checkpoint'));
    const last = entries[entries.length - 1]!;
    const plant = (line: string): string => {
      const lines = original.trimEnd().split('\n');
      lines[1] = String(entries.length + 1);
      const file = path.join(makeTempDir(), 'leader-epoch-checkpoint');
      fs.writeFileSync(file, `${[...lines, line].join('\n')}\n`);
      return file;
    };
    const decreasing = checkLeaderEpochs(readLeaderEpochCheckpoint(realIO, plant(`${last.epoch - 1} ${bounds.logEnd}`)), bounds);
    expect(decreasing.map((x) => x.index)).toEqual([entries.length]);
    expect(decreasing[0]!.message).toContain('does not increase');
    const beyond = checkLeaderEpochs(readLeaderEpochCheckpoint(realIO, plant(`${last.epoch + 1} ${bounds.logEnd! + 1}`)), bounds);
    expect(beyond.map((x) => x.index)).toEqual([entries.length]);
    expect(beyond[0]!.message).toContain('beyond the log end');
    // the same epochs at the log end itself are fine: the bound is inclusive
    expect(checkLeaderEpochs(readLeaderEpochCheckpoint(realIO, plant(`${last.epoch + 1} ${bounds.logEnd}`)), bounds)).toEqual([]);
  });

  it('below the log start only the epoch in effect at the log start may begin', () => {
    const entries = [{ epoch: 1, startOffset: 5 }, { epoch: 2, startOffset: 8 }, { epoch: 4, startOffset: 12 }];
    expect(checkLeaderEpochs(entries, { logStart: 10, logEnd: 20 }).map((x) => [x.index, x.message])).toEqual([
      [0, 'start offset 5 of epoch 1 is below the log start offset 10'],
    ]);
    expect(checkLeaderEpochs(entries.slice(1), { logStart: 10, logEnd: 20 })).toEqual([]);
    expect(checkLeaderEpochs([{ epoch: 3, startOffset: 4 }, { epoch: 2, startOffset: 3 }]).map((x) => x.message)).toEqual([
      'epoch 2 does not increase (previous entry has epoch 3)',
      'start offset 3 of epoch 2 is below 4, the start of epoch 3',
    ]);
  });

  it('a malformed checkpoint is corrupt, naming the file', () => {
    const file = path.join(makeTempDir(), 'leader-epoch-checkpoint');
    fs.writeFileSync(file, '0\n1\n3 x\n');
    expect(() => readLeaderEpochCheckpoint(realIO, file)).toThrow(expect.objectContaining({ kind: 'corrupt', file }));
  });
});
