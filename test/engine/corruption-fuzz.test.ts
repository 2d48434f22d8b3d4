/**
 * Corruption fuzzing (fast-check): bit flips, truncations, garbage appended, huge length fields
 * and zeroed regions in `.log`, `.index`, `.timeindex` and checkpoint files of small logs, opened
 * by the writer (loader) and read back. For every case:
 *
 *  - recovery (Log.open) and reading (by offset, from an offset, by time) never throw;
 *  - they never hang: the in-memory FileIO fails any case that needs more than MAX_OPERATIONS
 *    file operations (a count, not a clock: timings belong in `bench`);
 *  - they never allocate beyond a fixed bound: no single read or write may exceed MAX_IO_BYTES
 *    (the scanner's chunk plus slack), whatever a length field claims;
 *  - nothing corrupt is readable: every record returned is one that was written, intact (key,
 *    value, timestamp; its offset too unless the flip hit a batch's baseOffset field, which the
 *    CRC does not cover by design);
 *  - nothing intact is lost: every record of every batch that ends before the first damaged byte
 *    of the first damaged `.log` (in offset order) is read back (unless a damaged log-start
 *    checkpoint still parses and moved the log start past it);
 *  - the damage is reported where it is: a `.log` that no longer scans cleanly is named, with a
 *    byte position, by the loader's report or a read warning; an index that fails the sanity
 *    rules is rebuilt or reported; an unparsable checkpoint is reported.
 *
 * Known limit (Kafka's format): a batch's baseOffset and partitionLeaderEpoch are not covered by
 * its CRC. Recovery validates offsets, so such damage in a segment it scans is cut and reported;
 * in a sealed segment it trusts (clean shutdown), the reader returns the intact records under the
 * shifted offsets without a warning, because LogReader does not validate offsets. The fuzz accepts
 * that (content must still be intact) and does not count it as unreported damage.
 *
 * Three starting logs: one shut down cleanly (marker trusted: sealed data is not scanned at open,
 * so damage there is found by the reader), one that crashed after more appends (recovery from
 * the recovery point), and one like it of snappy, lz4, zstd and gzip batches. Cases are tiny (a few KiB) so that thousands run in seconds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Log, LogtoolError, type LogConfig } from '../../src/api.js';
import { EntryScanner } from '../../src/engine/segment/file-records.js';
import { checkOffsetIndex, checkTimeIndex } from '../../src/engine/recovery/index-sanity.js';
import { parseCheckpoint } from '../../src/engine/checkpoint.js';
import { CrashFS, type CrashState } from '../helpers/crash-io.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

const T0 = 1_700_000_000_000;
/**
 * Cases per property (four properties): LOGTOOL_FUZZ_RUNS, default 1250 (5,000 cases, a few seconds
 * of the suite); 2500 (10,000) or more for a longer run. Every case is an independent random draw.
 */
const RUNS_PER_PROPERTY = Number(process.env.LOGTOOL_FUZZ_RUNS ?? 1250);
const MAX_OPERATIONS = 20_000;
const MAX_IO_BYTES = (1 << 20) + 64 * 1024;

const config: Partial<LogConfig> = { flushMode: 'async', segmentBytes: 700, indexIntervalBytes: 60, segmentIndexBytes: 240 };
const rec = (i: number) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}|${'z'.repeat((i * 13) % 70)}`), timestamp: T0 + i * 100 });
const originalIndexOf = (value: Buffer | null): number => (value ? Number(/^v(\d+)\|/.exec(value.toString('latin1'))?.[1] ?? -1) : -1);

interface Template {
  name: string;
  state: CrashState;
  dir: string;
  logDir: string;
  written: number;
}

let templates: Template[] = [];

/** Builds the starting logs in memory (real empty directories only for the writer's flock). */
async function buildTemplates(): Promise<Template[]> {
  const root = makeTempDir('logtool-fuzz-');
  const out: Template[] = [];
  for (const kind of ['clean', 'crashed', 'compressed'] as const) {
    const logDir = path.join(root, kind);
    const dir = path.join(logDir, 't-0');
    fs.mkdirSync(dir, { recursive: true });
    const io = new CrashFS({ files: new Map(), dirs: new Set([logDir]) }, { record: false });
    let next = 0;
    let log = Log.open(dir, { io, config });
    // The compressed log: snappy, lz4, zstd and gzip batches written through the library.
    const compression = (b: number) => (kind === 'compressed' ? [2, 3, 4, 1][b % 4]! : 0);
    for (let b = 0; b < 14; b++) await log.append(Array.from({ length: 1 + (b % 2) + (kind === 'compressed' ? 1 : 0) }, () => rec(next++)), { compression: compression(b) });
    await log.close();
    if (kind === 'crashed' || kind === 'compressed') {
      log = Log.open(dir, { io, config });
      for (let b = 0; b < 5; b++) await log.append(Array.from({ length: 1 + (b % 3) }, () => rec(next++)), { compression: compression(b) });
      log.abandon(); // active indexes stay preallocated, recovery point stays behind
    }
    out.push({ name: kind, state: io.liveState(), dir, logDir, written: next });
  }
  return out;
}

type Mutation =
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'garbage'; bytes: Uint8Array }
  | { kind: 'hugeLength'; at: number; value: number }
  | { kind: 'zero'; at: number; length: number };

const fraction = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const mutationArb: fc.Arbitrary<{ kind: Mutation['kind']; f: number; g: number; bit: number; bytes: Uint8Array; value: number }> = fc.record({
  kind: fc.constantFrom<Mutation['kind']>('flip', 'truncate', 'garbage', 'hugeLength', 'zero'),
  f: fraction,
  g: fraction,
  bit: fc.integer({ min: 0, max: 7 }),
  bytes: fc.uint8Array({ minLength: 1, maxLength: 80 }),
  value: fc.constantFrom(0x7fffffff, -1, 0x40000000, 0x00100000, 13, 0, 1 << 26),
});

/** Batch start positions of a `.log` image (to aim length fields). */
function batchStarts(buf: Buffer): number[] {
  const out: number[] = [];
  let p = 0;
  while (p + 12 <= buf.length) {
    out.push(p);
    const size = buf.readInt32BE(p + 8) + 12;
    if (size < 26) break;
    p += size;
  }
  return out;
}

/** Applies a mutation to a copy; returns the new bytes and the byte range touched. */
function mutate(orig: Buffer, file: string, m: { kind: Mutation['kind']; f: number; g: number; bit: number; bytes: Uint8Array; value: number }): { data: Buffer; from: number; to: number } {
  const len = orig.length;
  switch (m.kind) {
    case 'flip': {
      if (len === 0) return { data: Buffer.from([1 << m.bit]), from: 0, to: 1 };
      const at = Math.floor(m.f * len);
      const data = Buffer.from(orig);
      data[at]! ^= 1 << m.bit;
      return { data, from: at, to: at + 1 };
    }
    case 'truncate': {
      const at = Math.floor(m.f * len);
      return { data: Buffer.from(orig.subarray(0, at)), from: at, to: len };
    }
    case 'garbage':
      return { data: Buffer.concat([orig, Buffer.from(m.bytes)]), from: len, to: len + m.bytes.length };
    case 'hugeLength': {
      const starts = file.endsWith('.log') ? batchStarts(orig) : [];
      const at = starts.length ? starts[Math.floor(m.f * starts.length)]! + 8 : Math.floor((m.f * Math.max(0, len - 4)) / 4) * 4;
      const data = Buffer.from(orig.length >= at + 4 ? orig : Buffer.concat([orig, Buffer.alloc(at + 4 - orig.length)]));
      data.writeInt32BE(m.value, at);
      return { data, from: at, to: at + 4 };
    }
    case 'zero': {
      const at = Math.floor(m.f * len);
      const end = Math.min(len, at + 1 + Math.floor(m.g * 600));
      const data = Buffer.from(orig);
      data.fill(0, at, end);
      return { data, from: at, to: end };
    }
  }
}

interface Outcome {
  mentions: string[];
  indexProblemsAndRebuilt: Set<string>;
  checkpointProblems: Set<string>;
  /** The written record (its index in the template) of each record read, in read order. */
  readRecords: number[];
  logStartOffset: number;
  /** The writer refused a damaged checkpoint (so no index was checked or rebuilt). */
  refused: boolean;
}

/** Opens (recovers) and reads a damaged image; throws on any violated invariant. */
async function openAndRead(t: Template, state: CrashState, touched: { file: string; from: number; to: number }[]): Promise<Outcome> {
  const io = new CrashFS(state, { record: false, maxOperations: MAX_OPERATIONS, maxIoBytes: MAX_IO_BYTES });
  const mentions: string[] = [];
  const onWarning = (w: { file: string; position?: number; message: string }) => mentions.push(`${w.file}@${w.position ?? ''} ${w.message}`);
  // A writer refuses a damaged checkpoint of the log directory (it would rewrite it without the
  // other partitions' entries), naming it; the reads are then checked through a read-only open.
  const refused: string[] = [];
  let log: Log;
  try {
    log = Log.open(t.dir, { io, config, onWarning });
  } catch (e) {
    if (!(e instanceof LogtoolError) || e.kind !== 'corrupt' || !e.file?.endsWith('checkpoint')) throw e;
    refused.push(e.file);
    log = Log.open(t.dir, { io, config, readOnly: true, onWarning });
  }
  const rep = log.loadReport;
  for (const x of rep.truncated) mentions.push(`${x.file}@${x.position} truncated`);
  for (const x of rep.segmentsDropped) mentions.push(`${x.file} dropped`);
  // An index is accounted for if rebuilt, reported, or dropped with its segment.
  const indexProblemsAndRebuilt = new Set([...rep.indexesRebuilt, ...rep.indexProblems.map((p) => p.file), ...rep.segmentsDropped.map((d) => d.file)]);
  const checkpointProblems = new Set([...rep.checkpointProblems.map((p) => p.file), ...refused]);
  const baseOffsetTouched = touched.some((x) => x.file.endsWith('.log') && batchStarts(state.files.get(x.file) ?? Buffer.alloc(0)).some((s) => x.from < s + 8 && x.to > s));
  const check = (r: { offset: number; key: Buffer | null; value: Buffer | null; timestamp: number | bigint }) => {
    const i = originalIndexOf(r.value);
    const want = i >= 0 && i < t.written ? rec(i) : undefined;
    if (!want || !r.key?.equals(want.key) || !r.value?.equals(want.value) || r.timestamp !== want.timestamp) {
      throw new Error(`a corrupt record was readable at offset ${r.offset}: key ${r.key?.toString('latin1')} value ${r.value?.toString('latin1').slice(0, 30)}`);
    }
    if (r.offset !== i && !baseOffsetTouched) throw new Error(`record ${i} was read at offset ${r.offset}`);
  };
  const readRecords: number[] = [];
  const logStartOffset = log.logStartOffset;
  try {
    for (const r of log.read()) {
      check(r);
      readRecords.push(originalIndexOf(r.value));
    }
    const end = log.nextOffset;
    for (const from of [Math.floor(end / 3), Math.floor((2 * end) / 3)]) {
      if (from < log.logStartOffset) continue;
      for (const r of log.read({ fromOffset: from, maxRecords: 5 })) check(r);
    }
    for (const r of log.read({ fromTime: T0 + 700, maxRecords: 3 })) check(r);
  } finally {
    log.abandon();
  }
  return { mentions, indexProblemsAndRebuilt, checkpointProblems, readRecords, logStartOffset, refused: refused.length > 0 };
}

/**
 * Does a `.log` image scan cleanly to its end (every entry whole, CRC valid)? Offsets are not
 * checked: a batch's baseOffset is outside its CRC, so a flip there is visible only to a scan that
 * validates offsets — recovery does, the reader does not (see the note at the top).
 */
function scansCleanly(data: Buffer, file: string, lastSegment = false): boolean {
  const io = new CrashFS({ files: new Map([[file, data]]), dirs: new Set([path.dirname(file)]) }, { record: false });
  // Readers check CRCs and that offsets increase inside their segment, so this does too; the last
  // segment may end in zeros (preallocated space: the end, not damage).
  const s = new EntryScanner({ io, path: file, verifyCrc: true, segmentBaseOffset: Number(path.basename(file).slice(0, 20)), zeroTailIsEnd: lastSegment });
  for (const e of s.entries()) void e;
  return s.end.kind === 'end';
}

/** The last `.log` of the directory holding `file`. */
function lastLogOf(files: Map<string, Buffer>, file: string): string | undefined {
  return [...files.keys()].filter((f) => f.endsWith('.log') && path.dirname(f) === path.dirname(file)).sort().pop();
}

function indexSane(data: Buffer, file: string, logSize: number): boolean {
  const io = new CrashFS({ files: new Map([[file, data]]), dirs: new Set([path.dirname(file)]) }, { record: false });
  const base = Number(path.basename(file).slice(0, 20));
  return file.endsWith('.index') ? !checkOffsetIndex(io, file, { baseOffset: base, logSizeBytes: logSize }) : !checkTimeIndex(io, file, { baseOffset: base, nextBaseOffset: undefined });
}

/** Each batch of a `.log` image: its byte range and the offsets it holds (template offsets = record indices). */
function batchesOf(buf: Buffer): { end: number; base: number; last: number }[] {
  return batchStarts(buf)
    .map((p) => ({ end: p + 12 + buf.readInt32BE(p + 8), base: Number(buf.readBigInt64BE(p)), last: Number(buf.readBigInt64BE(p)) + buf.readInt32BE(p + 23) }))
    .filter((b) => b.end <= buf.length);
}

const firstDifference = (a: Buffer, b: Buffer): number => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
};

/**
 * The records that must survive the damage: every record of the template's `.log` files, in offset
 * order, up to the first batch that overlaps the first damaged byte.
 */
function intactRecords(t: Template, files: Map<string, Buffer>): number[] {
  const out: number[] = [];
  for (const file of filesOf(t, (n) => n.endsWith('.log'))) {
    const orig = t.state.files.get(file)!;
    const d = firstDifference(orig, files.get(file)!);
    for (const b of batchesOf(orig)) {
      if (d >= 0 && b.end > d) return out;
      for (let o = b.base; o <= b.last; o++) out.push(o);
    }
    if (d >= 0) return out;
  }
  return out;
}

function filesOf(t: Template, pick: (name: string) => boolean): string[] {
  return [...t.state.files.keys()].filter((p) => pick(path.basename(p))).sort();
}

const stats = { cases: 0, compressedCases: 0, reportedLog: 0, reportedIndex: 0, readerFound: 0, intactChecked: 0 };

async function runCase(t: Template, targets: string[], muts: Parameters<typeof mutate>[2][], targetPick: number[]): Promise<void> {
  const files = new Map(t.state.files);
  const touched: { file: string; from: number; to: number }[] = [];
  muts.forEach((m, k) => {
    const file = targets[targetPick[k]! % targets.length]!;
    const r = mutate(files.get(file) ?? Buffer.alloc(0), file, m);
    files.set(file, r.data);
    touched.push({ file, from: r.from, to: r.to });
  });
  const state: CrashState = { files, dirs: t.state.dirs };
  let out: Outcome;
  try {
    out = await openAndRead(t, state, touched);
  } catch (e) {
    throw new Error(`[${t.name}] ${JSON.stringify(touched)}: ${(e as Error).stack}`);
  }
  stats.cases++;
  if (t.name === 'compressed') stats.compressedCases++;
  // Nothing intact was lost. A damaged log-start checkpoint that still parses (a flipped digit)
  // legitimately moves the log start; anything else must leave every intact record readable.
  const startMoved = touched.some((x) => path.basename(x.file) === 'log-start-offset-checkpoint') ? out.logStartOffset : 0;
  const read = new Set(out.readRecords);
  const required = intactRecords(t, files).filter((i) => i >= startMoved);
  const lost = required.filter((i) => !read.has(i));
  if (lost.length > 0) throw new Error(`[${t.name}] ${JSON.stringify(touched)}: intact records before the first damaged byte were not readable: ${lost.slice(0, 10).join(', ')}${lost.length > 10 ? ' …' : ''} (read ${out.readRecords.length})`);
  stats.intactChecked += required.length;
  // The reader stops at the first invalid batch, so of several damaged .log files only the first
  // (in offset order) is certain to be reached; later ones are reported when recovery scans them.
  const firstDamagedLog = [...new Set(touched.map((x) => x.file))]
    .filter((f) => f.endsWith('.log'))
    .sort()
    .find((f) => !scansCleanly(files.get(f)!, f, f === lastLogOf(files, f)));
  for (const file of new Set(touched.map((x) => x.file))) {
    const data = files.get(file)!;
    const name = path.basename(file);
    if (file === firstDamagedLog) {
      // Damage that makes the .log invalid is named (with a byte position) by the loader or the reader.
      if (!out.mentions.some((m) => m.startsWith(`${file}@`))) throw new Error(`[${t.name}] damage in ${name} ${JSON.stringify(touched)} was not reported: ${out.mentions.join(' | ')}`);
      if (out.mentions.some((m) => m.startsWith(`${file}@`) && m.includes('truncated'))) stats.reportedLog++;
      else stats.readerFound++;
    }
    if ((name.endsWith('.index') || name.endsWith('.timeindex')) && data.length > 0 && !out.refused) {
      const logSize = files.get(file.replace(/\.(time)?index$/, '.log'))?.length ?? 0;
      if (!indexSane(data, file, logSize)) {
        if (!out.indexProblemsAndRebuilt.has(file)) throw new Error(`[${t.name}] insane index ${name} ${JSON.stringify(touched)} was neither rebuilt nor reported`);
        stats.reportedIndex++;
      }
    }
    if (name.endsWith('checkpoint')) {
      let parses = true;
      try {
        parseCheckpoint(data.toString('utf8'), file, 3);
      } catch {
        parses = false;
      }
      if (!parses && !out.checkpointProblems.has(file)) throw new Error(`[${t.name}] unparsable ${name} was not reported`);
    }
  }
}

describe('corruption fuzzing: recovery and reads survive damaged files and report where the damage is', () => {
  beforeAll(async () => {
    templates = await buildTemplates();
  });

  const properties: { what: string; pick: (n: string) => boolean; maxMutations: number }[] = [
    { what: '.log files', pick: (n) => n.endsWith('.log'), maxMutations: 1 },
    { what: '.index and .timeindex files', pick: (n) => n.endsWith('.index') || n.endsWith('.timeindex'), maxMutations: 1 },
    { what: 'checkpoint files', pick: (n) => n.endsWith('checkpoint'), maxMutations: 1 },
    { what: 'several files at once', pick: (n) => /\.(log|index|timeindex)$|checkpoint$/.test(n), maxMutations: 4 },
  ];
  for (const p of properties) {
    it(`${p.what}: ${RUNS_PER_PROPERTY} cases`, async () => {
      const before = stats.cases;
      await fc.assert(
        fc.asyncProperty(
          fc.nat({ max: templates.length - 1 }),
          fc.array(fc.tuple(mutationArb, fc.nat()), { minLength: 1, maxLength: p.maxMutations }),
          async (ti, ms) => {
            const t = templates[ti]!;
            let targets = filesOf(t, p.pick);
            if (p.what === 'checkpoint files') targets = [...new Set([...targets, path.join(t.logDir, 'log-start-offset-checkpoint'), path.join(t.logDir, 'recovery-point-offset-checkpoint')])];
            await runCase(t, targets, ms.map(([m]) => m), ms.map(([, k]) => k));
          },
        ),
        { numRuns: RUNS_PER_PROPERTY, seed: Number(process.env.LOGTOOL_FUZZ_SEED ?? 20240611) + p.what.length },
      );
      expect(stats.cases - before).toBe(RUNS_PER_PROPERTY);
    });
  }

  it(`explored all ${4 * RUNS_PER_PROPERTY} cases and really found damage`, () => {
    expect(stats.cases).toBe(4 * RUNS_PER_PROPERTY);
    expect(stats.reportedLog).toBeGreaterThan(0);
    expect(stats.readerFound).toBeGreaterThan(0);
    expect(stats.reportedIndex).toBeGreaterThan(0);
    expect(stats.intactChecked).toBeGreaterThan(0);
    expect(stats.compressedCases).toBeGreaterThan(0);
    console.log(`corruption fuzz: ${stats.cases} cases (${stats.compressedCases} on snappy/lz4/zstd/gzip batches; ${stats.intactChecked} intact records required and read back); .log damage cut by recovery ${stats.reportedLog}×, found by the reader ${stats.readerFound}×; insane indexes rebuilt ${stats.reportedIndex}×`);
  });
});
