/**
 * LogManager recovery on worker threads (engine/logdir/pooled-load.ts, issue 12), run from dist/
 * (the worker entry is compiled JavaScript): a log directory of 300 partitions (1,000 with LOGTOOL_MANY_PARTITIONS=1000) left without the
 * clean-shutdown marker — torn tails, missing time indexes, recovery points at 0, at the end and
 * absent — opens with 1 and with 2 threads with identical logs, load reports, warnings and
 * progress, and closes to identical bytes, checkpoints and marker; a partition its recovery cannot
 * read fails the open naming its file, with 1 thread and with 2, without a hang.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineEntry, ensureBuilt } from '../../helpers/build.js';
import { makeTempDir, removeTempDirs } from '../../helpers/fixtures.js';
import { copiesOfPartition } from '../../helpers/logdirs.js';
import { configRecord, topicRecord, writeMetadataLog } from '../../helpers/metadata-records.js';

type Api = typeof import('../../../src/api.js');
let api: Api;

beforeAll(async () => {
  ensureBuilt();
  api = (await import(pathToFileURL(engineEntry).href)) as Api;
}, 240_000);
afterAll(() => removeTempDirs());

// 300 partitions by default (the suite's time budget); LOGTOOL_MANY_PARTITIONS=1000 for the size.
const PARTITIONS = Number(process.env.LOGTOOL_MANY_PARTITIONS ?? 300);
const TENTH = PARTITIONS / 10;

/** An unclean log directory of `n` small partitions (copies of one template, then varied). */
async function uncleanLogDir(n: number): Promise<string> {
  const logDir = path.join(makeTempDir('logtool-mgr-workers-'), 'data');
  const first = path.join(logDir, 'p-0');
  const log = api.Log.open(first, { config: { segmentBytes: 1024 } });
  for (let i = 0; i < 3; i++) await log.append([{ key: Buffer.from(`k${i}`), value: Buffer.from(`value ${i}`), timestamp: 1_700_000_000_000 + i }]);
  await log.close();
  const entries: string[] = [];
  for (const [i, dir] of copiesOfPartition(first, n).entries()) {
    if (i % 10 === 3) fs.appendFileSync(path.join(dir, '00000000000000000000.log'), Buffer.from('torn tail')); // cut by recovery
    if (i % 10 === 6) fs.rmSync(path.join(dir, '00000000000000000000.timeindex')); // recreated, with a warning
    if (i % 3 !== 2) entries.push(`p ${i} ${i % 3 === 0 ? 3 : 0}\n`); // recovery point at the end, at 0, or none
  }
  fs.writeFileSync(path.join(logDir, 'recovery-point-offset-checkpoint'), `0\n${entries.length}\n${entries.join('')}`);
  fs.rmSync(path.join(logDir, '.kafka_cleanshutdown'), { force: true });
  return logDir;
}

/** relative path → sha256 of every file; lost+found names lose their time suffix. */
function contentHashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p).replace(/\.\d{4}-\d\d-\d\dT[\d-]+Z$/, '.<time>')] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

interface Run {
  logs: unknown[];
  warnings: string[];
  progress: string[];
  onWorker: number;
  openMs: number;
}

async function openAndClose(logDir: string, threads: number): Promise<Run> {
  const rel = (s: string) => s.split(logDir).join('<logdir>').replace(/\.\d{4}-\d\d-\d\dT[\d-]+Z/g, '.<time>');
  const run: Run = { logs: [], warnings: [], progress: [], onWorker: 0, openMs: 0 };
  const t0 = performance.now();
  const m = await api.LogManager.open([logDir], {
    recoveryThreadsPerDataDir: threads,
    onWarning: (w) => run.warnings.push(rel(`${w.file}@${w.position ?? ''}: ${w.message}`)),
    onProgress: (p) => {
      run.progress.push(`${p.done}/${p.total} ${p.partition}`);
      if (p.recoveredOnWorker) run.onWorker++;
    },
  });
  run.openMs = performance.now() - t0;
  try {
    for (const l of m.allLogs()) run.logs.push(rel(JSON.stringify([path.basename(l.dir), l.logStartOffset, l.nextOffset, l.segments.length, l.loadReport])));
  } finally {
    await m.close();
  }
  return run;
}

describe('LogManager recovery on worker threads', () => {
  it(`${PARTITIONS} unclean partitions recover with 1 and with 2 threads to identical logs, reports, warnings, bytes, checkpoints and marker`, async () => {
    const template = await uncleanLogDir(PARTITIONS);
    const runs: Run[] = [];
    const trees: Record<string, string>[] = [];
    for (const threads of [1, 2]) {
      const logDir = path.join(makeTempDir(`logtool-mgr-workers-${threads}-`), 'data');
      fs.cpSync(template, logDir, { recursive: true });
      const run = await openAndClose(logDir, threads);
      console.log(`LogManager after an unclean shutdown, ${PARTITIONS} partitions, ${threads} thread(s): open ${run.openMs.toFixed(0)} ms`);
      runs.push(run);
      trees.push(contentHashes(logDir));
    }
    const [one, two] = runs as [Run, Run];
    expect(one.onWorker).toBe(0);
    expect(two.onWorker).toBe(PARTITIONS); // every partition was recovered on a worker
    expect(one.logs).toHaveLength(PARTITIONS);
    expect(two.logs).toEqual(one.logs);
    // A tenth with torn tails and a tenth missing time indexes were reported, in the same order.
    expect(one.warnings.filter((w) => w.includes('.log@')).length).toBeGreaterThanOrEqual(TENTH);
    expect(one.warnings.filter((w) => w.includes('.timeindex')).length).toBe(TENTH);
    expect(two.warnings).toEqual(one.warnings);
    expect(two.progress).toEqual(one.progress);
    expect(one.progress.at(-1)).toMatch(new RegExp(`^${PARTITIONS}/${PARTITIONS} `));
    // The same bytes on disk: segments, rebuilt indexes, lost+found, both checkpoints, the marker.
    expect(trees[1]).toEqual(trees[0]);
    expect(Object.keys(trees[0]!)).toContain('.kafka_cleanshutdown');
    expect(Object.keys(trees[0]!).filter((k) => k.includes('lost+found'))).toHaveLength(TENTH);
  }, 900_000);

  it("in a broker's directory a partition is recovered with its topic's configs from __cluster_metadata-0: the same rebuilt indexes with 1 and 2 threads", async () => {
    const template = path.join(makeTempDir('logtool-mgr-workers-broker-'), 'data');
    const first = path.join(template, 'dense-0');
    const log = api.Log.open(first, { config: { flushMode: 'async' } });
    for (let i = 0; i < 200; i++) await log.append([{ key: null, value: Buffer.alloc(200, i), timestamp: 1_700_000_000_000 + i }]);
    await log.close();
    copiesOfPartition(first, 4);
    await writeMetadataLog(path.join(template, '__cluster_metadata-0'), [topicRecord('dense', 1), configRecord(2, 'dense', 'index.interval.bytes', '512')]);
    fs.writeFileSync(path.join(template, 'meta.properties'), 'version=1\nnode.id=1\ncluster.id=abc\n');
    fs.rmSync(path.join(template, '.kafka_cleanshutdown'), { force: true });
    fs.writeFileSync(path.join(template, 'recovery-point-offset-checkpoint'), '0\n0\n'); // every segment recovered, its indexes rebuilt
    const indexes: Buffer[][] = [];
    for (const threads of [1, 2]) {
      const logDir = path.join(makeTempDir(`logtool-mgr-workers-broker-${threads}-`), 'data');
      fs.cpSync(template, logDir, { recursive: true });
      let onWorker = 0;
      const m = await api.LogManager.open([logDir], { recoveryThreadsPerDataDir: threads, schedule: false, onProgress: (p) => void (p.recoveredOnWorker && onWorker++) });
      expect(m.getLog('dense', 0)!.config.indexIntervalBytes).toBe(512);
      await m.close();
      expect(onWorker).toBe(threads === 1 ? 0 : 4);
      indexes.push([0, 1, 2, 3].map((p) => fs.readFileSync(path.join(logDir, `dense-${p}`, '00000000000000000000.index'))));
    }
    // An entry every 512 bytes, not every 4096 (the default): about 80 entries of 8 bytes.
    expect(indexes[0]![0]!.length).toBeGreaterThan(60 * 8);
    expect(indexes[1]).toEqual(indexes[0]);
  }, 300_000);

  it('a partition whose recovery cannot read a file fails the open, naming the file, with 1 and with 2 threads', async () => {
    const template = await uncleanLogDir(40);
    const messages: string[] = [];
    for (const threads of [1, 2]) {
      const logDir = path.join(makeTempDir(`logtool-mgr-workers-fail-${threads}-`), 'data');
      fs.cpSync(template, logDir, { recursive: true });
      const bad = path.join(logDir, 'p-17', '00000000000000000000.index');
      fs.rmSync(bad);
      fs.mkdirSync(bad); // not a file: reading it fails (also as root)
      let err: unknown;
      try {
        await (await api.LogManager.open([logDir], { recoveryThreadsPerDataDir: threads })).close();
      } catch (e) {
        err = e;
      }
      expect(err, `${threads} thread(s)`).toBeInstanceOf(api.LogtoolError);
      expect((err as InstanceType<Api['LogtoolError']>).file).toBe(bad);
      messages.push((err as Error).message.split(logDir).join('<logdir>'));
      // Every partition's lock was released: the directory opens again once the file is back.
      fs.rmdirSync(bad);
      const m = await api.LogManager.open([logDir], { recoveryThreadsPerDataDir: threads });
      expect(m.allLogs()).toHaveLength(40);
      await m.close();
    }
    expect(messages[1]).toBe(messages[0]);
  }, 300_000);
});
