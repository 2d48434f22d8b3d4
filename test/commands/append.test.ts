/**
 * `logtool append` through the built CLI: --json acknowledgement lines per batch, stdin streamed
 * (an acknowledgement arrives before stdin ends), the NDJSON round trip `read --json | append`,
 * the --flush modes and what each acknowledges, exit codes, and a closed pipe (`read | head -1`)
 * ending quietly with exit 0.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { cliPath, ensureBuilt } from '../helpers/build.js';

beforeAll(ensureBuilt);
afterAll(removeTempDirs);

const partition = (name = 't-0'): string => path.join(makeTempDir('logtool-append-'), name);

function cli(args: string[], input?: string): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [cliPath, ...args], { input, encoding: 'utf8', timeout: 200_000, env: { ...process.env, NO_COLOR: '1' } });
}

function sh(script: string): SpawnSyncReturns<string> {
  return spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 200_000, env: { ...process.env, LOGTOOL: `${process.execPath} ${cliPath}`, NO_COLOR: '1' } });
}

const jsonLines = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

function readAll(dir: string): { offset: number; key: string | null; value: string | null }[] {
  const log = Log.open(dir, { readOnly: true });
  try {
    return [...log.read()].map((r) => ({ offset: r.offset, key: r.key?.toString() ?? null, value: r.value?.toString() ?? null }));
  } finally {
    void log.close();
  }
}

describe('append --json', () => {
  it('prints one acknowledgement line per batch, in offset order', () => {
    const dir = partition();
    const r = cli(['append', dir, '--lines', '--json', '--batch-records', '2'], 'a\nb\nc\nd\ne\n');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(jsonLines(r.stdout)).toEqual([
      { baseOffset: 0, lastOffset: 1, count: 2, status: 'flushed' },
      { baseOffset: 2, lastOffset: 3, count: 2, status: 'flushed' },
      { baseOffset: 4, lastOffset: 4, count: 1, status: 'flushed' },
    ]);
    expect(readAll(dir).map((x) => x.value)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('a single record from flags is one batch; without --json nothing is printed', () => {
    const dir = partition();
    const r = cli(['append', dir, '--key', 'k1', '--value', 'hello', '--header', 'h=v']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    const again = cli(['append', dir, '--value', 'second', '--json']);
    expect(jsonLines(again.stdout)).toEqual([{ baseOffset: 1, lastOffset: 1, count: 1, status: 'flushed' }]);
    expect(readAll(dir)).toEqual([
      { offset: 0, key: 'k1', value: 'hello' },
      { offset: 1, key: null, value: 'second' },
    ]);
  });
});

describe('append from a stream', () => {
  it('appends stdin --lines as they arrive: an acknowledgement comes before stdin ends', async () => {
    const dir = partition();
    const child = spawn(process.execPath, [cliPath, 'append', dir, '--lines', '--json'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (err += d));
    const waitForLines = (n: number): Promise<void> =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (out.split('\n').filter(Boolean).length >= n) {
            child.stdout.off('data', onData);
            resolve();
          }
        };
        const onData = (d: string): void => {
          out += d;
          check();
        };
        child.stdout.on('data', onData);
        child.once('close', () => reject(new Error(`append exited early: ${err}`)));
        check();
      });
    child.stdin.write('first\n');
    await waitForLines(1);
    expect(jsonLines(out)).toEqual([{ baseOffset: 0, lastOffset: 0, count: 1, status: 'flushed' }]);
    child.stdin.write('second\nthird\n');
    await waitForLines(2);
    child.stdin.end('fourth'); // no trailing newline: still a record
    const code = await new Promise<number | null>((resolve) => {
      child.stdout.on('data', (d: string) => (out += d));
      child.on('close', resolve);
    });
    expect(err).toBe('');
    expect(code).toBe(0);
    // Contiguous acknowledgements covering offsets 0..3 (how lines group into batches depends on how the pipe delivers them).
    const acks = jsonLines(out) as { baseOffset: number; lastOffset: number; count: number; status: string }[];
    let next = 0;
    for (const a of acks) {
      expect(a.baseOffset).toBe(next);
      expect(a.count).toBe(a.lastOffset - a.baseOffset + 1);
      expect(a.status).toBe('flushed');
      next = a.lastOffset + 1;
    }
    expect(next).toBe(4);
    expect(readAll(dir).map((x) => x.value)).toEqual(['first', 'second', 'third', 'fourth']);
  });

  it('round-trips NDJSON: read --json | append reproduces keys, values, headers and timestamps', () => {
    const src = partition('src-0');
    const log = Log.open(src);
    const records = [
      { key: Buffer.from('k1'), value: Buffer.from('plain text'), headers: [{ key: 'h1', value: Buffer.from('v1') }, { key: 'nullh', value: null }], timestamp: 1_700_000_000_000 },
      { key: null, value: Buffer.from([0xff, 0xfe, 0x00, 0x80]), timestamp: 1_700_000_000_001 },
      { key: Buffer.from('tomb'), value: null, timestamp: 1_700_000_000_002 },
      { key: Buffer.from(''), value: Buffer.from(''), timestamp: 1_700_000_000_003 },
      { key: Buffer.from('ünïcødé ✓'), value: Buffer.from('{"json":"inside"}\n'), timestamp: 1_600_000_000_000 },
    ];
    return (async () => {
      await log.append(records.slice(0, 2));
      await log.append(records.slice(2));
      await log.close();
      const dst = path.join(path.dirname(src), 'dst-0');
      const r = sh(`set -o pipefail; $LOGTOOL read ${src} --json | $LOGTOOL append ${dst} --json`);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(jsonLines(r.stdout).map((a) => a.count)).toEqual([5]);
      const a = cli(['read', src, '--json']);
      const b = cli(['read', dst, '--json']);
      expect(a.status).toBe(0);
      expect(b.stdout).toBe(a.stdout);
      expect(jsonLines(a.stdout)).toHaveLength(5);
      // Bytes that are not UTF-8 travel as {"base64": …} and come back identical.
      const again = Log.open(dst, { readOnly: true });
      const got = [...again.read()];
      await again.close();
      expect(Buffer.compare(got[1]!.value!, records[1]!.value!)).toBe(0);
      expect(got[2]!.value).toBeNull();
      expect(got[0]!.headers[1]).toEqual({ key: 'nullh', value: null });
      expect(got.map((g) => g.timestamp)).toEqual(records.map((x) => x.timestamp));
    })();
  });
  it('a character split across two input chunks (64 KiB reads of --input) stays whole, in --lines and NDJSON', () => {
    // 'é' is two bytes; 65,535 ASCII bytes before it put its bytes on either side of the first 64 KiB read.
    const pad = 'a'.repeat(65535);
    for (const [flags, line, next, expected] of [
      [['--lines'], `${pad}é`, 'next', `${pad}é`],
      [[], `{"value":"${pad.slice(10)}é"}`, '{"value":"next"}', `${pad.slice(10)}é`],
    ] as const) {
      const dir = partition();
      const input = path.join(path.dirname(dir), 'input.txt');
      fs.writeFileSync(input, `${line}\n${next}\n`);
      expect(Buffer.from(line)[65535]).toBe(0xc3); // the first byte of 'é' ends the first read
      const w = cli(['append', dir, ...flags, '--input', input]);
      expect(w.status, w.stderr).toBe(0);
      const r = cli(['read', dir, '--json', '--max-records', '1']);
      expect((jsonLines(r.stdout)[0] as { value: string }).value === expected, flags.join(' ')).toBe(true);
    }
  });
});

describe('append --flush', () => {
  const input = Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n') + '\n';
  it.each([
    ['sync', [], 'flushed'],
    ['sync', ['--ack-before-sync'], 'committed'],
    ['sync', ['--no-flush-when-queue-empty', '--max-wait-ms', '1', '--max-group-records', '25'], 'flushed'],
    ['async', [], 'committed'],
    ['async', ['--flush-ms', '5', '--flush-messages', '3'], 'committed'],
    ['buffered', [], 'written'],
    ['buffered', ['--commit-interval-ms', '1', '--commit-bytes', '64'], 'written'],
  ] as const)('--flush %s %j acknowledges %s; everything is on disk after exit', (mode, extra, status) => {
    const dir = partition();
    const r = cli(['append', dir, '--lines', '--json', '--batch-records', '10', '--flush', mode, ...extra, '--stats'], input);
    expect(r.status).toBe(0);
    const acks = jsonLines(r.stdout);
    expect(acks).toHaveLength(5);
    expect(acks.every((a) => a.status === status)).toBe(true);
    expect(acks.map((a) => a.baseOffset)).toEqual([0, 10, 20, 30, 40]);
    expect(r.stderr).toMatch(/^positions: written 50 \(segment 0 @ \d+\), committed \d+ .*flushed \d+ .*fsyncs \d+/);
    expect(readAll(dir)).toHaveLength(50);
    // Closed cleanly: recovery point = log end, marker written; flush knobs are not remembered.
    const parent = path.dirname(dir);
    expect(fs.readFileSync(path.join(parent, 'recovery-point-offset-checkpoint'), 'utf8')).toBe('0\n1\nt 0 50\n');
    expect(fs.existsSync(path.join(parent, '.kafka_cleanshutdown'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'logtool.properties'))).toBe(false);
  });
});

describe('append exit codes', () => {
  it('usage errors exit 2 with one line on stderr and no stack trace', () => {
    const dir = partition();
    const cases: [string[], string | undefined, RegExp][] = [
      [['append', dir, '--flush', 'bogus', '--value', 'x'], undefined, /bogus/],
      [['append', dir, '--batch-records', '0', '--value', 'x'], undefined, /batch-records/],
      [['append', dir, '--sync-timeout-ms', 'soon', '--value', 'x'], undefined, /sync-timeout-ms/],
      [['append', path.join(path.dirname(dir), 'not_a_partition'), '--value', 'x'], undefined, /topic>-<partition/],
      [['append', dir], '{"value": "ok"}\nnot json\n', /stdin line 2: not valid JSON/],
      [['append', dir], '{"key": "only a key"}\n', /missing "value"/],
      [['append', dir, '--value', 'x', '--lines'], undefined, /do not combine/],
    ];
    for (const [args, input, message] of cases) {
      const r = cli(args, input);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('a record larger than max.message.bytes exits 3; a held lock exits 1', async () => {
    const dir = partition();
    const big = cli(['append', dir, '--max-message-bytes', '200', '--value', 'x'.repeat(500)]);
    expect(big.status).toBe(3);
    expect(big.stderr).toMatch(/max.message.bytes/);
    // Another writer holds the partition: a second append cannot take the lock.
    const holder = spawn(process.execPath, [cliPath, 'append', dir, '--lines', '--json'], { stdio: ['pipe', 'pipe', 'pipe'] });
    holder.stdin.write('held\n');
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    const locked = cli(['append', dir, '--value', 'y']);
    expect(locked.status).toBe(1);
    expect(locked.stderr).toMatch(/lock/);
    holder.stdin.end();
    expect(await new Promise((r) => holder.on('close', r))).toBe(0);
  });
});

describe('a closed pipe', () => {
  it('read | head -1 ends quietly with exit 0 and no stack trace', async () => {
    const dir = partition();
    const log = Log.open(dir, { config: { flushMode: 'async' }, rememberConfig: false });
    const value = Buffer.alloc(200, 0x61);
    for (let i = 0; i < 40; i++) await log.append(Array.from({ length: 1000 }, () => ({ key: null, value })));
    await log.close();
    for (const fmt of ['', '--json']) {
      const r = sh(`$LOGTOOL read ${dir} ${fmt} | head -1; echo "rc=\${PIPESTATUS[0]}" >&2`);
      expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(1);
      expect(r.stderr.trim()).toBe('rc=0');
    }
  });
});
