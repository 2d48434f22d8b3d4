/**
 * `append --lines`' batching without record objects (append-lines.ts): the values each batch gets
 * and where batches end — the end of each input chunk, --batch-records, max.message.bytes — as
 * the record path (splitLines + BatchAppender) ends them, so the log is byte-identical; lines over
 * chunks (joined in a reused buffer, also when one joined chunk's tail starts the next join), CRLF,
 * a last line without an ending, a line too large for any batch; and stdin read into one reused
 * buffer (stdinChunks) through the built CLI: a line written in pieces, and a non-blocking stdin,
 * from a socket and from a pipe (whose waiting bytes are read without the thread pool),
 * for --lines and NDJSON.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendLines, type SliceSink } from '../../src/commands/append-lines.js';
import type { ValueSlices } from '../../src/api/format.js';
import { Log } from '../../src/api.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { cliPath, ensureBuilt } from '../helpers/build.js';
import { sh } from '../helpers/cli.js';

beforeAll(ensureBuilt);
afterAll(removeTempDirs);

/** A sink keeping each batch's values as strings, read when given (the slices are reused). */
function collect(batchRecords = 1000, maxBatchBytes = 1_000_000): SliceSink & { batches: string[][]; timestamps: (number | undefined)[] } {
  const batches: string[][] = [];
  const timestamps: (number | undefined)[] = [];
  return {
    batches,
    timestamps,
    batchRecords,
    maxBatchBytes,
    async appendSlices(s: ValueSlices) {
      if (s.count === 0) return;
      batches.push(Array.from({ length: s.count }, (_, i) => s.buf.toString('utf8', s.starts[i]!, s.ends[i]!)));
      timestamps.push(s.timestampMs);
    },
  };
}

async function* chunks(parts: readonly (string | Buffer)[]): AsyncGenerator<Buffer | string> {
  yield* parts;
}

describe('appendLines', () => {
  it('ends a batch at the end of each chunk that ends a line, joining lines across chunks', async () => {
    const sink = collect();
    await appendLines(chunks(['alpha\nbeta\r\ngam', 'ma\ndelta\nepsi', 'lon\r', '\nzeta\neta']), 'test', sink, 42);
    expect(sink.batches).toEqual([['alpha', 'beta'], ['gamma', 'delta'], ['epsilon', 'zeta'], ['eta']]);
    expect(sink.timestamps).toEqual([42, 42, 42, 42]);
  });

  it('keeps lines right when each chunk is joined with the tail of the joined one before it', async () => {
    const sink = collect();
    await appendLines(chunks(['a1\na', '2\nbb', 'b3\ncccc', 'c4\n\r\n', 'last\r']), 'test', sink, undefined);
    expect(sink.batches).toEqual([['a1'], ['a2'], ['bbb3'], ['ccccc4', ''], ['last']]);
  });

  it('joins a line longer than the reused buffer, and a multi-byte character split between chunks', async () => {
    const long = 'x'.repeat(1_500_000);
    const e = Buffer.from('é');
    const sink = collect(1000, 2_000_000);
    await appendLines(chunks([long.slice(0, 700_000), long.slice(700_000), '\nz', Buffer.concat([Buffer.from('q'), e.subarray(0, 1)]), Buffer.concat([e.subarray(1), Buffer.from('\n')])]), 'test', sink, 1);
    expect(sink.batches.map((b) => b.map((v) => (v.length > 100 ? v.length : v)))).toEqual([[1_500_000], ['zqé']]);
  });

  it('ends batches at --batch-records and before max.message.bytes, as BatchAppender does', async () => {
    const byCount = collect(2);
    await appendLines(chunks(['a\nb\nc\nd\ne\n']), 'test', byCount, 1);
    expect(byCount.batches).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    // Each 3-byte record counts 3 + 31 bytes; a batch 61 more: two fit under 129, not three.
    const byBytes = collect(1000, 129);
    await appendLines(chunks(['aaa\nbbb\nccc\n']), 'test', byBytes, 1);
    expect(byBytes.batches).toEqual([['aaa', 'bbb'], ['ccc']]);
    const one = collect(1, 129);
    await appendLines(chunks(['aaa\nbbb\nccc\n']), 'test', one, 1);
    expect(one.batches).toEqual([['aaa'], ['bbb'], ['ccc']]);
  });

  it('refuses a line no batch can hold, after appending the batches before it', async () => {
    const sink = collect(1, 129);
    await expect(appendLines(chunks(['ok\n', `${'x'.repeat(40)}\n`]), 'test', sink, 1)).rejects.toThrow(/a record of about 71 bytes does not fit max.message.bytes \(129\)/);
    expect(sink.batches).toEqual([['ok']]);
  });

  it('names the input when reading it fails', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from('a\n');
      throw Object.assign(new Error('boom'), { code: 'EIO' });
    }
    const sink = collect();
    await expect(appendLines(failing(), 'in.txt', sink, 1)).rejects.toThrow(/cannot read input: EIO/);
    expect(sink.batches).toEqual([['a']]);
  });
});

/** Runs the CLI's `append --lines` (or `append` with `args`; through `wrapper`, a command given the node command line, when given), writing `pieces` to its stdin with pauses between them. */
async function appendInPieces(pieces: string[], wrapper: string[] = [], args: string[] = ['--lines']): Promise<{ code: number | null; err: string; values: string[] }> {
  const dir = path.join(makeTempDir('logtool-lines-'), 't-0');
  const command = [...wrapper, process.execPath, cliPath, 'append', dir, ...args, '--flush', 'async'];
  const child = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'ignore', 'pipe'] });
  let err = '';
  child.stdin.on('error', () => undefined); // a CLI that failed early reports through its exit code
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (err += d));
  // The partition directory appears when the log is open, just before stdin is read: each piece then comes in a read of its own.
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  for (let waited = 0; !fs.existsSync(dir) && waited < 60_000; waited += 20) await pause(20);
  for (const p of pieces) {
    await pause(300);
    child.stdin.write(p);
  }
  await pause(300);
  child.stdin.end();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const log = Log.open(dir, { readOnly: true });
  const values = [...log.read()].map((r) => r.value!.toString('utf8'));
  await log.close();
  return { code, err, values };
}

describe('append --lines from stdin', () => {
  it('keeps a line written in pieces whole although each read reuses the buffer', async () => {
    const r = await appendInPieces(['ab', 'c\nde', 'f\ng', 'h']);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.values).toEqual(['abc', 'def', 'gh']);
  });

  it('reads a non-blocking stdin (set by a process it shares it with) through process.stdin', async () => {
    // perl (Debian's essential perl-base) sets O_NONBLOCK on the pipe and execs the CLI on it; a
    // Node.js parent cannot: libuv clears the flag on a child's stdio.
    const wrapper = ['perl', '-MFcntl', '-e', 'fcntl(STDIN, F_SETFL, fcntl(STDIN, F_GETFL, 0) | O_NONBLOCK) or die; exec @ARGV'];
    const r = await appendInPieces(['one\ntw', 'o\nthree\n'], wrapper);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.values).toEqual(['one', 'two', 'three']);
  });

  it('reads a pipe (not a socket): bytes waiting without the thread pool, a quiet writer waited for, also when stdin was made non-blocking', async () => {
    // The CLI's stdin is cat's pipe (a spawned child's own stdin is a socket); the wrapper says so on stderr if it is not.
    const viaPipe = ['sh', '-c', 'cat | { test -p /dev/stdin || echo "stdin is not a pipe" >&2; exec "$@"; }', 'sh'];
    const r = await appendInPieces(['ab', 'c\nde', 'f\ng', 'h'], viaPipe);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.values).toEqual(['abc', 'def', 'gh']);
    const nonBlocking = [...viaPipe, 'perl', '-MFcntl', '-e', 'fcntl(STDIN, F_SETFL, fcntl(STDIN, F_GETFL, 0) | O_NONBLOCK) or die; exec @ARGV'];
    const b = await appendInPieces(['one\ntw', 'o\nthree\n'], nonBlocking);
    expect([b.code, b.err, b.values]).toEqual([0, '', ['one', 'two', 'three']]);
  });

  it('takes every line of a large input from a pipe that is full while append works', async () => {
    const dir = path.join(makeTempDir('logtool-lines-'), 't-0');
    const input = path.join(path.dirname(dir), 'in.txt');
    const lines = Array.from({ length: 60_000 }, (_, i) => `line ${i} ${'x'.repeat(i % 300)}`);
    fs.writeFileSync(input, `${lines.join('\n')}\n`);
    const r = await sh(`cat "${input}" | { test -p /dev/stdin || echo "stdin is not a pipe" >&2; "$NODE" "$CLI" append "${dir}" --lines --flush async --json; }`);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const acks = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { count: number });
    expect(acks.reduce((n, a) => n + a.count, 0)).toBe(lines.length);
    const log = Log.open(dir, { readOnly: true });
    const values = [...log.read()].map((v) => v.value!.toString('utf8'));
    await log.close();
    expect(values).toEqual(lines);
  });

  it('appends NDJSON read into the same reused buffer: records taken as views of a chunk are encoded before the next read', async () => {
    const pieces = ['{"value":"ab', 'c"}\r\n{"key":"k","value":"d', 'ef"}\n{"value":"gh"}\n{"value":"ij"}', '\n{"value":"k\\u006c"}\n{"value":"mn"}'];
    const r = await appendInPieces(pieces, [], ['--encoding', 'utf8']);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.values).toEqual(['abc', 'def', 'gh', 'ij', 'kl', 'mn']);
    const nonBlocking = ['perl', '-MFcntl', '-e', 'fcntl(STDIN, F_SETFL, fcntl(STDIN, F_GETFL, 0) | O_NONBLOCK) or die; exec @ARGV'];
    const b = await appendInPieces(['{"value":"YQ=="}\n{"value":"Y', 'g=="}\n'], nonBlocking, ['--encoding', 'base64']);
    expect([b.code, b.err, b.values]).toEqual([0, '', ['a', 'b']]);
  });
});
