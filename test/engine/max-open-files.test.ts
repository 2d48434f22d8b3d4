/**
 * Issue 12: every segment file comes from one least-recently-used descriptor cache (maxOpenFiles),
 * so large partitions and log directories open, append and read under `ulimit -n 1024`. The limit
 * is real: each case runs a child process under `ulimit -n 1024` (bash), against real files.
 *
 * The partition has LOGTOOL_FD_SEGMENTS segments and the log directory LOGTOOL_FD_PARTITIONS
 * partitions: the sizes are 10,000 and 1,000 (LOGTOOL_FD_SEGMENTS=10000
 * LOGTOOL_FD_PARTITIONS=1000, several minutes on a loaded machine); the defaults, 2,000 and 400,
 * are the smallest that fail under the same limit when every segment keeps its descriptors (two
 * per writable segment, one per read-only one; three per partition of a manager with its lock).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log, LogtoolError } from '../../src/api.js';
import { CachedFile, FileDescriptorCache } from '../../src/engine/segment/fd-cache.js';
import { realIO } from '../../src/engine/io.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { cliPath, engineEntry, ensureBuilt } from '../helpers/build.js';
import { run } from '../helpers/cli.js';
import { markCleanShutdown, writeManySegments } from '../helpers/many-segments.js';

const SEGMENTS = Number(process.env.LOGTOOL_FD_SEGMENTS ?? 2_000);
const PARTITIONS = Number(process.env.LOGTOOL_FD_PARTITIONS ?? 400);
const ULIMIT = 1024;
/** Timeouts grow with the sizes (the sizes take minutes on a loaded 2-core machine). */
const SCALE = Math.max(1, SEGMENTS / 2_000, PARTITIONS / 400);

/** Runs `node script args…` (or the CLI) under `ulimit -n 1024`. */
const limited = (args: string[]) =>
  run('bash', ['-c', `ulimit -n ${ULIMIT} && exec "$NODE" "$@"`, 'limited', ...args], { NODE: process.execPath }, 120_000 * SCALE);

const CHILD = (engineUrl: string) => `
import { Log, LogManager } from ${JSON.stringify(engineUrl)};
const [what, target, countText] = process.argv.slice(2);
const count = Number(countText);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
if (what === 'partition') {
  let log = Log.open(target, { config: { flushMode: 'sync' }, rememberConfig: false });
  const before = log.nextOffset;
  for (let i = 0; i < 10; i++) await log.append([{ value: Buffer.from('appended ' + i) }]);
  let records = 0;
  let expected = 0;
  for (const r of log.read({ fromOffset: 0 })) {
    if (r.offset !== expected) throw new Error('offset ' + r.offset + ', expected ' + expected);
    expected++;
    records++;
  }
  const segments = log.segments.length;
  await log.close();
  log = Log.open(target, { rememberConfig: false });
  const after = log.nextOffset;
  await log.close();
  out({ before, records, segments, after });
} else if (what === 'manager') {
  const m = await LogManager.open([target], { config: { flushMode: 'async' } });
  let appended = 0;
  for (const log of m.allLogs()) {
    await log.append([{ value: Buffer.from('x') }]);
    appended++;
  }
  await m.close();
  out({ appended });
}
`;

let root: string;
let partition: string;
let logDir: string;
let child: string;

beforeAll(async () => {
  ensureBuilt();
  root = makeTempDir('logtool-fd-limit-');
  child = path.join(root, 'child.mjs');
  fs.writeFileSync(child, CHILD(pathToFileURL(engineEntry).href));
  // One partition of SEGMENTS segments in its own log directory.
  partition = path.join(root, 'big', 'topic-0');
  await writeManySegments(partition, SEGMENTS);
  markCleanShutdown(path.dirname(partition), new Map([['topic-0', SEGMENTS]]));
  // A log directory of PARTITIONS partitions of one segment each.
  logDir = path.join(root, 'many');
  const ends = new Map<string, number>();
  for (let p = 0; p < PARTITIONS; p++) {
    await writeManySegments(path.join(logDir, `t-${p}`), 1);
    ends.set(`t-${p}`, 1);
  }
  markCleanShutdown(logDir, ends);
}, 300_000 * SCALE);
afterAll(removeTempDirs);

describe(`under ulimit -n ${ULIMIT}`, () => {
  it(`a partition of ${SEGMENTS} segments opens writable, appends, reads from offset 0 to the end, closes and reopens`, async () => {
    const r = await limited([child, 'partition', partition]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { before: number; records: number; segments: number; after: number };
    expect(out).toMatchObject({ before: SEGMENTS, records: SEGMENTS + 10, after: SEGMENTS + 10 });
    expect(out.segments).toBeGreaterThanOrEqual(SEGMENTS); // the old records' timestamps may roll (segment.ms)
  }, 180_000 * SCALE);

  it('verify, recover and read of that partition succeed', async () => {
    const verify = await limited([cliPath, 'verify', partition, '--json']);
    expect(verify.stderr).toBe('');
    expect(verify.code).toBe(0);
    const recover = await limited([cliPath, 'recover', partition, '--full', '--json']);
    expect(recover.code, recover.stderr).toBe(0);
    const read = await limited([cliPath, 'read', partition, '--json']);
    expect(read.code, read.stderr).toBe(0);
    const lines = read.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(SEGMENTS);
    expect(JSON.parse(lines[0]!).offset).toBe(0);
  }, 180_000 * SCALE);

  it(`a LogManager over ${PARTITIONS} partitions opens writable, appends to each, closes`, async () => {
    const r = await limited([child, 'manager', logDir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ appended: PARTITIONS });
  }, 180_000 * SCALE);
});

const openFds = () => fs.readdirSync('/proc/self/fd').length;

describe('descriptors held', () => {
  it(`after reading a whole ${SEGMENTS}-segment log the process holds at most maxOpenFiles + a few`, async () => {
    const maxOpenFiles = 40;
    const baseline = openFds();
    const log = Log.open(partition, { readOnly: true, maxOpenFiles });
    expect(log.segments.length).toBeGreaterThanOrEqual(SEGMENTS);
    let records = 0;
    for (const r of log.read({ fromOffset: 0 })) {
      expect(r.offset).toBe(records);
      records++;
    }
    expect(records).toBe(log.nextOffset);
    const held = openFds() - baseline;
    expect(held).toBeLessThanOrEqual(maxOpenFiles + 2);
    await log.close();
    expect(openFds() - baseline).toBeLessThanOrEqual(2);
  }, 120_000 * SCALE);

  it('the cache closes the least recently used descriptor and never a pinned one; an invalidated pin closes at unpin', () => {
    const dir = makeTempDir('logtool-fd-lru-');
    const files = ['a', 'b', 'c'].map((n) => {
      const f = path.join(dir, n);
      fs.writeFileSync(f, n);
      return f;
    });
    const cache = new FileDescriptorCache(realIO, 2);
    const baseline = openFds();
    const pinned = cache.pin(files[0]!, 'r');
    cache.entry(files[1]!, 'r');
    cache.entry(files[2]!, 'r'); // evicts b (a is pinned)
    expect(cache.openFiles).toBe(2);
    expect(openFds() - baseline).toBe(2);
    expect(cache.entry(files[1]!, 'r').opened).toBe(true); // b was closed; now c goes
    expect(cache.entry(files[0]!, 'r')).toEqual({ fd: pinned, opened: false });
    cache.invalidate(files[0]!, 'r'); // pinned: leaves the cache, still open
    expect(cache.openFiles).toBe(2);
    cache.unpin(files[0]!, 'r', pinned);
    expect(cache.openFiles).toBe(1);
    cache.closeAll();
    expect(openFds()).toBe(baseline);
    expect(() => new FileDescriptorCache(realIO, 0)).toThrow(/maxOpenFiles must be a positive integer/);
  });

  it('repeated use of the most recent file keeps recency exact; a renamed file is used under its new name', () => {
    const dir = makeTempDir('logtool-fd-recent-');
    const [a, b, c] = ['a', 'b', 'c'].map((n) => {
      const f = path.join(dir, n);
      fs.writeFileSync(f, n);
      return f;
    }) as [string, string, string];
    const cache = new FileDescriptorCache(realIO, 2);
    cache.entry(a, 'r');
    cache.entry(b, 'r');
    cache.entry(b, 'r'); // already the most recent
    cache.entry(a, 'r'); // now a is, b the least recent
    cache.entry(c, 'r'); // evicts b, not a
    expect(cache.entry(a, 'r').opened).toBe(false);
    expect(cache.entry(b, 'r').opened).toBe(true);
    cache.closeAll();
    // A CachedFile keeps its cache key: after a rename it must look up (and write) the new name.
    const file = new CachedFile(cache, a, 'r+');
    file.write(Buffer.from('A'), 0, 1, 0);
    const moved = path.join(dir, 'moved');
    file.renamed(moved);
    fs.renameSync(a, moved);
    fs.writeFileSync(a, 'x'); // a new file under the old name must not be written
    file.write(Buffer.from('M'), 0, 1, 1);
    file.close();
    expect(fs.readFileSync(moved, 'utf8')).toBe('AM');
    expect(fs.readFileSync(a, 'utf8')).toBe('x');
    expect(cache.openFiles).toBe(0);
    cache.closeAll();
  });

  it('a compaction swap and a retention deletion leave no cached descriptor of the old files: reads see the new segments', async () => {
    const dir = path.join(makeTempDir('logtool-fd-swap-'), 'topic-0');
    const log = Log.open(dir, { config: { segmentBytes: 300, cleanupPolicy: 'compact', flushMode: 'sync' }, maxOpenFiles: 6, rememberConfig: false });
    try {
      for (let i = 0; i < 40; i++) await log.append([{ key: Buffer.from(`k${i % 4}`), value: Buffer.from(`v${i}`) }]);
      // Every old file's descriptor enters the cache (the last ones stay in it).
      expect([...log.read({ fromOffset: 0 })].length).toBe(40);
      await log.compact({ deleteDelayMs: 0 });
      const show = (l: Log) => [...l.read({ fromOffset: 0 })].map((r) => `${r.offset}:${r.key!.toString()}=${r.value!.toString()}`);
      const after = show(log);
      expect(after.length).toBeLessThan(40);
      // What a fresh open of the files reads (its own descriptors).
      const fresh = Log.open(dir, { readOnly: true });
      expect(after).toEqual(show(fresh));
      await fresh.close();
      const retention = log.deleteRecordsBefore(log.activeSegment.baseOffset, { deleteDelayMs: 0 });
      expect(retention.deleted.length).toBeGreaterThan(0);
      expect([...log.read({ fromOffset: log.activeSegment.baseOffset })].map((r) => r.offset).at(-1)).toBe(39);
    } finally {
      await log.close();
    }
  });

  it('a reader whose evicted file was replaced since it opened gets an error naming it, not the new bytes', async () => {
    const dir = path.join(makeTempDir('logtool-fd-replaced-'), 'topic-0');
    await writeManySegments(dir, 6);
    const reader = Log.open(dir, { readOnly: true, maxOpenFiles: 2 });
    try {
      // Another process compacts segment 2 meanwhile: a new file takes its name.
      const victim = path.join(dir, '00000000000000000002.log');
      fs.copyFileSync(victim, `${victim}.new`);
      fs.renameSync(`${victim}.new`, victim);
      let error: unknown;
      try {
        for (const r of reader.read({ fromOffset: 0 })) expect(r.offset).toBeLessThan(2);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(LogtoolError);
      expect((error as LogtoolError).file).toBe(victim);
      expect((error as LogtoolError).message).toMatch(/the file was replaced since this read began/);
    } finally {
      await reader.close();
    }
  });
});
