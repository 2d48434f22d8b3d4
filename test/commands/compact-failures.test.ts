/**
 * Maintenance commands that fail must fail cleanly (issue 9 items 4 and 21):
 *
 *  - `compact --keep-removed DIR` with an unusable DIR exits 1 with one line naming DIR, and every
 *    old segment is still in place: the copies are made (through the I/O layer) before the swap
 *    can no longer be undone, so no later open completes a swap whose copy was never made;
 *  - with the disk full (an injected FileIO failing every non-empty write from the n-th on, for
 *    every n the command reaches), compaction reports the first failure, not a later one from
 *    closing; the `.cleaned` and `.tmp` files it created are gone; the records are unchanged; and
 *    recovery, on the still-full disk, removes any leftovers without writing a byte; a cleaned
 *    segment that cannot be created (its .log made, an index not) leaves no empty file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { realIO, type FileIO } from '../../src/engine/io.js';
import { ioError, LogtoolError } from '../../src/engine/errors.js';
import { closeAfter } from '../../src/commands/close-after.js';
import { cli } from '../helpers/cli.js';
import { ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { makeKeyedLog, readRecordLines } from '../helpers/compact-logs.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const makeLog = makeKeyedLog;
const readLines = readRecordLines;

/** What `logtool compact` does with an open log (src/commands/compact.ts). */
const compactAndClose = (log: Log, opts: { deleteDelayMs: number }) => closeAfter(log, () => log.compact(opts));

const leftovers = (dir: string) => fs.readdirSync(dir).filter((n) => /\.(cleaned|swap|deleted|tmp)$/.test(n));
const segmentFiles = (dir: string) => Object.fromEntries(fs.readdirSync(dir).filter((n) => /^\d{20}\.(log|index|timeindex)$/.test(n)).map((n) => [n, fs.readFileSync(path.join(dir, n))]));

describe('compact --keep-removed DIR with an unusable DIR', () => {
  it('exits 1 with one line naming DIR and leaves every old segment in place, also for the next open', async () => {
    const dir = await makeLog('keep-0', 40, 2);
    const records = readLines(dir);
    const before = segmentFiles(dir);
    const keep = path.join(makeTempDir(), 'not-a-dir');
    fs.writeFileSync(keep, 'a file where the keep dir should go');

    const r = await cli('compact', dir, '--keep-removed', keep, '--no-progress');
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(keep);
    expect(leftovers(dir)).toEqual([]);
    expect(segmentFiles(dir)).toEqual(before);
    // The next writable open has nothing to complete: the old segments are the log.
    const rec = await cli('recover', dir, '--full', '--json', '--no-progress');
    expect(JSON.parse(rec.stdout).swapsCompleted).toEqual([]);
    expect(readLines(dir)).toEqual(records);
  });
});

/** A real-file FileIO on a disk that fills up: every non-empty write from the `failFrom`-th on fails with ENOSPC. */
class FullDiskIO {
  writes = 0;
  firstFailure: { file: string } | undefined;
  private readonly paths = new Map<number, string>();
  constructor(private readonly failFrom: number) {}
  readonly io: FileIO = {
    ...realIO,
    open: (p, flags) => {
      const fd = realIO.open(p, flags);
      this.paths.set(fd, p);
      return fd;
    },
    write: (fd, buf, offset, length, position) => {
      if (length > 0 && ++this.writes >= this.failFrom) {
        const file = this.paths.get(fd) ?? `fd ${fd}`;
        this.firstFailure ??= { file };
        throw ioError(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }), file, 'write');
      }
      return realIO.write(fd, buf, offset, length, position);
    },
  };
}

describe('compaction with the disk full', () => {
  it('reports the first failure, removes what it created, keeps the records; recovery needs no space', async () => {
    const dir = await makeLog('full-0', 60, 25); // the latest of 25 keys spans sealed segments: cleaned ones hold data
    const records = readLines(dir);
    const pristine = makeTempDir('logtool-compact-pristine-');
    fs.cpSync(path.dirname(dir), pristine, { recursive: true });

    // How many writes a successful compaction makes: every failure point below is reached.
    const probe = new FullDiskIO(Infinity);
    const ok = Log.open(dir, { io: probe.io, create: false });
    await compactAndClose(ok, { deleteDelayMs: 0 });
    const totalWrites = probe.writes;
    expect(totalWrites).toBeGreaterThan(5);

    let failures = 0;
    for (let failFrom = 1; failFrom <= totalWrites; failFrom++) {
      fs.rmSync(path.dirname(dir), { recursive: true, force: true });
      fs.cpSync(pristine, path.dirname(dir), { recursive: true });
      const disk = new FullDiskIO(failFrom);
      let error: unknown;
      try {
        const log = Log.open(dir, { io: disk.io, create: false });
        await compactAndClose(log, { deleteDelayMs: 0 });
      } catch (e) {
        error = e;
      }
      if (!disk.firstFailure) continue; // this run made fewer writes
      failures++;
      const where = `failing from write ${failFrom} (first at ${disk.firstFailure.file})`;
      expect(error, where).toBeInstanceOf(LogtoolError);
      expect((error as LogtoolError).file, where).toBe(disk.firstFailure.file);
      expect((error as LogtoolError).message, where).toMatch(/ENOSPC/);
      // What the failed command created is gone (a swap it could not finish would be .swap/.deleted).
      expect(leftovers(dir), where).toEqual([]);
      // Recovery on the still-full disk: it opens, removes leftovers, and writes nothing.
      const full = new FullDiskIO(1);
      const rec = Log.open(dir, { io: full.io, create: false });
      await rec.close();
      expect(full.firstFailure, where).toBeUndefined();
      expect(leftovers(dir), where).toEqual([]);
      // Old or new segments, never a mix: the latest value of every key and every offset order hold.
      const after = readLines(dir);
      const latest = (lines: string[]) => Object.fromEntries(lines.map((l) => [l.split('|')[1], l]));
      expect(latest(after), where).toEqual(latest(records));
    }
    expect(failures).toBe(totalWrites);
  }, 120_000);
});

describe('compaction that cannot create its output', () => {
  it('fails with that error and leaves no 0-byte .cleaned file', async () => {
    const dir = await makeLog('create-0', 60, 25);
    const records = readLines(dir);
    const enospc = (p: string) => ioError(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }), p, 'open');
    // The .log.cleaned is created, then its .timeindex.cleaned cannot be.
    const io: FileIO = { ...realIO, open: (p, flags) => (p.endsWith('.timeindex.cleaned') ? (() => { throw enospc(p); })() : realIO.open(p, flags)) };
    const log = Log.open(dir, { io, create: false });
    await expect(compactAndClose(log, { deleteDelayMs: 0 })).rejects.toThrow(/timeindex\.cleaned|ENOSPC/);
    expect(leftovers(dir)).toEqual([]);
    expect(readLines(dir)).toEqual(records);
  });
});

describe('recovery on a full disk', () => {
  it("removes a crashed command's leftovers (.cleaned, .deleted, index .tmp) without writing a byte", async () => {
    const dir = await makeLog('left-0', 40, 5);
    const records = readLines(dir);
    const base = '00000000000000000000';
    for (const n of [`${base}.log.cleaned`, `${base}.index.cleaned`, `${base}.timeindex.cleaned`, `00000000000000000005.log.deleted`, `${base}.index.tmp`]) {
      fs.writeFileSync(path.join(dir, n), 'left by a crash');
    }
    const full = new FullDiskIO(1);
    const log = Log.open(dir, { io: full.io, create: false });
    expect(log.loadReport.tempFilesRemoved.length).toBe(5);
    await log.close();
    expect(full.firstFailure).toBeUndefined();
    expect(leftovers(dir)).toEqual([]);
    expect(readLines(dir)).toEqual(records);
  });
});

describe('a swap that fails part way through its .cleaned → .swap renames', () => {
  // Found by FAULT_ALL=1 (compact, the rename of 00000000000000000000.index.cleaned failing after
  // the .log's): the cleaner removed the remaining `.cleaned` files, so the next open found a lone
  // `.log.swap`, completed the swap and paired the new .log with the old segment's indexes.
  // Kafka's rule undoes a swap while any `.cleaned` file is left; the cleaner must leave them.
  it.each(['.log.swap', '.index.swap'])('after %s: the next open undoes it, and the log verifies', async (renamed) => {
    const dir = await makeLog(`partial-swap${renamed.replace(/\./g, '-')}-0`, 60, 3, { segmentBytes: 100_000 });
    // One sealed segment to clean below a new active one:
    const setup = Log.open(dir, {});
    setup.roll();
    await setup.append([{ key: Buffer.from('k0'), value: Buffer.from('last'), timestamp: 1_700_000_001_000 }]);
    await setup.close();
    const records = readLines(dir);
    const log = Log.open(dir, {});
    const failure = new Error('injected: rename failed');
    await expect(
      closeAfter(log, () =>
        log.compact({
          deleteDelayMs: 0,
          onStep: (s) => {
            if (s.phase === 'cleaned-to-swap' && s.file?.endsWith(renamed)) throw failure;
          },
        }),
      ),
    ).rejects.toBe(failure);
    const reopened = Log.open(dir, {});
    await reopened.close();
    expect(readLines(dir)).toEqual(records);
    const v = await cli('verify', dir, '--json');
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(leftovers(dir)).toEqual([]);
  });
});
