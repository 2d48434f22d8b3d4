/**
 * malloc-thresholds.ts: one untouched 8 MiB block, dropped once per process, makes glibc keep the
 * memory of freed 1 MiB buffers (its dynamic mmap and trim thresholds rise) instead of handing it
 * back to the kernel and faulting it in again. Measured in child processes with the real
 * allocator: minor page faults (process.resourceUsage) of the same churn of fresh 1 MiB buffers —
 * what Log.read does with its chunks — with and without the hint; and that the engine gives it.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { distDir, ensureBuilt } from '../helpers/build.js';
import { makeTempDir } from '../helpers/fixtures.js';

const glibc = process.platform === 'linux' && Boolean((process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime);
const hintModule = pathToFileURL(path.join(distDir, 'engine', 'malloc-thresholds.js')).href;
const logModule = pathToFileURL(path.join(distDir, 'engine', 'log', 'log.js')).href;

/**
 * 256 fresh 1 MiB buffers, each filled (as a read fills its chunk), eight alive at a time, a
 * collection after every eight: the minor page faults they cost, after the hint (HINT=1) or not.
 */
const CHURN = `
if (process.env.HINT === '1') (await import(process.env.HINT_MODULE)).keepFreedMemoryInProcess();
gc(); gc();
const warm = [];
for (let i = 0; i < 16; i++) warm.push(Buffer.allocUnsafe(1 << 20).fill(i));
warm.length = 0; gc();
const before = process.resourceUsage().minorPageFault;
let alive = [];
for (let i = 0; i < 256; i++) {
  alive.push(Buffer.allocUnsafe(1 << 20).fill(i & 0xff));
  if (alive.length === 8) { alive = []; gc(); }
}
process.stdout.write(String(process.resourceUsage().minorPageFault - before));
`;

/** Whether the hint was given before and after a Log.open and read in a fresh process. */
const HINT_GIVEN = `
const { freedMemoryHintGiven } = await import(process.env.HINT_MODULE);
const { Log } = await import(process.env.LOG_MODULE);
const before = freedMemoryHintGiven();
const log = Log.open(process.env.LOG_DIR, { readOnly: true });
const records = [...log.read()].length;
await log.close();
process.stdout.write(JSON.stringify({ before, after: freedMemoryHintGiven(), records }));
`;

function child(script: string, env: Record<string, string>): string {
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

describe.skipIf(!glibc)('keepFreedMemoryInProcess (glibc)', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('freed 1 MiB buffers are reused, not faulted in again', () => {
    const without = Number(child(CHURN, { HINT: '0', HINT_MODULE: hintModule }));
    const withHint = Number(child(CHURN, { HINT: '1', HINT_MODULE: hintModule }));
    // 256 MiB filled: 65,536 pages. glibc trims its heap's top whenever more than twice 1 MiB lie
    // free there; here 4,000–8,000 of the pages fault again without the hint, ~130–400 with it.
    expect(without).toBeGreaterThan(2048);
    expect(withHint).toBeLessThan(without / 4);
  });

  it('the engine gives it: a child process has not before its first Log.open and has after', async () => {
    const dir = path.join(makeTempDir(), 'hint-0');
    const log = Log.open(dir, { config: { flushMode: 'async' } });
    await log.append([{ key: null, value: Buffer.from('x') }]);
    await log.close();
    const out = child(HINT_GIVEN, { HINT_MODULE: hintModule, LOG_MODULE: logModule, LOG_DIR: dir });
    expect(JSON.parse(out)).toEqual({ before: false, after: true, records: 1 });
  }, 60_000);
});
