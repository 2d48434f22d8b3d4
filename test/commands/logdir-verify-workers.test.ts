/**
 * `verify` over a log directory on worker threads (logdir-runner.ts, partition-jobs.ts; issue 12):
 * over 1,000 partitions — some with a torn tail (a problem, with a warning on stderr), one whose
 * check cannot read a file (failed) — `--threads 1` and `--threads 2` print the same NDJSON, the
 * same text and the same stderr, and exit 1, without a hang; nothing is changed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { copiesOfPartition, parseRun, treeStamps, type PartitionLine } from '../helpers/logdirs.js';

beforeAll(() => ensureBuilt(), 240_000);
afterAll(removeTempDirs);

/** A cleanly closed log directory of `n` partitions (copies of one); every 50th torn, p-17 unreadable. */
async function logDirOf(n: number): Promise<string> {
  const logDir = path.join(makeTempDir('logtool-verify-workers-'), 'data');
  const first = path.join(logDir, 't-0');
  const log = Log.open(first, { config: { segmentBytes: 1024 } });
  for (let i = 0; i < 20; i++) await log.append([{ key: Buffer.from(`k${i}`), value: Buffer.alloc(64, i), timestamp: 1_700_000_000_000 + i }]);
  await log.close();
  const lastLog = fs.readdirSync(first).filter((f) => f.endsWith('.log')).at(-1)!;
  for (const [i, dir] of copiesOfPartition(first, n).entries()) if (i % 50 === 7) fs.appendFileSync(path.join(dir, lastLog), Buffer.from('torn'));
  const bad = path.join(logDir, 't-17', '00000000000000000000.index');
  fs.rmSync(bad);
  fs.mkdirSync(bad); // not a file: reading it fails, also as root
  return logDir;
}

// 300 partitions by default (the suite's time budget); LOGTOOL_MANY_PARTITIONS=1000 for the size.
const PARTITIONS = Number(process.env.LOGTOOL_MANY_PARTITIONS ?? 300);

describe('verify over a log directory on worker threads', () => {
  it(`${PARTITIONS} partitions: --threads 1 and 2 print the same NDJSON, text and stderr; exit 1 for the unreadable one; nothing changes`, async () => {
    const logDir = await logDirOf(PARTITIONS);
    const before = treeStamps(logDir);
    const runs = [];
    for (const threads of ['1', '2']) {
      const t0 = performance.now();
      const json = await cli('verify', logDir, '--deep', '--json', '--threads', threads);
      const ms = performance.now() - t0;
      const text = await cli('verify', logDir, '--threads', threads);
      console.log(`verify --deep --json over ${PARTITIONS} partitions, --threads ${threads}: ${ms.toFixed(0)} ms`);
      runs.push({ json, text });
    }
    const [one, two] = runs as [(typeof runs)[0], (typeof runs)[0]];
    expect(one.json.code, one.json.stderr).toBe(1);
    expect(two.json.code).toBe(1);
    expect(two.json.stdout).toEqual(one.json.stdout);
    expect(two.json.stderr).toEqual(one.json.stderr);
    expect(two.text.code).toBe(1);
    expect(two.text.stdout).toEqual(one.text.stdout);
    expect(two.text.stderr).toEqual(one.text.stderr);
    const { lines, summary } = parseRun<PartitionLine>(one.json.stdout);
    expect(lines).toHaveLength(PARTITIONS);
    const torn = Math.ceil((PARTITIONS - 7) / 50); // every 50th partition from t-7 has a torn tail
    expect(summary).toMatchObject({ partitions: PARTITIONS, failed: 1, problems: torn, exitCode: 1 });
    const failed = lines.find((l) => l.outcome === 'failed')!;
    expect(path.basename(failed.dir)).toBe('t-17');
    expect(failed.error!.file).toBe(path.join(logDir, 't-17', '00000000000000000000.index'));
    expect(one.json.stderr.match(/warning: .*trailing bytes/g)).toHaveLength(torn);
    expect(treeStamps(logDir)).toEqual(before);
  }, 600_000);
});
