/**
 * The loader's rules, one by one, on real files (kafka-format.md §10, §11):
 *  - pass 1–3: `.deleted` and `.cleaned` removed (KRaft `.checkpoint.deleted` kept), `.swap` at or
 *    above the lowest `.cleaned` base removed, other swaps completed (files in their offset range
 *    removed, swaps renamed into place);
 *  - pass 4: orphan index files removed; missing and corrupt indexes (each sanity rule) rebuilt
 *    and reported with file and byte position; a corrupt `.txnindex` reported and its segment
 *    validated; truncation trims the `.txnindex`;
 *  - recovery: from the segment holding the recovery point; the first invalid batch truncates its
 *    segment and drops the later ones, into lost+found/ (byte-exact) or deleted with discard;
 *  - the clean-shutdown marker: written on close, deleted on open, trusted only when the
 *    partition's recovery point reaches its log end (a sibling's marker does not vouch for a
 *    crashed partition), active tail still checked; read-only opens leave it;
 *  - dry run: the same report, nothing changed.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, type LogConfig } from '../../src/api.js';
import { loadLog, type LoadReport } from '../../src/engine/recovery/loader.js';
import { realIO } from '../../src/engine/io.js';
import { resolveConfig } from '../../src/engine/config.js';
import { segmentFileName } from '../../src/engine/segment/segment.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

const T0 = 1_700_000_000_000;
const config: Partial<LogConfig> = { flushMode: 'async', segmentBytes: 700, indexIntervalBytes: 100 };
const rec = (i: number) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`value-${i}-${'y'.repeat(40 + (i % 5) * 10)}`), timestamp: T0 + i * 1000 });
const name = (base: number, suffix: string) => segmentFileName(base, suffix);

/** A closed log of `count` single-record batches in several segments. Returns its directory. */
async function makeLog(count: number, opts: { partition?: string; root?: string; close?: boolean } = {}): Promise<{ dir: string; logDir: string; log?: Log }> {
  const logDir = opts.root ?? makeTempDir('logtool-loader-');
  const dir = path.join(logDir, opts.partition ?? 't-0');
  const log = Log.open(dir, { config });
  for (let i = 0; i < count; i++) await log.append([rec(i)]);
  if (opts.close === false) return { dir, logDir, log };
  await log.close();
  return { dir, logDir };
}

function segmentBases(dir: string): number[] {
  return fs
    .readdirSync(dir)
    .filter((n) => /^\d{20}\.log$/.test(n))
    .map((n) => Number(n.slice(0, 20)))
    .sort((a, b) => a - b);
}

function readOffsets(dir: string, fromOffset?: number): number[] {
  const log = Log.open(dir, { readOnly: true });
  try {
    return [...log.read({ fromOffset })].map((r) => r.offset);
  } finally {
    void log.close();
  }
}

function load(dir: string, extra: { dryRun?: boolean; forceRecoverAll?: boolean; discardLost?: boolean } = {}) {
  const warnings: string[] = [];
  const r = loadLog({
    io: realIO,
    dir,
    tp: { topic: path.basename(dir).replace(/-\d+$/, ''), partition: Number(path.basename(dir).split('-').pop()) },
    config: resolveConfig(config),
    readOnly: false,
    discardLost: extra.discardLost ?? false,
    dryRun: extra.dryRun,
    forceRecoverAll: extra.forceRecoverAll,
    onWarning: (w) => warnings.push(`${path.basename(w.file)}@${w.position}: ${w.message}`),
  });
  for (const s of r.segments) s.close();
  return { ...r, warnings };
}

function hashTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const n of fs.readdirSync(d)) {
      const p = path.join(d, n);
      if (fs.statSync(p).isDirectory()) walk(p);
      else out[path.relative(dir, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

const removeMarker = (logDir: string) => fs.rmSync(path.join(logDir, '.kafka_cleanshutdown'), { force: true });
const setRecoveryPoint = (logDir: string, rp: number) => fs.writeFileSync(path.join(logDir, 'recovery-point-offset-checkpoint'), `0\n1\nt 0 ${rp}\n`);

describe('loader: temporary files (passes 1–3)', () => {
  it('removes .deleted and .cleaned files but keeps KRaft .checkpoint.deleted', async () => {
    const { dir } = await makeLog(10);
    for (const n of [`${name(0, '.log')}.deleted`, `${name(0, '.index')}.deleted`, `${name(99, '.log')}.cleaned`, '00000000000000000005-0000000001.checkpoint.deleted']) fs.writeFileSync(path.join(dir, n), 'x');
    const r = load(dir);
    expect(r.report.tempFilesRemoved.sort()).toEqual([`${name(0, '.index')}.deleted`, `${name(0, '.log')}.deleted`, `${name(99, '.log')}.cleaned`].sort());
    expect(fs.existsSync(path.join(dir, '00000000000000000005-0000000001.checkpoint.deleted'))).toBe(true);
    expect(r.report.repaired).toBe(true);
    expect(readOffsets(dir)).toEqual(Array.from({ length: 10 }, (_, i) => i));
  });

  it('completes an interrupted swap: files in its offset range are replaced by the swap segment', async () => {
    const { dir } = await makeLog(20);
    const bases = segmentBases(dir);
    expect(bases.length).toBeGreaterThanOrEqual(4);
    const [b0, b1, b2] = bases as [number, number, number];
    // A "compacted" segment covering the first two segments: their batches, concatenated.
    const merged = Buffer.concat([fs.readFileSync(path.join(dir, name(b0, '.log'))), fs.readFileSync(path.join(dir, name(b1, '.log')))]);
    fs.writeFileSync(path.join(dir, `${name(b0, '.log')}.swap`), merged);
    fs.writeFileSync(path.join(dir, name(b1, '.snapshot')), Buffer.alloc(10)); // Kafka removes any file numbered in the range
    fs.writeFileSync(path.join(dir, name(b2, '.snapshot')), Buffer.alloc(10)); // … and keeps those outside it
    const before = hashTree(dir);

    const dry = load(dir, { dryRun: true });
    expect(hashTree(dir)).toEqual(before);
    const r = load(dir);
    for (const rep of [dry.report, r.report]) {
      expect(rep.swapsCompleted).toEqual([`${name(b0, '.log')}.swap`]);
      // Old files of both covered segments are removed; the swap's missing indexes are rebuilt.
      expect(rep.tempFilesRemoved.sort()).toEqual([name(b0, '.index'), name(b0, '.log'), name(b0, '.timeindex'), name(b1, '.index'), name(b1, '.log'), name(b1, '.snapshot'), name(b1, '.timeindex')].sort());
      expect(rep.indexProblems.map((p) => path.basename(p.file)).sort()).toEqual([name(b0, '.index'), name(b0, '.timeindex')]);
      expect(rep.repaired).toBe(true);
      expect(rep.logEndOffset).toBe(20);
    }
    expect(segmentBases(dir)[0]).toBe(b0);
    expect(segmentBases(dir)).not.toContain(b1);
    expect(segmentBases(dir)).toContain(b2);
    expect(fs.existsSync(path.join(dir, name(b2, '.snapshot')))).toBe(true);
    expect(fs.readFileSync(path.join(dir, name(b0, '.log')))).toEqual(merged);
    expect(fs.existsSync(path.join(dir, `${name(b0, '.log')}.swap`))).toBe(false);
    expect(readOffsets(dir)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(readOffsets(dir, b1 + 1)[0]).toBe(b1 + 1);
  });

  it('removes swaps at or above the lowest .cleaned base offset (an unfinished clean) and keeps the log as it was', async () => {
    const { dir } = await makeLog(20);
    const bases = segmentBases(dir);
    const b2 = bases[2]!;
    fs.copyFileSync(path.join(dir, name(b2, '.log')), path.join(dir, `${name(b2, '.log')}.cleaned`));
    fs.copyFileSync(path.join(dir, name(b2, '.log')), path.join(dir, `${name(b2, '.log')}.swap`));
    fs.copyFileSync(path.join(dir, name(b2, '.index')), path.join(dir, `${name(b2, '.index')}.swap`));
    const r = load(dir);
    expect(r.report.tempFilesRemoved.sort()).toEqual([`${name(b2, '.index')}.swap`, `${name(b2, '.log')}.cleaned`, `${name(b2, '.log')}.swap`].sort());
    expect(r.report.swapsCompleted).toEqual([]);
    expect(segmentBases(dir)).toEqual(bases);
    expect(readOffsets(dir)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });
});

describe('loader: segments and indexes (pass 4)', () => {
  it('removes orphan index files (no .log of the same base offset)', async () => {
    const { dir } = await makeLog(6);
    for (const s of ['.index', '.timeindex', '.txnindex']) fs.writeFileSync(path.join(dir, name(777, s)), Buffer.alloc(24));
    const r = load(dir);
    expect(r.report.tempFilesRemoved.sort()).toEqual([name(777, '.index'), name(777, '.timeindex'), name(777, '.txnindex')]);
    for (const s of ['.index', '.timeindex', '.txnindex']) expect(fs.existsSync(path.join(dir, name(777, s)))).toBe(false);
  });

  it('rebuilds missing indexes even after a clean shutdown, identical to what the append path wrote', async () => {
    const { dir } = await makeLog(20);
    const b1 = segmentBases(dir)[1]!;
    const original = { index: fs.readFileSync(path.join(dir, name(b1, '.index'))), time: fs.readFileSync(path.join(dir, name(b1, '.timeindex'))) };
    expect(original.index.length).toBeGreaterThan(0);
    fs.rmSync(path.join(dir, name(b1, '.index')));
    fs.rmSync(path.join(dir, name(b1, '.timeindex')));
    const r = load(dir);
    expect(r.report.cleanShutdown).toBe(true);
    expect(r.report.indexProblems).toEqual([
      { file: path.join(dir, name(b1, '.index')), reason: 'missing' },
      { file: path.join(dir, name(b1, '.timeindex')), reason: 'missing' },
    ]);
    expect(r.report.segmentsScanned).toBe(1);
    expect(r.report.repaired).toBe(true);
    expect(fs.readFileSync(path.join(dir, name(b1, '.index')))).toEqual(original.index);
    expect(fs.readFileSync(path.join(dir, name(b1, '.timeindex')))).toEqual(original.time);
  });

  const corruptions: { what: string; file: '.index' | '.timeindex'; apply: (b: Buffer) => Buffer; reason: RegExp; position: (b: Buffer) => number }[] = [
    { what: 'length not a multiple of the entry size', file: '.index', apply: (b) => Buffer.concat([b, Buffer.from([1, 2, 3])]), reason: /not a multiple of the 8-byte/, position: (b) => b.length },
    {
      what: 'offsets not increasing',
      file: '.index',
      apply: (b) => {
        const c = Buffer.from(b);
        c.writeInt32BE(c.readInt32BE(0), 8);
        return c;
      },
      reason: /entry 1 offset .* does not increase/,
      position: () => 8,
    },
    {
      what: 'position past the end of the .log',
      file: '.index',
      apply: (b) => {
        const c = Buffer.from(b);
        c.writeInt32BE(0x7fff0000, c.length - 4);
        return c;
      },
      reason: /past the end of the \.log/,
      position: (b) => b.length - 8,
    },
    { what: 'a zero hole before real entries', file: '.index', apply: (b) => Buffer.concat([Buffer.alloc(8), b]), reason: /follows zero padding/, position: () => 8 },
    { what: 'a negative relative offset', file: '.timeindex', apply: (b) => Buffer.concat([b.subarray(0, 8), Buffer.from([0xff, 0xff, 0xff, 0xf0]), b.subarray(12)]), reason: /below the segment base/, position: () => 0 },
    {
      what: 'timestamps decreasing',
      file: '.timeindex',
      apply: (b) => {
        const c = Buffer.from(b);
        c.writeBigInt64BE(0n, 12);
        return c;
      },
      reason: /timestamp 0 decreases/,
      position: () => 12,
    },
  ];
  for (const c of corruptions) {
    it(`rebuilds a sealed segment's ${c.file} with ${c.what}, reporting file and byte position`, async () => {
      const { dir } = await makeLog(24);
      const b1 = segmentBases(dir)[1]!;
      const file = path.join(dir, name(b1, c.file));
      const good = fs.readFileSync(file);
      expect(good.length).toBeGreaterThanOrEqual(24);
      fs.writeFileSync(file, c.apply(good));
      const r = load(dir);
      expect(r.report.cleanShutdown).toBe(true);
      expect(r.report.indexProblems).toHaveLength(1);
      expect(r.report.indexProblems[0]!.file).toBe(file);
      expect(r.report.indexProblems[0]!.reason).toMatch(c.reason);
      expect(r.report.indexProblems[0]!.position).toBe(c.position(good));
      expect(r.warnings.some((w) => w.startsWith(path.basename(file)))).toBe(true);
      expect(fs.readFileSync(file)).toEqual(good);
      for (const from of [b1, b1 + 1, b1 + 3]) expect(readOffsets(dir, from)[0]).toBe(from);
    });
  }

  it('reports a corrupt .txnindex, validates its segment, and rebuilds it from the markers as Kafka does (none: emptied)', async () => {
    const { dir } = await makeLog(12);
    const b1 = segmentBases(dir)[1]!;
    const entry = Buffer.alloc(34);
    entry.writeBigInt64BE(7n, 2); // producer id
    entry.writeBigInt64BE(BigInt(b1 - 5), 10); // first offset
    entry.writeBigInt64BE(BigInt(b1 - 1), 18); // last offset below the base: Kafka's sanity check fails
    fs.writeFileSync(path.join(dir, name(b1, '.txnindex')), entry);
    const r = load(dir);
    expect(r.report.indexProblems).toHaveLength(1);
    expect(r.report.indexProblems[0]!.reason).toMatch(/last offset .* below the segment base/);
    expect(r.report.segmentsScanned).toBe(1);
    // Kafka's LogSegment.recover: txnIndex.reset(), then the aborted transactions its markers end.
    expect(fs.readFileSync(path.join(dir, name(b1, '.txnindex')))).toHaveLength(0);
  });
});

describe('loader: recovery (pass 5)', () => {
  it('validates from the segment holding the recovery point; below it nothing is scanned', async () => {
    const { dir, logDir } = await makeLog(30);
    const bases = segmentBases(dir);
    removeMarker(logDir);
    setRecoveryPoint(logDir, bases[2]! + 1);
    const r = load(dir);
    expect(r.report.cleanShutdown).toBe(false);
    expect(r.report.segmentsScanned).toBe(bases.length - 2);
    expect(r.report.batchesValidated).toBe(30 - bases[2]!);
    expect(r.report.repaired).toBe(false);
    expect(r.recoveryPoint).toBe(bases[2]! + 1);
    const all = load(dir, { forceRecoverAll: true });
    expect(all.report.segmentsScanned).toBe(bases.length);
    expect(all.report.batchesValidated).toBe(30);
  });

  it('truncates at the first invalid batch, drops later segments into lost+found/ byte for byte', async () => {
    const { dir, logDir } = await makeLog(30);
    const bases = segmentBases(dir);
    removeMarker(logDir);
    setRecoveryPoint(logDir, 0);
    const victim = bases[1]!;
    const logFile = path.join(dir, name(victim, '.log'));
    const bytes = fs.readFileSync(logFile);
    // Flip a bit inside the second batch's records: its CRC no longer matches.
    const secondBatch = bytes.readInt32BE(8) + 12;
    const damaged = Buffer.from(bytes);
    damaged[secondBatch + 70]! ^= 0x10;
    fs.writeFileSync(logFile, damaged);
    const later = bases.slice(2).flatMap((b) => ['.log', '.index', '.timeindex'].map((s) => [path.join(dir, name(b, s)), fs.readFileSync(path.join(dir, name(b, s)))] as const));
    const before = hashTree(dir);

    const dry = load(dir, { dryRun: true });
    expect(hashTree(dir)).toEqual(before);
    const r = load(dir);
    const strip = (rep: LoadReport) => ({ ...rep, dryRun: undefined, truncated: rep.truncated.map((t) => ({ ...t, savedTo: undefined })), segmentsDropped: rep.segmentsDropped.map((d) => ({ ...d, savedTo: undefined })) });
    expect(strip(dry.report)).toEqual(strip(r.report));

    expect(r.report.truncated).toHaveLength(1);
    const t = r.report.truncated[0]!;
    expect(t.file).toBe(logFile);
    expect(t.position).toBe(secondBatch);
    expect(t.bytes).toBe(bytes.length - secondBatch);
    expect(t.reason).toMatch(/CRC-32C mismatch/);
    expect(fs.readFileSync(t.savedTo!)).toEqual(damaged.subarray(secondBatch));
    expect(path.dirname(t.savedTo!)).toBe(path.join(dir, 'lost+found'));
    expect(path.basename(t.savedTo!)).toMatch(new RegExp(`^${name(victim, '.log')}\\.bytes-${secondBatch}-${bytes.length}\\.`));
    expect(fs.statSync(logFile).size).toBe(secondBatch);

    expect(r.report.segmentsDropped.map((d) => d.file).sort()).toEqual(later.map(([f]) => f).sort());
    for (const [f, content] of later) {
      const d = r.report.segmentsDropped.find((x) => x.file === f)!;
      expect(fs.existsSync(f)).toBe(false);
      expect(fs.readFileSync(d.savedTo!)).toEqual(content);
      expect(d.bytes).toBe(content.length);
    }
    expect(r.nextOffset).toBe(victim + 1);
    expect(readOffsets(dir)).toEqual(Array.from({ length: victim + 1 }, (_, i) => i));
    // A second recovery finds nothing more to do.
    expect(load(dir, { forceRecoverAll: true }).report.repaired).toBe(false);
  });

  it('with discard, cut bytes and dropped segments are deleted', async () => {
    const { dir, logDir } = await makeLog(20);
    const bases = segmentBases(dir);
    removeMarker(logDir);
    setRecoveryPoint(logDir, 0);
    // Zeros then a non-zero byte: damage (an all-zero tail would be preallocated space, trimmed silently).
    fs.appendFileSync(path.join(dir, name(bases[0]!, '.log')), Buffer.concat([Buffer.alloc(99), Buffer.from([1])]));
    const r = load(dir, { discardLost: true });
    expect(r.report.truncated[0]!.savedTo).toBeUndefined();
    expect(r.report.truncated[0]!.reason).toMatch(/below the minimum 14 \(zero bytes/);
    expect(r.report.segmentsDropped.length).toBe((bases.length - 1) * 3);
    expect(fs.existsSync(path.join(dir, 'lost+found'))).toBe(false);
    expect(segmentBases(dir)).toEqual([bases[0]]);
  });

  it('a segment below the recovery point whose index was missing is truncated alone (Kafka keeps later segments)', async () => {
    const { dir } = await makeLog(20);
    const bases = segmentBases(dir);
    fs.rmSync(path.join(dir, name(bases[0]!, '.index')));
    fs.appendFileSync(path.join(dir, name(bases[0]!, '.log')), Buffer.from('torn'.repeat(10)));
    const r = load(dir);
    expect(r.report.truncated).toHaveLength(1);
    expect(r.report.segmentsDropped).toEqual([]);
    expect(segmentBases(dir)).toEqual(bases);
  });

  it('truncation leaves in the .txnindex only what the remaining markers end (Kafka rebuilds it in recovery)', async () => {
    const { dir, logDir } = await makeLog(12);
    const bases = segmentBases(dir);
    const last = bases[bases.length - 1]!;
    const entry = (firstOffset: number, lastOffset: number) => {
      const e = Buffer.alloc(34);
      e.writeBigInt64BE(BigInt(firstOffset), 10);
      e.writeBigInt64BE(BigInt(lastOffset), 18);
      return e;
    };
    fs.writeFileSync(path.join(dir, name(last, '.txnindex')), Buffer.concat([entry(last, last), entry(last, 11)]));
    removeMarker(logDir);
    setRecoveryPoint(logDir, 0);
    const logFile = path.join(dir, name(last, '.log'));
    const bytes = fs.readFileSync(logFile);
    fs.writeFileSync(logFile, bytes.subarray(0, bytes.length - 3)); // the last batch is torn
    const r = load(dir);
    expect(r.report.truncated).toHaveLength(1);
    expect(r.nextOffset).toBe(11);
    // The planted entries have no markers behind them: the rebuilt index is empty.
    expect(fs.readFileSync(path.join(dir, name(last, '.txnindex')))).toHaveLength(0);
  });

  it('clamps a log start offset checkpoint above the log end', async () => {
    const { dir, logDir } = await makeLog(5);
    fs.writeFileSync(path.join(logDir, 'log-start-offset-checkpoint'), '0\n1\nt 0 50\n');
    const r = load(dir);
    expect(r.logStartOffset).toBe(5);
    expect(r.nextOffset).toBe(5);
  });

  it('an unreadable checkpoint is reported and treated as empty (full recovery)', async () => {
    const { dir, logDir } = await makeLog(10);
    removeMarker(logDir);
    fs.writeFileSync(path.join(logDir, 'recovery-point-offset-checkpoint'), '0\n3\nt 0 x\n');
    const r = load(dir);
    expect(r.report.checkpointProblems).toHaveLength(1);
    expect(r.report.recoveryPoint).toBe(0);
    expect(r.report.segmentsScanned).toBe(segmentBases(dir).length);
  });
});

describe('loader: the clean-shutdown marker', () => {
  it('is written on close, deleted when a writer opens, trusted on the next open: nothing sealed is scanned', async () => {
    const { dir, logDir } = await makeLog(20);
    const marker = path.join(logDir, '.kafka_cleanshutdown');
    expect(fs.existsSync(marker)).toBe(true);
    const ro = Log.open(dir, { readOnly: true });
    expect(fs.existsSync(marker)).toBe(true); // readers change nothing
    await ro.close();
    const log = Log.open(dir, { config });
    expect(fs.existsSync(marker)).toBe(false);
    expect(log.loadReport.cleanShutdown).toBe(true);
    expect(log.loadReport.segmentsScanned).toBe(0);
    expect(log.loadReport.repaired).toBe(false);
    await log.close();
    expect(fs.existsSync(marker)).toBe(true);
  });

  it('still checks the active segment tail: a torn tail is cut even with the marker', async () => {
    const { dir } = await makeLog(20);
    const bases = segmentBases(dir);
    const active = path.join(dir, name(bases[bases.length - 1]!, '.log'));
    const size = fs.statSync(active).size;
    fs.appendFileSync(active, Buffer.from([0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 1, 0, 0, 0, 0, 0, 2, 9, 9, 9, 9]));
    const r = load(dir);
    expect(r.report.cleanShutdown).toBe(true);
    expect(r.report.segmentsScanned).toBe(1);
    expect(r.report.truncated).toEqual([expect.objectContaining({ file: active, position: size, bytes: 21 })]);
    expect(fs.statSync(active).size).toBe(size);
  });

  it("a sibling's marker does not vouch for a partition that crashed: its recovery point is below its log end", async () => {
    const logDir = makeTempDir('logtool-loader-');
    const crashed = await makeLog(20, { root: logDir, partition: 't-0', close: false });
    await crashed.log!.flush(); // recovery point checkpointed at 20…
    for (let i = 20; i < 25; i++) await crashed.log!.append([rec(i)]);
    crashed.log!.abandon(); // …then 5 more records and a crash (no marker from t-0)
    const tornFile = path.join(crashed.dir, name(segmentBases(crashed.dir).at(-1)!, '.log'));
    fs.appendFileSync(tornFile, Buffer.from('half a batch'));
    await makeLog(3, { root: logDir, partition: 't-1' }); // closes cleanly, but cannot vouch for t-0…
    expect(fs.existsSync(path.join(logDir, '.kafka_cleanshutdown'))).toBe(false);
    fs.writeFileSync(path.join(logDir, '.kafka_cleanshutdown'), ''); // …so a marker from elsewhere (a broker, a copy)

    const log = Log.open(crashed.dir, { config });
    const rep = log.loadReport;
    await log.close();
    expect(rep.markerFound).toBe(true);
    expect(rep.cleanShutdown).toBe(false);
    expect(rep.markerNote).toMatch(/recovery point 20 is below its log end offset 25/);
    expect(rep.segmentsScanned).toBeGreaterThan(0);
    expect(rep.truncated).toEqual([expect.objectContaining({ file: tornFile, bytes: 12 })]);
    expect(readOffsets(crashed.dir)).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('is not written while a sibling partition is held by a writer', async () => {
    const logDir = makeTempDir('logtool-loader-');
    const marker = path.join(logDir, '.kafka_cleanshutdown');
    fs.mkdirSync(path.join(logDir, 't-0'));
    fs.writeFileSync(marker, '');
    const first = await makeLog(2, { root: logDir, partition: 't-1', close: false }); // found (and consumed) the marker
    const held = await makeLog(2, { root: logDir, partition: 't-0', close: false });
    await first.log!.close();
    expect(fs.existsSync(marker)).toBe(false); // t-0 is still being written
    await held.log!.close();
    // This process found the marker and both its writers closed consistent: the last restores it
    // (one directory state per process, as Kafka's LogManager; logdir/clean-shutdown.ts).
    expect(fs.existsSync(marker)).toBe(true);
  });

  it('is restored by a writer that found it, and written by the only partition of a directory', async () => {
    const logDir = makeTempDir('logtool-loader-');
    const marker = path.join(logDir, '.kafka_cleanshutdown');
    await makeLog(2, { root: logDir, partition: 't-0' });
    expect(fs.existsSync(marker)).toBe(true); // alone in its directory
    await makeLog(2, { root: logDir, partition: 't-1' });
    expect(fs.existsSync(marker)).toBe(true); // found it at open, closed cleanly: restored
    fs.unlinkSync(marker); // as after a broker crash: the directory is unclean
    await makeLog(2, { root: logDir, partition: 't-1' });
    expect(fs.existsSync(marker)).toBe(false); // repairing one partition never vouches for t-0
  });

  it('the dry run changes nothing, not even the marker', async () => {
    const { dir, logDir } = await makeLog(10);
    const before = hashTree(logDir);
    const r = load(dir, { dryRun: true, forceRecoverAll: true });
    expect(r.report.dryRun).toBe(true);
    expect(r.report.markerFound).toBe(true);
    expect(r.report.markerNote).toMatch(/full recovery was requested/);
    expect(r.report.segmentsScanned).toBe(segmentBases(dir).length);
    expect(hashTree(logDir)).toEqual(before);
  });
});
