/**
 * Zero-filled preallocation of the active segment (`preallocateBytes`, issue 15; BookKeeper's
 * journal preallocation, not Kafka's sparse `file.preallocate`): zeros are written ahead of the
 * write position and trimmed on roll and close; readers beside the writer, and recovery after a
 * crash, end the log at the zeros quietly — not damage, no lost+found, no warning; zeros followed
 * by data remain corruption. Real files, real fsync, the built CLI for verify and recover.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log, defaultLogConfig, type LogConfig } from '../../src/api.js';
import { SYNC_DEFAULT_PREALLOCATE_BYTES } from '../../src/engine/segment/preallocation.js';
import { verifyLog } from '../../src/engine/recovery/log-verifier.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const T0 = 1_700_000_000_000;
const PREALLOCATE = 64 * 1024;
const config = (extra: Partial<LogConfig> = {}): Partial<LogConfig> => ({ flushMode: 'sync', preallocateBytes: PREALLOCATE, ...extra });
const rec = (i: number) => ({ key: Buffer.from(`k${i}`), value: Buffer.alloc(100 + (i % 50), i & 0xff), timestamp: T0 + i });
const logFile = (dir: string, base = 0) => path.join(dir, `${String(base).padStart(20, '0')}.log`);

async function appendN(log: Log, from: number, n: number): Promise<void> {
  for (let i = from; i < from + n; i += 5) await log.append([0, 1, 2, 3, 4].filter((k) => i + k < from + n).map((k) => rec(i + k)));
}

function offsets(log: Log): number[] {
  return [...log.read()].map((r) => r.offset);
}

/** An open log of n records written with preallocation. */
async function writtenLog(n: number, extra: Partial<LogConfig> = {}): Promise<{ dir: string; log: Log }> {
  const dir = path.join(makeTempDir('logtool-prealloc-'), 't-0');
  const log = Log.open(dir, { config: config(extra), rememberConfig: false });
  await appendN(log, 0, n);
  return { dir, log };
}

/** A log of n records written with preallocation, then abandoned (the process dies: zeros stay). */
async function crashedLog(n: number, extra: Partial<LogConfig> = {}): Promise<{ dir: string; dataBytes: number }> {
  const { dir, log } = await writtenLog(n, extra);
  const dataBytes = log.activeSegment.size;
  log.abandon();
  return { dir, dataBytes };
}

describe('zero-filled preallocation', () => {
  it('keeps zeros written ahead of the log end while open, and trims them on close', async () => {
    const { dir, log } = await writtenLog(40);
    const dataBytes = log.activeSegment.size;
    const onDisk = fs.readFileSync(logFile(dir));
    expect(onDisk.length).toBeGreaterThan(dataBytes);
    expect(onDisk.length).toBeLessThanOrEqual(dataBytes + PREALLOCATE);
    expect(onDisk.subarray(dataBytes).every((b) => b === 0)).toBe(true);
    await log.close();
    expect(fs.statSync(logFile(dir)).size).toBe(dataBytes);

    // Byte for byte what a log written without preallocation holds.
    const plainDir = path.join(makeTempDir('logtool-prealloc-'), 't-0');
    const plain = Log.open(plainDir, { config: config({ preallocateBytes: 0 }), rememberConfig: false });
    await appendN(plain, 0, 40);
    await plain.close();
    expect(fs.readFileSync(logFile(dir)).equals(fs.readFileSync(logFile(plainDir)))).toBe(true);
  });

  it('a read-only open beside the writer reads every record and verify finds nothing', async () => {
    const { dir, log } = await writtenLog(30);
    try {
      expect(fs.statSync(logFile(dir)).size).toBeGreaterThan(log.activeSegment.size);
      const warnings: string[] = [];
      const ro = Log.open(dir, { readOnly: true, onWarning: (w) => warnings.push(w.message) });
      try {
        expect(offsets(ro)).toEqual(Array.from({ length: 30 }, (_, i) => i));
        expect(ro.nextOffset).toBe(30);
        const report = verifyLog(ro, { deep: true });
        expect(report.problems).toEqual([]);
        expect(report.bytes).toBe(log.activeSegment.size);
      } finally {
        await ro.close();
      }
      expect(warnings).toEqual([]);
      const v = await cli('verify', dir, '--json');
      expect(v.code, v.stdout + v.stderr).toBe(0);
    } finally {
      await log.close();
    }
  });

  it('after a crash, the zero tail is trimmed silently: no warning, no lost+found, the log goes on', async () => {
    const { dir, dataBytes } = await crashedLog(40);
    expect(fs.statSync(logFile(dir)).size).toBeGreaterThan(dataBytes);
    // verify and a planning recover of the crashed log: clean (exit 0).
    const v = await cli('verify', dir, '--json');
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const dry = await cli('recover', dir, '--dry-run', '--json');
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);

    const warnings: string[] = [];
    const log = Log.open(dir, { config: config({ preallocateBytes: 0 }), onWarning: (w) => warnings.push(w.message) });
    try {
      expect(warnings).toEqual([]);
      expect(log.loadReport.cleanShutdown).toBe(false);
      expect(log.loadReport.truncated).toEqual([]);
      expect(log.loadReport.repaired).toBe(false);
      expect(fs.existsSync(path.join(dir, 'lost+found'))).toBe(false);
      expect(fs.statSync(logFile(dir)).size).toBe(dataBytes);
      expect(log.nextOffset).toBe(40);
      await appendN(log, 40, 5);
      expect(offsets(log)).toEqual(Array.from({ length: 45 }, (_, i) => i));
    } finally {
      await log.close();
    }
  });

  it('a zero tail after a clean shutdown (a trusted marker) is trimmed too', async () => {
    const { dir, log } = await writtenLog(20);
    const dataBytes = log.activeSegment.size;
    await log.close();
    fs.appendFileSync(logFile(dir), Buffer.alloc(5000));
    const warnings: string[] = [];
    const again = Log.open(dir, { config: config(), onWarning: (w) => warnings.push(w.message) });
    try {
      expect(again.loadReport.cleanShutdown).toBe(true);
      expect(warnings).toEqual([]);
      expect(fs.statSync(logFile(dir)).size).toBe(dataBytes);
      await appendN(again, 20, 5);
      expect(offsets(again)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    } finally {
      await again.close();
    }
  });

  it('zeros shorter than an entry header are the end too', async () => {
    const { dir, dataBytes } = await crashedLog(10, { preallocateBytes: 0 });
    fs.appendFileSync(logFile(dir), Buffer.alloc(9));
    const warnings: string[] = [];
    const log = Log.open(dir, { onWarning: (w) => warnings.push(w.message) });
    try {
      expect(warnings).toEqual([]);
      expect(fs.statSync(logFile(dir)).size).toBe(dataBytes);
      expect(log.nextOffset).toBe(10);
    } finally {
      await log.close();
    }
  });

  it('zeros followed by non-zero bytes remain corruption: truncated with a warning, kept in lost+found', async () => {
    const { dir, dataBytes } = await crashedLog(20);
    const fd = fs.openSync(logFile(dir), 'r+');
    fs.writeSync(fd, Buffer.from([7]), 0, 1, dataBytes + 3000);
    fs.closeSync(fd);
    const v = await cli('verify', dir, '--json');
    expect(v.code).toBe(3);
    const warnings: string[] = [];
    const log = Log.open(dir, { onWarning: (w) => warnings.push(w.message) });
    try {
      expect(warnings.some((w) => /truncated/.test(w))).toBe(true);
      expect(log.loadReport.truncated).toHaveLength(1);
      expect(log.loadReport.truncated[0]!.position).toBe(dataBytes);
      expect(fs.readdirSync(path.join(dir, 'lost+found'))).toHaveLength(1);
      expect(log.nextOffset).toBe(20);
    } finally {
      await log.close();
    }
  });

  it('a roll trims the sealed segment; only the active one keeps zeros', async () => {
    const { dir, log } = await writtenLog(100, { segmentBytes: 4096 });
    try {
      const segs = log.segments;
      expect(segs.length).toBeGreaterThan(2);
      for (const s of segs.slice(0, -1)) expect(fs.statSync(s.logPath).size).toBe(s.size);
      const active = segs[segs.length - 1]!;
      expect(fs.statSync(active.logPath).size).toBeGreaterThan(active.size);
    } finally {
      await log.close();
    }
    const ro = Log.open(dir, { readOnly: true });
    try {
      expect(offsets(ro)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    } finally {
      await ro.close();
    }
  });

  it('zeros in a sealed segment are damage (a roll trims them): cut with a warning, later segments dropped', async () => {
    const { dir, log } = await writtenLog(100, { segmentBytes: 4096 });
    const first = log.segments[0]!;
    const firstEnd = first.size;
    log.abandon();
    fs.appendFileSync(first.logPath, Buffer.alloc(3000));
    const warnings: string[] = [];
    const again = Log.open(dir, { config: config(), onWarning: (w) => warnings.push(w.message) });
    try {
      expect(warnings.some((w) => /truncated 3000 bytes/.test(w))).toBe(true);
      expect(again.loadReport.truncated[0]!.position).toBe(firstEnd);
      expect(again.segments.length).toBe(1);
      expect(fs.statSync(first.logPath).size).toBe(firstEnd);
    } finally {
      await again.close();
    }
  });

  it('zeros where flushed data was (below the recovery point) are damage, not preallocated space', async () => {
    const { dir, log } = await writtenLog(30, { preallocateBytes: 0 });
    await log.close(); // recovery point 30
    const before = Log.open(dir, { readOnly: true });
    const cut = [...before.reader().batches()][3]!.entry.position;
    await before.close();
    const file = logFile(dir);
    const bytes = fs.readFileSync(file);
    bytes.fill(0, cut);
    fs.writeFileSync(file, bytes);
    const warnings: string[] = [];
    const ro = Log.open(dir, { readOnly: true, onWarning: (w) => warnings.push(w.message) });
    await ro.close();
    expect(warnings.some((w) => /below the recovery point 30/.test(w))).toBe(true);
    const again = Log.open(dir, { onWarning: () => {} });
    try {
      expect(again.loadReport.truncated).toHaveLength(1);
      expect(again.loadReport.truncated[0]!.reason).toMatch(/below the recovery point 30/);
      expect(again.loadReport.truncated[0]!.position).toBe(cut);
      expect(again.nextOffset).toBe(15);
    } finally {
      await again.close();
    }
  });
});

describe('the default (preallocateBytes -1): sync mode preallocates while its fdatasyncs are small', () => {
  const one = (i: number) => [{ key: null, value: Buffer.alloc(100, i & 0xff), timestamp: T0 + i }];
  /** A log opened with `cfg` (no preallocateBytes unless given) after `appends` awaited appends of `records(i)`. */
  async function defaultLog(cfg: Partial<LogConfig>, appends: number, records: (i: number) => ReturnType<typeof one>): Promise<{ dir: string; log: Log }> {
    const dir = path.join(makeTempDir('logtool-prealloc-default-'), 't-0');
    const log = Log.open(dir, { config: cfg, rememberConfig: false });
    for (let i = 0; i < appends; i++) await log.append(records(i));
    return { dir, log };
  }
  const zerosAhead = (dir: string, log: Log): number => fs.statSync(log.activeSegment.logPath).size - log.activeSegment.size;
  /** ~75 KB per append: above the default's 64 KiB per fdatasync. */
  const big = (i: number) => Array.from({ length: 700 }, (_, k) => ({ key: null, value: Buffer.alloc(100, k), timestamp: T0 + i }));

  it('one producer of one-record sync appends: 1 MiB of zeros ahead, trimmed on close to the bytes of a log without', async () => {
    expect(defaultLogConfig.preallocateBytes).toBe(-1);
    const { dir, log } = await defaultLog({}, 30, one);
    const dataBytes = log.activeSegment.size;
    expect(zerosAhead(dir, log)).toBeGreaterThan(SYNC_DEFAULT_PREALLOCATE_BYTES - 2 * dataBytes);
    expect(zerosAhead(dir, log)).toBeLessThanOrEqual(SYNC_DEFAULT_PREALLOCATE_BYTES);
    expect(fs.readFileSync(logFile(dir)).subarray(dataBytes).every((b) => b === 0)).toBe(true);
    await log.close();
    expect(fs.statSync(logFile(dir)).size).toBe(dataBytes);
    const plain = await defaultLog({ preallocateBytes: 0 }, 30, one);
    expect(zerosAhead(plain.dir, plain.log)).toBe(0);
    await plain.log.close();
    expect(fs.readFileSync(logFile(dir)).equals(fs.readFileSync(logFile(plain.dir)))).toBe(true);
  });

  it('256 concurrent producers of one-record sync appends (groups of ~43 KB per fdatasync): zeros ahead, trimmed on close to the bytes of a log without', async () => {
    const run = async (cfg: Partial<LogConfig>): Promise<{ dir: string; log: Log; fsyncs: number }> => {
      const dir = path.join(makeTempDir('logtool-prealloc-group-'), 't-0');
      const log = Log.open(dir, { config: { flushMode: 'sync', ...cfg }, rememberConfig: false });
      let next = 0;
      const producer = async (): Promise<void> => {
        while (next < 256 * 8) {
          const r = await log.append(one(next++));
          expect(r.status).toBe('flushed');
        }
      };
      await Promise.all(Array.from({ length: 256 }, producer));
      return { dir, log, fsyncs: log.flushStats.fsyncs };
    };
    const { dir, log, fsyncs } = await run({});
    const dataBytes = log.activeSegment.size;
    // The groups' fdatasyncs averaged more than the old 16 KiB gate and at most the 64 KiB one.
    expect(dataBytes / fsyncs).toBeGreaterThan(16 << 10);
    expect(zerosAhead(dir, log)).toBeGreaterThan(0);
    expect(zerosAhead(dir, log)).toBeLessThanOrEqual(SYNC_DEFAULT_PREALLOCATE_BYTES);
    expect(fs.readFileSync(logFile(dir)).subarray(dataBytes).every((b) => b === 0)).toBe(true);
    await log.close();
    expect(fs.statSync(logFile(dir)).size).toBe(dataBytes);
    const plain = await run({ preallocateBytes: 0 });
    expect(zerosAhead(plain.dir, plain.log)).toBe(0);
    await plain.log.close();
    expect(fs.readFileSync(logFile(dir)).equals(fs.readFileSync(logFile(plain.dir)))).toBe(true);
  });

  it('never past segment.bytes: the zeros end where the segment would roll', async () => {
    const { dir, log } = await defaultLog({ segmentBytes: 8192 }, 12, one);
    try {
      expect(zerosAhead(dir, log)).toBeGreaterThan(0);
      expect(fs.statSync(log.activeSegment.logPath).size).toBe(8192);
    } finally {
      await log.close();
    }
  });

  it('no zeros for appends over 64 KiB per fdatasync, for async mode, for an explicit 0, nor before the first fdatasync', async () => {
    const cases: [string, Partial<LogConfig>, number, (i: number) => ReturnType<typeof one>][] = [
      ['sync, ~75 KB appends', {}, 8, big],
      ['async', { flushMode: 'async' }, 30, one],
      ['buffered', { flushMode: 'buffered' }, 30, one],
      ['sync, explicit 0', { preallocateBytes: 0 }, 30, one],
      ['sync, one append (a one-shot command)', {}, 1, one],
    ];
    for (const [what, cfg, appends, records] of cases) {
      const { dir, log } = await defaultLog(cfg, appends, records);
      try {
        expect(zerosAhead(dir, log), what).toBe(0);
      } finally {
        await log.close();
      }
    }
    // An explicit size preallocates whatever the appends' size, from the first append.
    const { dir, log } = await defaultLog({ preallocateBytes: PREALLOCATE }, 1, big);
    try {
      expect(zerosAhead(dir, log)).toBe(PREALLOCATE);
    } finally {
      await log.close();
    }
  });

  it('after a crash with the default, the zero tail is trimmed silently and the log goes on', async () => {
    const { dir, log } = await defaultLog({}, 25, one);
    const dataBytes = log.activeSegment.size;
    expect(zerosAhead(dir, log)).toBeGreaterThan(0);
    log.abandon();
    const v = await cli('verify', dir, '--json');
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const warnings: string[] = [];
    const again = Log.open(dir, { onWarning: (w) => warnings.push(w.message) });
    try {
      expect(warnings).toEqual([]);
      expect(again.loadReport.truncated).toEqual([]);
      expect(fs.existsSync(path.join(dir, 'lost+found'))).toBe(false);
      expect(fs.statSync(logFile(dir)).size).toBe(dataBytes);
      expect(again.nextOffset).toBe(25);
    } finally {
      await again.close();
    }
  });

  it('`logtool append --flush sync` of one-record batches leaves no zeros and verifies clean', async () => {
    const dir = path.join(makeTempDir('logtool-prealloc-cli-'), 't-0');
    const input = path.join(path.dirname(dir), 'in.txt');
    fs.writeFileSync(input, Array.from({ length: 40 }, (_, i) => `line-${i}`).join('\n') + '\n');
    const a = await cli('append', dir, '--lines', '--input', input, '--flush', 'sync', '--batch-records', '1', '--segment-bytes', '2048');
    expect(a.code, a.stdout + a.stderr).toBe(0);
    const ro = Log.open(dir, { readOnly: true });
    try {
      expect(offsets(ro)).toHaveLength(40);
      for (const s of ro.segments) expect(fs.statSync(s.logPath).size).toBe(s.size);
    } finally {
      await ro.close();
    }
    const v = await cli('verify', dir, '--json');
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});
