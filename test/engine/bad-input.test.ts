/**
 * Bad input and contention:
 * - a truncated batch, a flipped bit, garbage appended, zeroed ranges in a `.log`: reading stops
 *   at the last valid batch with a warning naming the file and the byte position (Log.open's
 *   onWarning), read-only and on a recovering writable open; nothing but LogtoolError is thrown;
 * - a missing directory is LogtoolError 'not-found';
 * - a second writer (same process, or another process) gets LogtoolError 'lock'; after SIGKILL of
 *   a process holding the lock, it can be taken at once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Log, LogtoolError, type LogConfig, type LogWarning } from '../../src/api.js';
import { makeTempDir, removeTempDirs, repoRoot } from '../helpers/fixtures.js';
import { plain, plainInput, T0, type PlainRecord } from './arbitraries.js';
import type { RecordInput } from '../../src/engine/format/record-batch.js';
import { ensureBuilt } from '../helpers/build.js';

afterAll(removeTempDirs);

const LOG_NAME = '00000000000000000000.log';
const config: Partial<LogConfig> = { flushMode: 'async', indexIntervalBytes: 200 };

interface Base {
  /** Partition dir of the pristine log (never modified). */
  dir: string;
  records: PlainRecord[];
  /** Byte position of each batch, plus the file size at the end. */
  positions: number[];
  /** First offset of each batch. */
  firstOffsets: number[];
}

/** A clean single-segment log of `n` batches of 1–3 records. */
async function buildBase(n = 20): Promise<Base> {
  const dir = path.join(makeTempDir(), 'bad-0');
  const log = Log.open(dir, { config });
  const records: PlainRecord[] = [];
  const firstOffsets: number[] = [];
  for (let i = 0; i < n; i++) {
    const batch: RecordInput[] = Array.from({ length: 1 + (i % 3) }, (_, j) => ({
      key: Buffer.from(`key-${i}-${j}`),
      value: Buffer.from(`value-${i}-${j}-`.repeat(4)),
      headers: j === 1 ? [{ key: 'h', value: null }] : [],
      timestamp: T0 + i * 10 + j,
    }));
    const res = await log.append(batch);
    firstOffsets.push(res.baseOffset);
    batch.forEach((r) => records.push(plainInput(r, records.length)));
  }
  await log.close();
  const buf = fs.readFileSync(path.join(dir, LOG_NAME));
  const positions: number[] = [];
  for (let p = 0; p < buf.length; p += buf.readInt32BE(p + 8) + 12) positions.push(p);
  positions.push(buf.length);
  expect(positions.length).toBe(n + 1);
  return { dir, records, positions, firstOffsets };
}

/** A fresh copy of the base log's partition dir (with its parent's checkpoint and marker). */
function copyOf(base: Base, opts: { keepMarker?: boolean } = {}): string {
  const parent = makeTempDir();
  fs.cpSync(path.dirname(base.dir), parent, { recursive: true });
  const dir = path.join(parent, path.basename(base.dir));
  if (!opts.keepMarker) fs.rmSync(path.join(parent, '.kafka_cleanshutdown'), { force: true });
  return dir;
}

/** Runs fn; anything thrown must be a LogtoolError (returned), anything else fails the test. */
function onlyLogtoolErrors<T>(fn: () => T): T | LogtoolError {
  try {
    return fn();
  } catch (e) {
    if (e instanceof LogtoolError) return e;
    throw new Error(`non-LogtoolError escaped: ${(e as Error)?.stack ?? String(e)}`);
  }
}

function readAllWith(dir: string, opts: { readOnly: boolean }): { records: PlainRecord[]; warnings: LogWarning[]; log: Log } {
  const warnings: LogWarning[] = [];
  const log = Log.open(dir, { ...opts, config: opts.readOnly ? undefined : config, onWarning: (w) => warnings.push(w) });
  const records = [...log.read()].map(plain);
  return { records, warnings, log };
}

type Damage = { kind: 'truncate'; batch: number; keep: number } | { kind: 'flip'; batch: number; at: number; bit: number } | { kind: 'garbage'; bytes: Buffer } | { kind: 'zeros'; batch: number; length: number };

/** Applies damage to the copy's .log; returns the byte position where valid data ends. */
function damage(dir: string, base: Base, d: Damage): number {
  const file = path.join(dir, LOG_NAME);
  const buf = fs.readFileSync(file);
  switch (d.kind) {
    case 'truncate': {
      const start = base.positions[d.batch]!;
      const size = base.positions[d.batch + 1]! - start;
      fs.truncateSync(file, start + (d.keep % size));
      return start;
    }
    case 'flip': {
      const start = base.positions[d.batch]!;
      const size = base.positions[d.batch + 1]! - start;
      // Anywhere from batchLength on, except partitionLeaderEpoch (not checked by anyone).
      const candidates = [8, 9, 10, 11, ...Array.from({ length: size - 16 }, (_, i) => 16 + i)];
      const at = start + candidates[d.at % candidates.length]!;
      buf[at]! ^= 1 << d.bit;
      fs.writeFileSync(file, buf);
      return start;
    }
    case 'garbage':
      fs.appendFileSync(file, d.bytes);
      return buf.length;
    case 'zeros': {
      const start = base.positions[d.batch]!;
      buf.fill(0, start, Math.min(buf.length, start + d.length));
      fs.writeFileSync(file, buf);
      return start;
    }
  }
}

/** The batch index whose start is `pos` (or n for the end of the file). */
const batchAt = (base: Base, pos: number) => base.positions.indexOf(pos);

let base: Base;
beforeAll(async () => {
  base = await buildBase();
});

describe('damaged .log: reads stop at the last valid batch with a warning naming file and position', () => {
  const cases: [string, Damage][] = [
    ['truncated inside the last batch', { kind: 'truncate', batch: 19, keep: 30 }],
    ['truncated inside a middle batch (the rest is gone)', { kind: 'truncate', batch: 7, keep: 70 }],
    ['truncated inside a batch header (fewer than 17 bytes left)', { kind: 'truncate', batch: 12, keep: 10 }],
    ['bit flipped in the records of a middle batch', { kind: 'flip', batch: 5, at: 70, bit: 3 }],
    ['bit flipped in the CRC of the first batch', { kind: 'flip', batch: 0, at: 5, bit: 0 }],
    ['bit flipped in the magic byte', { kind: 'flip', batch: 9, at: 4, bit: 1 }],
    ['bit flipped in batchLength', { kind: 'flip', batch: 11, at: 3, bit: 4 }],
    ['bit flipped in the last batch', { kind: 'flip', batch: 19, at: 40, bit: 7 }],
    ['garbage appended (random)', { kind: 'garbage', bytes: Buffer.from('deadbeefcafebabe00112233445566778899aabbccddeeff0102030405', 'hex') }],
    ['garbage appended (a huge size field)', { kind: 'garbage', bytes: Buffer.concat([Buffer.alloc(8), Buffer.from('7fffffff', 'hex'), Buffer.alloc(20, 2)]) }],
    ['garbage appended (fewer than 17 bytes)', { kind: 'garbage', bytes: Buffer.from('0102030405', 'hex') }],
    ['zero-filled range (torn preallocated pages)', { kind: 'zeros', batch: 14, length: 4096 }],
  ];

  it.each(cases)('%s — read-only open', (_n, d) => {
    const dir = copyOf(base, { keepMarker: true });
    const validEnd = damage(dir, base, d);
    const k = batchAt(base, validEnd);
    const expected = base.records.filter((r) => k === base.firstOffsets.length || r.offset < base.firstOffsets[k]!);
    const out = onlyLogtoolErrors(() => readAllWith(dir, { readOnly: true }));
    if (out instanceof LogtoolError) throw out; // reading must not fail at all
    const { records, warnings, log } = out;
    expect(records).toEqual(expected);
    const logPath = path.join(dir, LOG_NAME);
    const tiny = d.kind === 'garbage' && d.bytes.length < 18;
    if (tiny) {
      // Kafka ignores fewer than 18 trailing bytes; logtool may mention them, but only at that spot.
      expect(warnings.every((w) => w.file === logPath && w.position === validEnd)).toBe(true);
    } else {
      expect(warnings.length).toBeGreaterThan(0);
      expect(warnings.some((w) => w.file === logPath && w.position === validEnd), JSON.stringify(warnings)).toBe(true);
      expect(warnings.every((w) => w.file === logPath && w.message.length > 0)).toBe(true);
    }
    // Batch listing and summaries do not throw (not even a LogtoolError). The listing is metadata
    // (as kafka-dump-log's): every batch before the damage is listed with a valid CRC, and a
    // damaged batch it still lists is marked crcValid false.
    const batches = [...log.reader().batches()];
    expect(batches.slice(0, k).map((b) => [b.entry.baseOffset, b.crcValid])).toEqual(base.firstOffsets.slice(0, k).map((o) => [o, true]));
    if (batches.length > k) expect(batches[k]!.crcValid, `batch ${k} of ${batches.length}`).toBe(false);
    expect(log.segmentInfos().length).toBe(1);
    void log.close();
  });

  it.each(cases)('%s — writable open after an unclean shutdown (recovery)', async (_n, d) => {
    const dir = copyOf(base, { keepMarker: false });
    const validEnd = damage(dir, base, d);
    const k = batchAt(base, validEnd);
    const expectedNext = k === base.firstOffsets.length ? base.records.length : base.firstOffsets[k]!;
    const out = onlyLogtoolErrors(() => readAllWith(dir, { readOnly: false }));
    if (out instanceof LogtoolError) throw out;
    const { records, warnings, log } = out;
    try {
      expect(records).toEqual(base.records.slice(0, expectedNext));
      expect(log.nextOffset).toBe(expectedNext);
      const logPath = path.join(dir, LOG_NAME);
      const tiny = d.kind === 'garbage' && d.bytes.length < 18;
      if (!tiny) expect(warnings.some((w) => w.file === logPath && w.position === validEnd), JSON.stringify(warnings)).toBe(true);
      // The .log now ends at the last valid batch and appending continues from there.
      expect(fs.statSync(logPath).size).toBe(validEnd);
      const res = await log.append([{ value: Buffer.from('after'), timestamp: T0 + 9999 }]);
      expect(res.baseOffset).toBe(expectedNext);
    } finally {
      await log.close();
    }
    const again = readAllWith(dir, { readOnly: true });
    expect(again.warnings).toEqual([]);
    expect(again.records.length).toBe(expectedNext + 1);
    void again.log.close();
  });

  it('a torn tail with the clean-shutdown marker present is still found and reported', async () => {
    const dir = copyOf(base, { keepMarker: true });
    const validEnd = damage(dir, base, { kind: 'truncate', batch: 19, keep: 25 });
    const out = onlyLogtoolErrors(() => readAllWith(dir, { readOnly: false }));
    if (out instanceof LogtoolError) throw out;
    try {
      expect(out.log.nextOffset).toBe(base.firstOffsets[19]);
      expect(out.records).toEqual(base.records.slice(0, base.firstOffsets[19]));
      expect(out.warnings.some((w) => w.file === path.join(dir, LOG_NAME) && w.position === validEnd), JSON.stringify(out.warnings)).toBe(true);
    } finally {
      await out.log.close();
    }
  });

  it('random damage (property): only LogtoolError, records are a prefix, warnings name the file', () => {
    const dmg: fc.Arbitrary<Damage> = fc.oneof(
      fc.record({ kind: fc.constant('truncate' as const), batch: fc.integer({ min: 0, max: 19 }), keep: fc.nat() }),
      fc.record({ kind: fc.constant('flip' as const), batch: fc.integer({ min: 0, max: 19 }), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
      fc.record({ kind: fc.constant('garbage' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 200 }).map((a) => Buffer.from(a)) }),
      fc.record({ kind: fc.constant('zeros' as const), batch: fc.integer({ min: 0, max: 19 }), length: fc.integer({ min: 1, max: 300 }) }),
    );
    const pristine = fs.readFileSync(path.join(base.dir, LOG_NAME));
    const refused: string[] = [];
    let opened = 0;
    fc.assert(
      fc.property(fc.array(dmg, { minLength: 1, maxLength: 3 }), fc.boolean(), (ds, readOnly) => {
        const dir = copyOf(base, { keepMarker: readOnly });
        for (const d of ds) {
          // Later damage refers to the pristine layout; skip what no longer exists.
          const size = fs.statSync(path.join(dir, LOG_NAME)).size;
          if (d.kind !== 'garbage' && base.positions[d.batch + 1]! > size) continue;
          damage(dir, base, d);
        }
        // A file cut exactly at a batch boundary is a shorter valid log: nothing to warn about.
        const now = fs.readFileSync(path.join(dir, LOG_NAME));
        const cleanCut = base.positions.includes(now.length) && now.equals(pristine.subarray(0, now.length));
        const out = onlyLogtoolErrors(() => readAllWith(dir, { readOnly }));
        if (out instanceof LogtoolError) {
          refused.push(out.describe()); // a clean refusal is acceptable; anything else is not
          return;
        }
        opened++;
        const { records, warnings, log } = out;
        try {
          expect(records).toEqual(base.records.slice(0, records.length));
          for (const w of warnings) {
            expect(w.file.startsWith(dir)).toBe(true);
            if (w.file.endsWith('.log')) expect(typeof w.position).toBe('number');
          }
          if (records.length < base.records.length && !cleanCut) expect(warnings.length).toBeGreaterThan(0);
          // Damage never makes reading fail outright (no error of any kind), and what a seek
          // returns is intact: an index may lead past the damage, never to a changed record.
          for (const r of [...log.read({ fromTime: T0 + 55 })].map(plain)) {
            expect(r).toEqual(base.records[r.offset]);
            expect(r.timestamp).toBeGreaterThanOrEqual(T0 + 55);
          }
          const from17 = [...log.read({ fromOffset: 17 })].map(plain);
          for (const r of from17) expect(r).toEqual(base.records[r.offset]);
          if (records.length > 17) expect(from17.slice(0, records.length - 17)).toEqual(records.slice(17));
          expect(log.segmentInfos().length).toBe(1);
        } finally {
          void log.close();
        }
      }),
      { numRuns: 120, seed: 2718 },
    );
    // Damage to the data never makes opening or reading fail outright.
    expect(refused).toEqual([]);
    expect(opened).toBe(120);
  });
});

describe('missing directory', () => {
  it('read-only open of a missing dir is LogtoolError not-found', () => {
    const dir = path.join(makeTempDir(), 'nope-0');
    expect(() => Log.open(dir, { readOnly: true })).toThrow(LogtoolError);
    try {
      Log.open(dir, { readOnly: true });
    } catch (e) {
      expect((e as LogtoolError).kind).toBe('not-found');
      expect((e as LogtoolError).file).toBe(dir);
    }
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('writable open with create: false of a missing dir is not-found (and creates nothing)', () => {
    const dir = path.join(makeTempDir(), 'nope-1');
    expect(() => Log.open(dir, { create: false })).toThrow(expect.objectContaining({ kind: 'not-found' }));
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('a missing parent is not-found too', () => {
    const dir = path.join(makeTempDir(), 'no', 'such', 'place-0');
    expect(() => Log.open(dir, { readOnly: true })).toThrow(expect.objectContaining({ kind: 'not-found' }));
  });
});

describe('one writer per partition', () => {
  it('a second writable open in the same process gets a lock error; readers are not blocked', async () => {
    const dir = path.join(makeTempDir(), 'locked-0');
    const first = Log.open(dir, { config });
    try {
      await first.append([{ value: Buffer.from('x'), timestamp: T0 }]);
      let err: unknown;
      try {
        Log.open(dir, { config });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(LogtoolError);
      expect((err as LogtoolError).kind).toBe('lock');
      const ro = Log.open(dir, { readOnly: true });
      expect([...ro.read()].length).toBe(1);
      void ro.close();
    } finally {
      await first.close();
    }
    const second = Log.open(dir, { config });
    expect(second.nextOffset).toBe(1);
    await second.close();
  });
});

// ---------------------------------------------------------------------------------------------
// Another process, through the built package.

const distEntry = path.join(repoRoot, 'dist', 'api.js');
let distReady = false;

/** Newest mtime of the TypeScript sources (the build is skipped when dist/ is newer). */

beforeAll(() => {
  ensureBuilt();
  distReady = fs.existsSync(distEntry);
}, 180_000);

const CHILD = `
const { Log } = await import(process.env.LOGTOOL_DIST);
try {
  const log = Log.open(process.env.LOGTOOL_DIR, { config: { flushMode: 'async' } });
  await log.append([{ value: Buffer.from('from-child'), timestamp: 1 }]);
  process.stdout.write('LOCKED\\n');
  if (process.env.LOGTOOL_HOLD) setInterval(() => {}, 1000);
  else { await log.close(); process.stdout.write('CLOSED\\n'); }
} catch (e) {
  process.stdout.write(JSON.stringify({ name: e?.name, kind: e?.kind, message: e?.message }) + '\\n');
  process.exit(3);
}
`;

function startChild(dir: string, hold: boolean): { child: ChildProcess; line: Promise<string>; exit: Promise<number | null> } {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
    env: { ...process.env, LOGTOOL_DIST: pathToFileURL(distEntry).href, LOGTOOL_DIR: dir, LOGTOOL_HOLD: hold ? '1' : '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let errOut = '';
  child.stderr!.on('data', (b: Buffer) => (errOut += b.toString()));
  const line = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child said nothing in 20 s; stderr: ${errOut}`)), 20_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(out.slice(0, nl));
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      if (!out.includes('\n')) reject(new Error(`child exited without output; stderr: ${errOut}`));
    });
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, line, exit };
}

describe('one writer per partition, across processes (built dist/)', () => {
  it('a child process opening the log for write while this process holds it gets a lock error', async (ctx) => {
    if (!distReady) ctx.skip();
    const dir = path.join(makeTempDir(), 'xproc-0');
    const log = Log.open(dir, { config });
    try {
      const { line, exit } = startChild(dir, false);
      const msg = JSON.parse(await line) as { name: string; kind: string };
      expect(msg).toMatchObject({ name: 'LogtoolError', kind: 'lock' });
      expect(await exit).toBe(3);
    } finally {
      await log.close();
    }
    // Once released, the child can write.
    const { line, exit } = startChild(dir, false);
    expect(await line).toBe('LOCKED');
    expect(await exit).toBe(0);
    const ro = Log.open(dir, { readOnly: true });
    expect([...ro.read()].map((r) => r.value?.toString())).toEqual(['from-child']);
    void ro.close();
  });

  it('after SIGKILL of the child holding the lock, this process takes it at once', async (ctx) => {
    if (!distReady) ctx.skip();
    const dir = path.join(makeTempDir(), 'xproc-1');
    fs.mkdirSync(dir);
    const { child, line, exit } = startChild(dir, true);
    try {
      expect(await line).toBe('LOCKED');
      expect(() => Log.open(dir, { config })).toThrow(expect.objectContaining({ kind: 'lock' }));
      // Readers are never blocked by the writer.
      const ro = Log.open(dir, { readOnly: true });
      expect([...ro.read()].length).toBe(1);
      void ro.close();
      child.kill('SIGKILL');
      await exit;
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    // No retry, no stale lock: the kernel dropped it with the process.
    const warnings: LogWarning[] = [];
    const log = Log.open(dir, { config, onWarning: (w) => warnings.push(w) });
    try {
      expect(log.nextOffset).toBe(1); // the child's committed append survived its death
      const res = await log.append([{ value: Buffer.from('parent'), timestamp: 2 }]);
      expect(res.baseOffset).toBe(1);
    } finally {
      await log.close();
    }
  });
});
