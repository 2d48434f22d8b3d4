/**
 * LogManager (engine/logdir/log-manager.ts): every broker log directory of the corpus opens as a
 * whole, read-only and unchanged; 1,000 partitions load with 1 and 2 threads alike and close with
 * the marker; hostile topic names create nothing; a partition in two directories is refused;
 * new partitions go where the fewest are; deleted partitions use Kafka's `-delete` form.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, LogManager, LogtoolError } from '../../../src/api.js';
import { fixturePath, makeTempDir, removeTempDirs, requireFixtures, segmentCases, treeSnapshot } from '../../helpers/fixtures.js';
import { copiesOfPartition } from '../../helpers/logdirs.js';

afterAll(() => removeTempDirs());

const isPartitionName = (n: string) => /^[a-zA-Z0-9._-]+-(0|[1-9]\d{0,8})$/.test(n) && n !== '__cluster_metadata-0';

/** Directories under `root` (itself included) that hold at least one partition directory. */
function logDirsUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    const subdirs = fs.readdirSync(d, { withFileTypes: true }).filter((e) => e.isDirectory());
    if (subdirs.some((e) => isPartitionName(e.name))) out.push(d);
    for (const e of subdirs) if (!/^[a-zA-Z0-9._-]+-\d+$/.test(e.name)) walk(path.join(d, e.name));
  };
  walk(root);
  return out;
}

const value = (i: number) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`) });

describe.runIf(requireFixtures(import.meta.url))('every broker log directory of the corpus', () => {
  it('opens as a whole read-only: every partition, as the single-partition open sees it, and nothing changes', async () => {
    let dirs = 0;
    for (const c of segmentCases()) {
      for (const src of logDirsUnder(fixturePath(c.case))) {
        const copy = path.join(makeTempDir('logtool-mgr-fixture-'), path.basename(src));
        fs.cpSync(src, copy, { recursive: true });
        const before = treeSnapshot(copy);
        const m = await LogManager.open([copy], { readOnly: true });
        try {
          const names = m.allLogs().map((l) => path.basename(l.dir));
          const expected = fs.readdirSync(copy).filter((n) => isPartitionName(n) && fs.statSync(path.join(copy, n)).isDirectory());
          expect(names.sort(), `${c.case}: ${src}`).toEqual(expected.sort());
          for (const log of m.allLogs()) {
            const single = Log.open(log.dir, { readOnly: true });
            expect([log.logStartOffset, log.nextOffset, log.segments.length], log.dir).toEqual([single.logStartOffset, single.nextOffset, single.segments.length]);
            await single.close();
          }
        } finally {
          await m.close();
        }
        expect(treeSnapshot(copy), src).toEqual(before);
        dirs++;
      }
    }
    expect(dirs).toBeGreaterThan(0);
  }, 600_000);
});

/** A log directory of `n` tiny partitions (copies of one), unclean: no marker. */
async function manyPartitions(n: number): Promise<string> {
  const logDir = makeTempDir('logtool-mgr-many-');
  const first = path.join(logDir, 'p-0');
  const log = Log.open(first, { config: { segmentBytes: 1024 } });
  for (let i = 0; i < 3; i++) await log.append([value(i)]);
  await log.close();
  copiesOfPartition(first, n);
  // Half the partitions checkpointed at their end, half at 0 (recovered from the start).
  const entries = Array.from({ length: n }, (_, i) => `p ${i} ${i % 2 === 0 ? 3 : 0}\n`);
  fs.writeFileSync(path.join(logDir, 'recovery-point-offset-checkpoint'), `0\n${n}\n${entries.join('')}`);
  fs.rmSync(path.join(logDir, '.kafka_cleanshutdown'), { force: true });
  return logDir;
}

describe('a log directory of many partitions', () => {
  it('1,000 partitions open read-only with 1 and with 2 threads with identical results, and close', async () => {
    const logDir = await manyPartitions(1000);
    const before = treeSnapshot(logDir);
    const results: unknown[] = [];
    for (const threads of [1, 2]) {
      const t0 = performance.now();
      const m = await LogManager.open([logDir], { readOnly: true, recoveryThreadsPerDataDir: threads });
      const openMs = performance.now() - t0;
      expect(m.allLogs()).toHaveLength(1000);
      results.push(m.allLogs().map((l) => [path.basename(l.dir), l.logStartOffset, l.nextOffset, l.segments.length, l.loadReport.recoveryPoint]));
      await m.close();
      console.log(`LogManager read-only, 1,000 partitions, ${threads} thread(s): open ${openMs.toFixed(0)} ms`);
    }
    expect(results[1]).toEqual(results[0]);
    expect(treeSnapshot(logDir)).toEqual(before);
  }, 600_000);

  // Writable: every partition is recovered (half from offset 0) and fsynced; 200 keep it quick on a busy disk.
  it('200 partitions recover with 1 and with 2 threads with identical results, report progress, and close with the marker', async () => {
    const results: unknown[] = [];
    for (const threads of [1, 2]) {
      const logDir = await manyPartitions(200);
      const progress: number[] = [];
      const t0 = performance.now();
      const m = await LogManager.open([logDir], { recoveryThreadsPerDataDir: threads, onProgress: (p) => progress.push(p.done) });
      const openMs = performance.now() - t0;
      const logs = m.allLogs();
      expect(logs).toHaveLength(200);
      expect(progress).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
      results.push(logs.map((l) => [path.basename(l.dir), l.nextOffset, l.loadReport.segmentsScanned, l.loadReport.recoveryPoint, l.loadReport.cleanShutdown]));
      const t1 = performance.now();
      await m.close();
      console.log(`LogManager writable after an unclean shutdown, 200 partitions, ${threads} thread(s): open ${openMs.toFixed(0)} ms, close ${(performance.now() - t1).toFixed(0)} ms`);
      // Every partition was opened and closed consistent: the directory is clean again.
      expect(fs.existsSync(path.join(logDir, '.kafka_cleanshutdown'))).toBe(true);
      const cp = fs.readFileSync(path.join(logDir, 'recovery-point-offset-checkpoint'), 'utf8').trim().split('\n');
      expect(cp.slice(2).every((l) => l.endsWith(' 3'))).toBe(true);
    }
    expect(results[1]).toEqual(results[0]);
  }, 600_000);
});

describe('LogManager rules', () => {
  it('refuses hostile topic names with a usage error and creates nothing', async () => {
    const root = makeTempDir('logtool-mgr-hostile-');
    const logDir = path.join(root, 'data');
    const m = await LogManager.open([logDir]);
    try {
      const before = treeSnapshot(root);
      for (const topic of ['../x', '/etc/passwd', 'a/b', 'x'.repeat(300), '..', '.', '', 'a\u0000b', 'ü']) {
        let err: unknown;
        try {
          m.getOrCreateLog(topic, 0);
        } catch (e) {
          err = e;
        }
        expect(err, topic).toBeInstanceOf(LogtoolError);
        expect((err as LogtoolError).exitCode, topic).toBe(2);
        expect(treeSnapshot(root), topic).toEqual(before);
      }
      expect(() => m.getOrCreateLog('ok', -1)).toThrow(/invalid partition number/);
      expect(m.getOrCreateLog('x'.repeat(249), 0).dir).toBe(path.join(logDir, `${'x'.repeat(249)}-0`));
    } finally {
      await m.close();
    }
  });

  it('a partition found in two log directories is an error naming both', async () => {
    const [a, b] = [makeTempDir('logtool-mgr-a-'), makeTempDir('logtool-mgr-b-')];
    for (const d of [a, b]) {
      const log = Log.open(path.join(d, 't-3'));
      await log.append([value(0)]);
      await log.close();
    }
    await expect(LogManager.open([a, b], { readOnly: true })).rejects.toThrow(`partition t-3 is in two log directories: ${path.join(a, 't-3')} and ${path.join(b, 't-3')}`);
  });

  it('puts a new partition in the log directory holding the fewest partitions (the first on a tie)', async () => {
    const [a, b] = [makeTempDir('logtool-mgr-a-'), makeTempDir('logtool-mgr-b-')];
    for (const p of ['t-0', 't-1']) {
      const log = Log.open(path.join(a, p));
      await log.append([value(0)]);
      await log.close();
    }
    const m = await LogManager.open([a, b]);
    try {
      expect(path.dirname(m.getOrCreateLog('n', 0).dir)).toBe(b);
      expect(path.dirname(m.getOrCreateLog('n', 1).dir)).toBe(b);
      expect(path.dirname(m.getOrCreateLog('n', 2).dir)).toBe(a); // 2 and 2: the first
      expect(m.getOrCreateLog('t', 0).dir).toBe(path.join(a, 't-0')); // an existing one is returned
    } finally {
      await m.close();
    }
  });

  it("deletePartition renames to Kafka's -delete form, drops its checkpoint entries and removes it after the delay", async () => {
    const logDir = makeTempDir('logtool-mgr-del-');
    const m = await LogManager.open([logDir], { fileDeleteDelayMs: 3_600_000 });
    let doomed: string;
    try {
      await m.getOrCreateLog('t', 0).append([value(0)]);
      await m.getOrCreateLog('t', 1).append([value(0)]);
      await m.getLog('t', 0)!.flush();
      doomed = await m.deletePartition('t', 0);
      expect(path.basename(doomed)).toMatch(/^t-0\.[0-9a-f]{32}-delete$/);
      expect(fs.existsSync(doomed)).toBe(true);
      expect(fs.existsSync(path.join(logDir, 't-0'))).toBe(false);
      expect(m.getLog('t', 0)).toBeUndefined();
      expect(fs.readFileSync(path.join(logDir, 'recovery-point-offset-checkpoint'), 'utf8')).not.toMatch(/^t 0 /m);
    } finally {
      await m.close();
    }
    expect(fs.existsSync(doomed)).toBe(false); // close removes what waits for the delay
  });

  it('a -delete directory a crash left is removed by the next writable open of a logtool directory, left in a broker\'s and by readers', async () => {
    const own = makeTempDir('logtool-mgr-crash-');
    const broker = makeTempDir('logtool-mgr-broker-');
    fs.writeFileSync(path.join(broker, 'meta.properties'), 'version=1\nnode.id=1\n');
    const name = 't-0.0123456789abcdef0123456789abcdef-delete';
    for (const d of [own, broker]) {
      const log = Log.open(path.join(d, d === own ? 't-1' : 'u-1'));
      await log.append([value(0)]);
      await log.close();
      fs.mkdirSync(path.join(d, name));
      fs.writeFileSync(path.join(d, name, '00000000000000000000.log'), 'x');
    }
    await (await LogManager.open([own], { readOnly: true })).close();
    expect(fs.existsSync(path.join(own, name))).toBe(true);
    await (await LogManager.open([own, broker])).close();
    expect(fs.existsSync(path.join(own, name))).toBe(false);
    expect(fs.existsSync(path.join(broker, name, '00000000000000000000.log'))).toBe(true);
  });

  it('refuses a partition directory given as a log directory, and an empty folder read-only', async () => {
    const logDir = makeTempDir('logtool-mgr-part-');
    const log = Log.open(path.join(logDir, 't-0'));
    await log.append([value(0)]);
    await log.close();
    await expect(LogManager.open([path.join(logDir, 't-0')], { readOnly: true })).rejects.toThrow(/this is a partition directory/);
    await expect(LogManager.open([makeTempDir('logtool-mgr-empty-')], { readOnly: true })).rejects.toThrow(/not a log directory/);
  });
});
