/**
 * `verify` beside a live writer (issue 9, item 6): a child process (the built engine) appends
 * batches of varied sizes in a loop, rolling small segments with dense indexes, while verify runs
 * again and again on the same directory — in this process (the engine's read-only open and
 * verifyLog, many times) and through the built CLI. A reader bounds itself by what was committed
 * when it opened (the index entries counted before the `.log`'s size was taken; an incomplete
 * last batch while a writer holds the partition is one being written), so it must never report a
 * problem: the writer never writes a bad byte.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { verifyLog } from '../../src/engine/recovery/log-verifier.js';
import { engineEntry, ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

/**
 * The writer writes at least this much (so that it rolls many segments), then goes on with small,
 * slow batches until the test tells it to stop: how many reader runs fit beside it depends on the
 * machine's speed, so the readers decide when they have seen enough, not a byte count.
 */
const WRITER_TOTAL_BYTES = 40 * 1024 * 1024;
const MIN_IN_PROCESS_RUNS = 40;
/** Reader runs that must see the log grow since the previous run, while the writer writes. */
const MIN_GROWTH_RUNS = MIN_IN_PROCESS_RUNS / 2;
/** A limit on the whole loop, so that a reader that never sees growth fails instead of hanging. */
const MAX_READER_MS = 240_000;

const WRITER_SOURCE = (engineUrl: string): string => `
import { Log } from ${JSON.stringify(engineUrl)};
const [dir] = process.argv.slice(2);
const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 1024 * 1024, indexIntervalBytes: 64 }, rememberConfig: false });
let x = 12345;
const rnd = () => { x = (x * 1103515245 + 12345) >>> 0; return x / 4294967296; };
let n = 0;
let bytes = 0;
let stop = false;
process.stdin.on('data', () => { stop = true; });
process.stdin.on('end', () => { stop = true; });
process.stdout.write('ready\\n');
while (bytes < ${WRITER_TOTAL_BYTES} || !stop) {
  const tail = bytes >= ${WRITER_TOTAL_BYTES};
  // Mostly small batches (many index entries); sometimes one of up to 900 KB, whose write makes
  // the file grow page by page under a reader. Past the minimum, small batches only, slowly.
  const big = !tail && rnd() < 0.1;
  const valueBytes = big ? 4000 + Math.floor(rnd() * 900000) : 10 + Math.floor(rnd() * 200);
  const count = big ? 1 : 1 + Math.floor(rnd() * 8);
  const records = [];
  for (let i = 0; i < count; i++) records.push({ key: Buffer.from('k' + (n++ % 50)), value: Buffer.alloc(valueBytes, n & 0xff), timestamp: 1700000000000 + n });
  await log.append(records);
  bytes += count * (valueBytes + 20);
  await new Promise((r) => setTimeout(r, tail ? 5 : 1));
}
await log.close();
`;

/** Resolves once the writer has opened the log; `exited` resolves with its exit code. */
function startWriter(dir: string, script: string): Promise<{ child: ChildProcess; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [script, dir], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    void exited.then((code) => reject(new Error(`writer exited before it was ready (${code})`)));
    child.stdout!.once('data', () => resolve({ child, exited }));
  });
}

describe('verify beside a live writer', () => {
  it('never reports a problem while a writer in another process appends and rolls', async () => {
    const root = makeTempDir();
    const dir = path.join(root, 'live-0');
    const script = path.join(root, 'writer.mjs');
    fs.writeFileSync(script, WRITER_SOURCE(pathToFileURL(engineEntry).href));
    const writer = await startWriter(dir, script);
    let writing = true;
    const writerDone = writer.exited.then((code) => {
      writing = false;
      return code;
    });
    const problems: string[] = [];
    let sawGrowth = 0;
    let lastEnd = -1;
    let runs = 0;
    // The CLI, in child processes, for as long as the writer writes.
    const cliRuns = (async () => {
      let n = 0;
      while (writing) {
        const r = await cli('verify', dir, '--json');
        n++;
        if (r.code !== 0) problems.push(`cli verify exit ${r.code}: ${r.stdout.slice(0, 2000)} ${r.stderr.slice(0, 2000)}`);
      }
      return n;
    })();
    const startedMs = Date.now();
    let stopSent = false;
    try {
      while (writing || runs < MIN_IN_PROCESS_RUNS) {
        if (!stopSent && ((runs >= MIN_IN_PROCESS_RUNS && sawGrowth > MIN_GROWTH_RUNS) || Date.now() - startedMs > MAX_READER_MS)) {
          writer.child.stdin!.end('stop\n');
          stopSent = true;
        }
        const warnings: string[] = [];
        const log = await Log.openStable(dir, { onWarning: (w) => warnings.push(`${w.file}@${w.position}: ${w.message}`) });
        try {
          const r = verifyLog(log);
          for (const p of r.problems) problems.push(`run ${runs}: ${p.file}${p.position !== undefined ? ` at byte ${p.position}` : ` entry ${p.entry}`}: ${p.message}`);
          for (const w of warnings) problems.push(`run ${runs} (open): ${w}`);
          if (writing && r.logEndOffset > lastEnd) sawGrowth++;
          lastEnd = r.logEndOffset;
        } finally {
          await log.close();
        }
        runs++;
        // Let the writer (and the CLI runs' pipes) move between runs, so each run meets a new state.
        await new Promise((r) => setTimeout(r, 1));
      }
    } finally {
      writer.child.kill('SIGKILL');
    }
    expect(await writerDone).toBe(0);
    expect(await cliRuns).toBeGreaterThan(0);
    // The writer really was appending (and rolling) under the readers.
    expect(sawGrowth).toBeGreaterThan(MIN_GROWTH_RUNS);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.log')).length).toBeGreaterThan(3);
    expect(problems).toEqual([]);
  }, 600_000);
});
