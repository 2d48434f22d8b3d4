/**
 * `read --follow` (src/commands/read-follow.ts) beside a real writer: a child process (the built
 * engine) appends batches, rolling small segments, while `read --follow` runs in another child.
 * Every appended record must appear exactly once, in offset order; SIGINT ends it with exit 0;
 * --to-offset ends it by itself; a closed pipe ends it quietly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { cliPath, engineEntry, ensureBuilt } from '../helpers/build.js';
import { sh } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const env = { ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined, CI: '1' };

/**
 * Appends `batches` batches of 3 records (values "v<offset>") with a pause between them, then
 * (with `untilStdinEnds`) one record every 20 ms until its stdin closes. Segments roll every ~600 B.
 */
const WRITER_SOURCE = (engineUrl: string) => `
import { Log } from ${JSON.stringify(engineUrl)};
const [dir, batches, untilStdinEnds] = process.argv.slice(2);
const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 600 } });
let stop = false;
if (untilStdinEnds === 'yes') process.stdin.on('end', () => { stop = true; }).resume();
let next = log.nextOffset;
for (let b = 0; b < Number(batches); b++) {
  const records = [0, 1, 2].map((i) => ({ key: Buffer.from('k' + (next + i)), value: Buffer.from('v' + (next + i)) }));
  next += 3;
  await log.append(records);
  await new Promise((r) => setTimeout(r, 30));
}
while (untilStdinEnds === 'yes' && !stop) {
  await log.append([{ key: null, value: Buffer.from('v' + next++) }]);
  await new Promise((r) => setTimeout(r, 20));
}
await log.close();
process.stdout.write('done\\n');
`;

function writerScript(): string {
  const file = path.join(makeTempDir(), 'writer.mjs');
  fs.writeFileSync(file, WRITER_SOURCE(pathToFileURL(engineEntry).href));
  return file;
}

async function seededLog(records: number): Promise<string> {
  const dir = path.join(makeTempDir(), 'follow-0');
  const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 600 } });
  for (let i = 0; i < records; i++) await log.append([{ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`) }]);
  await log.close();
  return dir;
}

interface Child {
  proc: ChildProcess;
  stdout: string;
  stderr: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(args: string[], file = process.execPath): Child {
  const proc = spawn(file, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const child: Child = { proc, stdout: '', stderr: '', exit: new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal }))) };
  proc.stdout!.on('data', (d: Buffer) => (child.stdout += d.toString('utf8')));
  proc.stderr!.on('data', (d: Buffer) => (child.stderr += d.toString('utf8')));
  return child;
}

async function waitFor(cond: () => boolean, what: string, limitMs = 60_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const offsets = (stdout: string) => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { offset: number; value: string });

describe('read --follow beside a writer in another process', () => {
  it('prints every appended record once, in order, across rolled segments; SIGINT ends it with exit 0', async () => {
    const dir = await seededLog(4);
    const reader = start([cliPath, 'read', dir, '--follow', '--json']);
    await waitFor(() => offsets(reader.stdout).length === 4, 'the records already there');
    const writer = start([writerScript(), dir, '40', 'no']);
    await writer.exit;
    expect(writer.stdout).toBe('done\n');
    const total = 4 + 40 * 3;
    await waitFor(() => offsets(reader.stdout).length >= total, 'every appended record');
    reader.proc.kill('SIGINT');
    const end = await reader.exit;
    expect(end).toEqual({ code: 0, signal: null });
    expect(reader.stderr).toBe('');
    const got = offsets(reader.stdout);
    expect(got.map((r) => r.offset)).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(got.map((r) => r.value)).toEqual(Array.from({ length: total }, (_, i) => `v${i}`));
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.log')).length).toBeGreaterThan(3); // it followed into new segments
  }, 120_000);

  it('--from-offset and --to-offset still apply: it ends by itself at the range end, exit 0', async () => {
    const dir = await seededLog(3);
    const reader = start([cliPath, 'read', dir, '--follow', '--json', '--from-offset', '2', '--to-offset', '9']);
    await waitFor(() => offsets(reader.stdout).length === 1, 'the record already there');
    const writer = start([writerScript(), dir, '5', 'no']);
    const end = await reader.exit;
    await writer.exit;
    expect(end).toEqual({ code: 0, signal: null });
    expect(offsets(reader.stdout).map((r) => r.offset)).toEqual([2, 3, 4, 5, 6, 7, 8]);
  }, 120_000);

  it('a closed pipe ends it quietly (exit 0, nothing on stderr)', async () => {
    const dir = await seededLog(1);
    const writer = start([writerScript(), dir, '0', 'yes']);
    const r = await sh(`"$NODE" "$CLI" read ${JSON.stringify(dir)} --follow --from-offset 1 | head -n 2`);
    writer.proc.stdin!.end();
    await writer.exit;
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(2);
  }, 120_000);

  it('--follow with --batches is a usage error (exit 2)', async () => {
    const dir = await seededLog(1);
    const r = start([cliPath, 'read', dir, '--follow', '--batches']);
    expect((await r.exit).code).toBe(2);
    expect(r.stderr).toMatch(/--follow prints records/);
  });
});
