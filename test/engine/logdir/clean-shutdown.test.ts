/**
 * The clean-shutdown marker is per log directory (logdir/clean-shutdown.ts): it is written on close
 * only when every partition of the directory is consistent on disk, with the bytes found at open.
 * The sibling case runs a real child process that is SIGKILLed.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/api.js';
import { makeTempDir, removeTempDirs } from '../../helpers/fixtures.js';
import { builtEngineChild } from '../../helpers/build.js';

const MARKER = '.kafka_cleanshutdown';
const EPOCH_MARKER = '{"version":0,"brokerEpoch":42}';
const config = { segmentBytes: 2048, flushMode: 'sync' as const };

async function writeRecords(dir: string, n: number): Promise<void> {
  const log = Log.open(dir, { config });
  for (let i = 0; i < n; i++) await log.append([{ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`) }]);
  await log.close();
}

/** A log directory with partitions t-0 and t-1, closed cleanly, its marker holding a broker epoch. */
async function twoPartitions(): Promise<string> {
  const logDir = makeTempDir('logtool-marker-');
  await writeRecords(path.join(logDir, 't-0'), 30);
  await writeRecords(path.join(logDir, 't-1'), 30);
  expect(fs.existsSync(path.join(logDir, MARKER))).toBe(true);
  fs.writeFileSync(path.join(logDir, MARKER), EPOCH_MARKER);
  return logDir;
}

const CHILD = (engineUrl: string) => `
import { Log } from ${JSON.stringify(engineUrl)};
const log = Log.open(process.argv[2], { config: { flushMode: 'sync', segmentBytes: 2048 }, thoroughFlushIntervalMs: 3600000 });
for (let i = 0; i < 40; i++) await log.append([{ key: 'child' + i, value: 'x'.repeat(50) }]);
process.stdout.write('appended ' + log.nextOffset + '\\n');
setInterval(() => {}, 1000);
`;

let childScript: string;

beforeAll(() => {
  childScript = builtEngineChild('logtool-marker-child-', CHILD);
});
afterAll(() => removeTempDirs());

/** Runs the child on `dir` until it has appended, then SIGKILLs it. */
async function appendThenKill(dir: string): Promise<number> {
  const child = spawn(process.execPath, [childScript, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const next = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /appended (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`child exited ${code} before appending: ${err}`)));
  });
  const exited = new Promise((r) => child.on('exit', r));
  child.kill('SIGKILL');
  await exited;
  return next;
}

describe('the clean-shutdown marker of a log directory', () => {
  it('the sibling case: B appended to and SIGKILLed in another process while A is open; after A closes the marker is absent and B is recovered', async () => {
    const logDir = await twoPartitions();
    const a = Log.open(path.join(logDir, 't-0'), { config });
    expect(a.loadReport.cleanShutdown).toBe(true);
    expect(fs.existsSync(path.join(logDir, MARKER))).toBe(false); // deleted at open, as Kafka does
    await a.append([{ key: Buffer.from('a'), value: Buffer.from('more') }]);
    const bEnd = await appendThenKill(path.join(logDir, 't-1'));
    expect(bEnd).toBe(70);
    await a.close();
    expect(fs.existsSync(path.join(logDir, MARKER))).toBe(false);
    const b = Log.open(path.join(logDir, 't-1'), { config });
    try {
      expect(b.loadReport.markerFound).toBe(false);
      expect(b.loadReport.cleanShutdown).toBe(false);
      expect(b.loadReport.segmentsScanned).toBeGreaterThan(0);
      expect(b.nextOffset).toBe(70);
    } finally {
      await b.close();
    }
    // b found no marker and did not open t-0: it cannot vouch for the directory.
    expect(fs.existsSync(path.join(logDir, MARKER))).toBe(false);
  });

  it('two writers of one directory in one process: the second trusts the marker the first read, only the last close writes it, with the epoch bytes read at open', async () => {
    const logDir = await twoPartitions();
    const a = Log.open(path.join(logDir, 't-0'), { config });
    const b = Log.open(path.join(logDir, 't-1'), { config });
    expect(a.loadReport.cleanShutdown).toBe(true);
    expect(b.loadReport.cleanShutdown).toBe(true);
    expect(b.loadReport.segmentsScanned).toBe(0);
    await a.append([{ key: Buffer.from('a'), value: Buffer.from('more') }]);
    await a.close();
    expect(fs.existsSync(path.join(logDir, MARKER))).toBe(false); // b is still open
    await b.close();
    expect(fs.readFileSync(path.join(logDir, MARKER), 'utf8')).toBe(EPOCH_MARKER);
  });

  it('without a marker at open, repairing one partition never declares the directory clean; opening them all does, with an empty marker', async () => {
    const logDir = await twoPartitions();
    fs.unlinkSync(path.join(logDir, MARKER)); // as after a broker crash
    const cp = path.join(logDir, 'recovery-point-offset-checkpoint');
    fs.writeFileSync(cp, fs.readFileSync(cp, 'utf8').replace(/^t 1 30$/m, 't 1 10'));
    const a = Log.open(path.join(logDir, 't-0'), { config });
    await a.close();
    expect(fs.existsSync(path.join(logDir, MARKER))).toBe(false); // t-1 is not consistent, and a did not open it
    const b = Log.open(path.join(logDir, 't-1'), { config });
    expect(b.loadReport.cleanShutdown).toBe(false);
    await b.close();
    expect(fs.existsSync(path.join(logDir, MARKER))).toBe(false); // both consistent now, but b alone cannot vouch for t-0
    const both = [Log.open(path.join(logDir, 't-0'), { config }), Log.open(path.join(logDir, 't-1'), { config })];
    for (const l of both) await l.close();
    expect(fs.readFileSync(path.join(logDir, MARKER))).toEqual(Buffer.alloc(0)); // never an epoch logtool did not read
  });
});
