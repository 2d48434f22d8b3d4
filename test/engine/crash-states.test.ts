/**
 * Simulated power loss for every writing operation. Each workload runs on a recording FileIO
 * (test/helpers/crash-io.ts) and marks in its journal what it has acknowledged:
 *
 *  - appends: sync-mode appends (acknowledged 'flushed') of uncompressed, gzip, snappy, lz4 and
 *    zstd batches through the library, segment rolls (small segment.bytes and index files), and the
 *    recovery-point checkpoint and clean-shutdown marker (close, reopen, explicit flush);
 *  - compaction: a multi-pass compaction (Kafka's .cleaned → .swap → rename protocol, deletions of
 *    the replaced files) and its cleaner-offset-checkpoint;
 *  - deletions and checkpoints: retention by bytes, delete-records (log-start-offset-checkpoint)
 *    and consumer-group commits (consumer-offsets-checkpoint).
 *
 * At crash points over each journal we take crash states as unkind as a real disk: any unsynced
 * sector of any write, any unsynced truncate, and any directory operation whose directory was not
 * fsynced may independently have happened or not (every state when a point has at most 10 such
 * operations, otherwise 20 sampled ones from a printed seed). For each state:
 *
 *  1. a reader (read-only open, before any writer) shows exactly the records the writer's loader
 *     keeps — or refuses with a LogtoolError of exit code 3;
 *  2. the writer's open never fails, and what it reads is intact (every record as written, at
 *     the offset it was written at, offsets increasing, no read warning) and keeps everything the
 *     workload had acknowledged at that point (records, log start offset, compaction result,
 *     cleaner checkpoint, consumer positions);
 *  3. the next append succeeds, and after a clean close a full validation finds nothing to repair.
 *
 * Some states are recovered on a recording FileIO, and crash states of that recovery are checked
 * the same way (a crash during recovery must not lose acknowledged data either).
 *
 * LOGTOOL_CRASH_POINTS=N takes N crash points per workload (default 10 for appends, 40 for
 * compaction, 20 for deletions, about a minute in all; `all` for every point of
 * the journal: the soak), LOGTOOL_CRASH_SAMPLES=K states where a point has more than
 * LOGTOOL_CRASH_EXHAUSTIVE_OPS (10) unsynced operations, LOGTOOL_CRASH_SEED the seed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, LogtoolError, type LogConfig } from '../../src/api.js';
import { ConsumerPositions } from '../../src/engine/queue/consumer-positions.js';
import { CompressionType } from '../../src/engine/format/compression.js';
import { loadLog } from '../../src/engine/recovery/loader.js';
import { resolveConfig } from '../../src/engine/config.js';
import type { LogRecord, RecordInput } from '../../src/engine/format/record-batch.js';
import { CrashFS, CrashSimulator, seededRandom, type CrashState } from '../helpers/crash-io.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

const T0 = 1_700_000_000_000;
const POINTS_ENV = process.env.LOGTOOL_CRASH_POINTS;
const ALL_POINTS = POINTS_ENV === 'all';
const SAMPLES = Number(process.env.LOGTOOL_CRASH_SAMPLES ?? 20);
const MAX_EXHAUSTIVE_OPS = Number(process.env.LOGTOOL_CRASH_EXHAUSTIVE_OPS ?? 10);
const SEED = Number(process.env.LOGTOOL_CRASH_SEED ?? 0x5eed);
/** Every NESTED_EVERY-th state is recovered on a recording FS, and NESTED_STATES crash states of that recovery are checked. */
const NESTED_EVERY = 10;
const NESTED_STATES = 2;
/** The soak runs as long as it takes. */
const TIMEOUT_MS = ALL_POINTS ? 24 * 3_600_000 : 600_000;

/** Record `i` (written at offset i): sizes vary so batches straddle 512-byte sectors; 7 keys for compaction. */
function recordFor(i: number): RecordInput & { timestamp: number } {
  return { key: Buffer.from(`k${i % 7}`), value: Buffer.from(`v${i}:${'x'.repeat((i * 37) % 290)}`), timestamp: T0 + i * 10 };
}

/** The written record a read record claims to be (its value says which), checked intact and in place. */
function checkIntact(r: LogRecord, where: string): number {
  const i = Number(/^v(\d+):/.exec(r.value?.toString('latin1') ?? '')?.[1] ?? -1);
  const want = i >= 0 ? recordFor(i) : undefined;
  if (!want || r.offset !== i || !r.key?.equals(want.key!) || !r.value?.equals(want.value!) || r.timestamp !== want.timestamp) {
    throw new Error(`${where}: read offset ${r.offset} key ${r.key} value ${r.value?.subarray(0, 20)} ts ${r.timestamp}: not a record as written`);
  }
  return i;
}

interface CheckInput {
  /** Offsets read by the writer after recovery, in order (each checked intact). */
  offsets: number[];
  log: Log;
  /** Markers passed at the crash point, in order. */
  marks: Mark[];
  where: string;
}

type Mark = { acked?: number; compacted?: true; logStart?: number; group?: [string, number] };

interface Workload {
  name: string;
  /** Crash points by default (LOGTOOL_CRASH_POINTS overrides). */
  points: number;
  config: Partial<LogConfig>;
  /** The starting image (durable); the log is in `<logDir>/t-0`. */
  initial(logDir: string): Promise<CrashState>;
  /** The operation under test, on the recording FS; returns what its end state reads. */
  run(io: CrashFS, dir: string): Promise<void>;
  /** The workload's invariants for one recovered crash state. */
  check(c: CheckInput): void;
}

// ---------------------------------------------------------------------------------------------
// Workloads

const baseAppendConfig: Partial<LogConfig> = {
  flushMode: 'sync',
  segmentBytes: 2048,
  indexIntervalBytes: 200,
  segmentIndexBytes: 96, // 12 offset entries, 8 time entries: rolls on full indexes too
  maxWaitMs: 0,
};
const CODECS = [CompressionType.none, CompressionType.gzip, CompressionType.snappy, CompressionType.lz4, CompressionType.zstd];

/**
 * preallocateBytes: zeros written ahead of the active segment's end (trimmed on roll and close);
 * absent, the default (sync mode's: zeros ahead once fdatasyncs are small, up to segment.bytes).
 */
function appendsWorkload(preallocateBytes?: number): Workload & { written: () => number; codecsUsed: Set<number>; zerosAhead: () => number } {
  let written = 0;
  let zerosAhead = 0;
  const codecsUsed = new Set<number>();
  const appendConfig = preallocateBytes === undefined ? baseAppendConfig : { ...baseAppendConfig, preallocateBytes };
  return {
    name: `appends, rolls, recovery-point checkpoints (uncompressed, gzip, snappy, lz4, zstd), ${preallocateBytes === undefined ? 'default preallocation' : `${preallocateBytes} bytes preallocated`}`,
    points: preallocateBytes === undefined ? 10 : 3,
    config: appendConfig,
    written: () => written,
    zerosAhead: () => zerosAhead,
    codecsUsed,
    async initial(logDir) {
      return { files: new Map(), dirs: new Set([logDir]) };
    },
    async run(io, dir) {
      let next = 0;
      let appends = 0;
      const batch = (n: number) => Array.from({ length: n }, () => recordFor(next++));
      const appendOne = (log: Log, n: number) => {
        const compression = CODECS[appends++ % CODECS.length]!;
        codecsUsed.add(compression);
        return log.append(batch(n), { compression });
      };
      // Groups of concurrent appends (one group commit each), sized so rolls fall inside groups.
      const groups = async (log: Log, count: number, phase: number) => {
        for (let g = 0; g < count; g++) {
          const sizes = Array.from({ length: 1 + ((g * 7 + phase) % 4) }, (_, k) => 1 + ((g + k + phase) % 3));
          const results = await Promise.all(sizes.map((n) => appendOne(log, n)));
          for (const r of results) expect(r.status).toBe('flushed');
          if ((io.stat(log.activeSegment.logPath)?.size ?? 0) > log.activeSegment.size) zerosAhead++;
          io.mark({ acked: Math.max(...results.map((r) => r.lastOffset + 1)) } satisfies Mark);
        }
      };
      let log = Log.open(dir, { io, config: appendConfig });
      await groups(log, 12, 0);
      await log.close(); // recovery-point checkpoint and clean-shutdown marker
      log = Log.open(dir, { io, config: appendConfig });
      await groups(log, 6, 1);
      await log.flush(); // recovery-point checkpoint while open
      await groups(log, 6, 2);
      await log.close();
      log = Log.open(dir, { io, config: appendConfig });
      await groups(log, 8, 3);
      log.abandon(); // the process dies: no close
      written = next;
    },
    check({ offsets, log, marks, where }) {
      const acked = Math.max(0, ...marks.map((m) => m.acked ?? 0));
      let last = -1;
      for (const o of offsets) {
        if (o >= written) throw new Error(`${where}: offset ${o} was never written`);
        // Offsets may skip only where nothing was acknowledged: a roll whose new segment survived
        // while the old one's unflushed tail did not (Kafka keeps such a gap too).
        if (o !== last + 1 && o <= acked) throw new Error(`${where}: offsets ${last + 1}..${o - 1} are missing but ${acked} were acknowledged`);
        last = o;
      }
      if (last + 1 < acked) throw new Error(`${where}: only offsets up to ${last} recovered but ${acked} were acknowledged flushed`);
      if (log.nextOffset < last + 1 || log.nextOffset > written) throw new Error(`${where}: log end offset ${log.nextOffset}, last record read ${last}, ${written} written`);
    },
  };
}

/** A closed log of `count` records (built without recording): the starting image of a workload. */
async function closedLog(logDir: string, config: Partial<LogConfig>, count: number, perBatch: number): Promise<CrashState> {
  const io = new CrashFS({ files: new Map(), dirs: new Set([logDir]) }, { record: false });
  const log = Log.open(path.join(logDir, 't-0'), { io, config });
  for (let i = 0; i < count; i += perBatch) await log.append(Array.from({ length: Math.min(perBatch, count - i) }, (_, k) => recordFor(i + k)));
  await log.close();
  return io.liveState();
}

const compactConfig: Partial<LogConfig> = { flushMode: 'sync', segmentBytes: 900, indexIntervalBytes: 200, segmentIndexBytes: 240, cleanupPolicy: 'compact', deleteRetentionMs: 86_400_000, maxWaitMs: 0 };
const COMPACT_RECORDS = 42;

function compactionWorkload(): Workload & { passes: () => number; seenResults: Set<string> } {
  let final: number[] = [];
  const seenResults = new Set<string>();
  let finalCheckpoint: number | undefined;
  let passes = 0;
  return {
    name: 'compaction swaps and the cleaner checkpoint',
    points: 40,
    seenResults,
    config: compactConfig,
    passes: () => passes,
    initial: (logDir) => closedLog(logDir, compactConfig, COMPACT_RECORDS, 2),
    async run(io, dir) {
      const log = Log.open(dir, { io, config: compactConfig });
      // A map of 3 keys for 7: several passes, each a swap.
      const report = await log.compact({ nowMs: T0 + 1_000_000, deleteDelayMs: 0, offsetMapBytes: 24 * 4 });
      passes = report.passes;
      io.mark({ compacted: true } satisfies Mark);
      await log.close();
      const end = Log.open(dir, { io: new CrashFS(io.liveState(), { record: false }), readOnly: true });
      final = [...end.read()].map((r) => r.offset);
      finalCheckpoint = end.readCleanerCheckpoint();
      await end.close();
      expect(final.length).toBeLessThan(COMPACT_RECORDS);
      expect(finalCheckpoint).toBeGreaterThan(0);
    },
    check({ offsets, log, marks, where }) {
      const read = new Set(offsets);
      seenResults.add(offsets.join());
      // Whatever step the crash hit: the compacted result is all there (nothing of it lost) …
      const lost = final.filter((o) => !read.has(o));
      if (lost.length > 0) throw new Error(`${where}: records of the compacted log lost: ${lost.join(', ')}`);
      if (log.nextOffset !== COMPACT_RECORDS) throw new Error(`${where}: log end offset ${log.nextOffset}, not ${COMPACT_RECORDS}`);
      // … and once compact() returned, exactly it, with its cleaner checkpoint.
      if (marks.some((m) => m.compacted)) {
        if (offsets.join() !== final.join()) throw new Error(`${where}: compaction was acknowledged but the log reads ${offsets.join()} instead of ${final.join()}`);
        if (log.readCleanerCheckpoint() !== finalCheckpoint) throw new Error(`${where}: cleaner checkpoint ${log.readCleanerCheckpoint()}, ${finalCheckpoint} acknowledged`);
      }
    },
  };
}

const deleteConfig: Partial<LogConfig> = { flushMode: 'sync', segmentBytes: 900, indexIntervalBytes: 200, segmentIndexBytes: 240, maxWaitMs: 0 };
const DELETE_RECORDS = 48;

function deletionsWorkload(): Workload & { seenStarts: Set<number> } {
  const starts: number[] = [];
  const seenStarts = new Set<number>();
  const commits: [string, number][] = [];
  return {
    name: 'retention, delete-records (log-start checkpoint) and consumer commits',
    points: 20,
    seenStarts,
    config: deleteConfig,
    initial: (logDir) => closedLog(logDir, deleteConfig, DELETE_RECORDS, 3),
    async run(io, dir) {
      const log = Log.open(dir, { io, config: deleteConfig });
      const sizes = log.segmentInfos().map((s) => s.sizeBytes);
      const total = sizes.reduce((a, b) => a + b, 0);
      const retention = log.applyRetention({ retentionBytes: Math.floor(total * 0.7), deleteDelayMs: 0, nowMs: T0 });
      expect(retention.logStartOffsetAfter).toBeGreaterThan(0);
      starts.push(retention.logStartOffsetAfter);
      io.mark({ logStart: retention.logStartOffsetAfter } satisfies Mark);
      const cut = retention.logStartOffsetAfter + 7; // inside a segment: only the checkpoint says so
      log.deleteRecordsBefore(cut, { deleteDelayMs: 0 });
      starts.push(cut);
      io.mark({ logStart: cut } satisfies Mark);
      const further = log.segmentInfos()[1]!.baseOffset + 1; // deletes a segment and moves the start
      log.deleteRecordsBefore(further, { deleteDelayMs: 0 });
      starts.push(further);
      io.mark({ logStart: further } satisfies Mark);
      const positions = new ConsumerPositions(log);
      for (const [g, o] of [['g', further + 2], ['h', further + 5], ['g', further + 9], ['g', DELETE_RECORDS]] as [string, number][]) {
        positions.commit(g, o);
        commits.push([g, o]);
        io.mark({ group: [g, o] } satisfies Mark);
      }
      await log.close();
    },
    check({ offsets, log, marks, where }) {
      const ackedStart = Math.max(0, ...marks.map((m) => m.logStart ?? 0));
      // The operation in progress at the crash aims at the next start; until it is acknowledged,
      // the segments wholly below that may or may not be gone (their renames and unlinks are
      // independent until the directory is fsynced), the rest must all be there.
      const target = starts.find((x) => x > ackedStart) ?? ackedStart;
      const start = log.logStartOffset;
      seenStarts.add(start);
      if (start < ackedStart) throw new Error(`${where}: log start offset ${start} but ${ackedStart} was acknowledged`);
      if (start > target) throw new Error(`${where}: log start offset ${start} is beyond ${target}`);
      if (offsets.length > 0 && offsets[0]! < start) throw new Error(`${where}: offset ${offsets[0]} read below the log start offset ${start}`);
      const read = new Set(offsets);
      for (let o = Math.max(start, target); o < DELETE_RECORDS; o++) if (!read.has(o)) throw new Error(`${where}: offset ${o} lost (log start ${start}, reading ${offsets[0]}..${offsets.at(-1)})`);
      if (log.nextOffset !== DELETE_RECORDS) throw new Error(`${where}: log end offset ${log.nextOffset}`);
      const positions = new ConsumerPositions(log);
      for (const g of ['g', 'h']) {
        const acked = marks.filter((m) => m.group?.[0] === g).map((m) => m.group![1]);
        const got = positions.get(g);
        const attempted = commits.filter(([x]) => x === g).map(([, o]) => o);
        if (acked.length > 0 && (got === undefined || got < Math.max(...acked))) throw new Error(`${where}: group ${g} at ${got} but ${Math.max(...acked)} was committed`);
        if (got !== undefined && !attempted.includes(got)) throw new Error(`${where}: group ${g} at ${got}, never committed`);
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Checking one crash state

interface Stats {
  points: number;
  exhaustivePoints: number;
  sampledPoints: number;
  maxUnsyncedOps: number;
  states: number;
  nestedStates: number;
  readerAgreed: number;
  readerRefused: number;
  truncations: number;
  droppedSegments: number;
  swapsCompleted: number;
  /** States with an interrupted swap where the reader disagreed with the loader (known defect). */
}

const newStats = (): Stats => ({ points: 0, exhaustivePoints: 0, sampledPoints: 0, maxUnsyncedOps: 0, states: 0, nestedStates: 0, readerAgreed: 0, readerRefused: 0, truncations: 0, droppedSegments: 0, swapsCompleted: 0 });

function readOffsets(log: Log, where: string): number[] {
  const out: number[] = [];
  let last = -1;
  for (const r of log.read()) {
    checkIntact(r, where);
    if (r.offset <= last) throw new Error(`${where}: offset ${r.offset} after ${last}`);
    last = r.offset;
    out.push(r.offset);
  }
  return out;
}

/** Recovers one crash state and checks every invariant; returns the recording FS and where the recovery (the open) ended in its journal. */
async function checkState(w: Workload, state: CrashState, dir: string, marks: Mark[], stats: Stats, where: string, record = false): Promise<{ io: CrashFS; recoveryEnd: number }> {
  // 1. A reader first, on its own copy of the image: it must not depend on a writer's repairs.
  let readerSaw: number[] | undefined;
  try {
    const ro = Log.open(dir, { io: new CrashFS(state, { record: false }), config: w.config, readOnly: true, onWarning: () => {} });
    try {
      readerSaw = readOffsets(ro, `${where} (reader)`);
    } finally {
      await ro.close();
    }
  } catch (e) {
    if (!(e instanceof LogtoolError) || e.exitCode !== 3) throw new Error(`${where}: the reader failed other than by refusing (exit 3): ${(e as Error).stack}`);
    stats.readerRefused++;
  }

  // 2. The writer's open (recovery).
  const io = new CrashFS(state, { record });
  let log: Log;
  let opened = false;
  let recoveryEnd = 0;
  const readWarnings: string[] = [];
  try {
    log = Log.open(dir, { io, config: w.config, onWarning: (x) => opened && readWarnings.push(`${x.file} at ${x.position}: ${x.message}`) });
    opened = true;
    recoveryEnd = io.length;
  } catch (e) {
    throw new Error(`${where}: recovery failed: ${(e as Error).stack}`);
  }
  try {
    const report = log.loadReport;
    stats.truncations += report.truncated.length;
    stats.droppedSegments += report.segmentsDropped.length;
    stats.swapsCompleted += report.swapsCompleted.length;
    const offsets = readOffsets(log, where);
    if (readWarnings.length > 0) throw new Error(`${where}: reading the recovered log warned: ${readWarnings.join('; ')}`);
    w.check({ offsets, log, marks, where });
    if (readerSaw !== undefined) {
      if (readerSaw.join() !== offsets.join()) {
        const files = [...state.files].map(([f, b]) => `${path.basename(f)}:${b.length}`).join(' ');
        const mismatch = `${where}: a reader saw offsets [${readerSaw.join()}] but the loader keeps [${offsets.join()}]; files ${files}`;
        throw new Error(mismatch);
      } else stats.readerAgreed++;
    }
    // 3. The next append succeeds where the log ends.
    const end = log.nextOffset;
    const res = await log.append([{ key: Buffer.from('after'), value: Buffer.from('crash'), timestamp: T0 }], { flushMode: 'sync' });
    if (res.baseOffset !== end || res.status !== 'flushed') throw new Error(`${where}: append after recovery gave ${JSON.stringify(res)}, log end was ${end}`);
  } finally {
    if (!log.isClosed) await log.close();
  }

  // After recovery and a clean close, validating every segment finds nothing to repair.
  const verify = loadLog({ io, dir, tp: { topic: 't', partition: 0 }, config: resolveConfig(w.config), readOnly: false, dryRun: true, forceRecoverAll: true, discardLost: false, onWarning: () => {} });
  for (const s of verify.segments) s.closeQuietly();
  if (verify.report.repaired || verify.report.truncated.length > 0) throw new Error(`${where}: the recovered log is not consistent: ${JSON.stringify(verify.report)}`);
  if (verify.nextOffset !== log.nextOffset) throw new Error(`${where}: validation finds log end ${verify.nextOffset}, the log had ${log.nextOffset}`);
  stats.states++;
  return { io, recoveryEnd };
}

/** Crash points: evenly spread over the journal (every point for the soak), always its end. */
function crashPoints(length: number, defaultPoints: number): number[] {
  const POINTS = POINTS_ENV === undefined ? defaultPoints : Number(POINTS_ENV);
  if (ALL_POINTS || POINTS >= length) return Array.from({ length }, (_, i) => i + 1);
  return [...new Set(Array.from({ length: POINTS }, (_, i) => Math.min(length, Math.round(((i + 1) * length) / POINTS))))];
}

async function explore(w: Workload): Promise<Stats> {
  const root = makeTempDir('logtool-crash-');
  const logDir = path.join(root, 'logs');
  const dir = path.join(logDir, 't-0');
  fs.mkdirSync(dir, { recursive: true }); // real directory for the writer's flock only
  const initial = await w.initial(logDir);
  const io = new CrashFS(initial);
  await w.run(io, dir);
  const journal = io.journal;
  const sim = new CrashSimulator(journal, initial);
  const stats = newStats();
  const rng = seededRandom(SEED);
  let k = 0;
  for (const point of crashPoints(journal.length, w.points)) {
    sim.advanceTo(point);
    const marks = sim.marks as Mark[];
    const ops = sim.unsyncedOps;
    stats.points++;
    stats.maxUnsyncedOps = Math.max(stats.maxUnsyncedOps, ops);
    if (ops <= MAX_EXHAUSTIVE_OPS) stats.exhaustivePoints++;
    else stats.sampledPoints++;
    let j = 0;
    for (const state of sim.crashStates({ rng, samples: SAMPLES, maxExhaustiveOps: MAX_EXHAUSTIVE_OPS })) {
      const where = `[${w.name}] journal point ${point}/${journal.length}, state ${j++} of ${ops} unsynced ops (LOGTOOL_CRASH_SEED=${SEED})`;
      const nested = k++ % NESTED_EVERY === 0;
      const recovered = await checkState(w, state, dir, marks, stats, where, nested);
      if (!nested) continue;
      // Crash states of the recovery itself (its recording started from the crash state), up to
      // the end of the open: later come this test's own append and close.
      const inner = new CrashSimulator(recovered.io.journal, state);
      for (let n = 0; n < NESTED_STATES; n++) {
        const p = Math.round(((n + 1) * recovered.recoveryEnd) / NESTED_STATES);
        inner.advanceTo(p);
        await checkState(w, inner.crashState(rng), dir, marks, stats, `${where}, then crash at recovery point ${p}`);
        stats.nestedStates++;
      }
    }
  }
  return stats;
}

function report(w: Workload, s: Stats): string {
  return `crash states [${w.name}]: ${s.points} crash points (${s.exhaustivePoints} explored exhaustively, ${s.sampledPoints} sampled ×${SAMPLES}; up to ${s.maxUnsyncedOps} unsynced ops), ${s.states} states checked of which ${s.nestedStates} during recovery; readers agreed ${s.readerAgreed}×, refused ${s.readerRefused}×, ${s.truncations} truncations, ${s.droppedSegments} dropped files, ${s.swapsCompleted} swaps completed (LOGTOOL_CRASH_SEED=${SEED})`;
}

describe('crash states: simulated power loss during every writing operation', () => {
  it('appends, rolls and checkpoints: every acknowledged record survives, readers agree with the loader', async () => {
    const w = appendsWorkload();
    const s = await explore(w);
    console.log(report(w, s));
    // The default preallocation was on: groups were acknowledged with zeros ahead of the log end.
    expect(w.zerosAhead()).toBeGreaterThan(0);
    expect(w.codecsUsed.size).toBe(CODECS.length);
    expect(s.states).toBeGreaterThan(s.points);
    // Torn tails land in zeros written ahead, which end the log quietly: truncations are the
    // explicit-0 sweep's to show.
    expect(s.nestedStates).toBeGreaterThan(0);
    expect(s.readerAgreed).toBeGreaterThan(0);
  }, TIMEOUT_MS);

  it('appends with an explicit zero-filled preallocation: the zero tails read as the end, acknowledged records survive', async () => {
    const w = appendsWorkload(700);
    const s = await explore(w);
    console.log(report(w, s));
    expect(s.states).toBeGreaterThan(s.points);
    expect(s.readerAgreed).toBeGreaterThan(0);
  }, TIMEOUT_MS);

  it('appends without preallocation (explicit 0): acknowledged records survive', async () => {
    const w = appendsWorkload(0);
    const s = await explore(w);
    console.log(report(w, s));
    expect(w.zerosAhead()).toBe(0);
    expect(s.states).toBeGreaterThan(s.points);
    expect(s.truncations).toBeGreaterThan(0);
    expect(s.readerAgreed).toBeGreaterThan(0);
  }, TIMEOUT_MS);

  it('compaction: every state holds the compacted result, exactly it once acknowledged, readers agree', async () => {
    const w = compactionWorkload();
    const s = await explore(w);
    console.log(report(w, s));
    expect(w.passes()).toBeGreaterThan(1);
    // The states were not all before or all after: intermediate results of the passes were seen.
    expect(w.seenResults.size).toBeGreaterThan(2);
    expect(s.swapsCompleted).toBeGreaterThan(0);
    expect(s.readerAgreed).toBeGreaterThan(0);
  }, TIMEOUT_MS);

  it('retention, delete-records and consumer commits: acknowledged log starts and positions survive, readers agree', async () => {
    const w = deletionsWorkload();
    const s = await explore(w);
    console.log(`${report(w, s)}; log start offsets seen: ${[...w.seenStarts].sort((a, b) => a - b).join(', ')}`);
    // States before, between and after the operations: every acknowledged log start was seen.
    expect(w.seenStarts.size).toBeGreaterThanOrEqual(4);
    expect(s.states).toBeGreaterThan(s.points);
    expect(s.readerAgreed).toBeGreaterThan(0);
  }, TIMEOUT_MS);
});
