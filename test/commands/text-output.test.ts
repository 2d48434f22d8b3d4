/**
 * Text output a terminal and a script can trust (issue 14), through the built CLI:
 *
 *  - keys, values and headers of any bytes, appended through the library, print as exactly one
 *    line per record from `read`, with no control byte but the column tabs, no DEL and no C1
 *    control, and the escapes name the exact bytes (a property test with fast-check);
 *  - `--json` is never escaped;
 *  - NO_COLOR turns colour off on a terminal, tables included (run under a pseudo-terminal with
 *    `script`), and FORCE_COLOR decides as chalk documents it;
 *  - under --json an error is one JSON object on stderr, never a plain line;
 *  - `help <unknown>` says the command is unknown (exit 2).
 */
import { execFile, spawnSync } from 'node:child_process';
import { isUtf8 } from 'node:buffer';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { escapeBytes } from '../../src/render/escape.js';
import { cliPath, ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { cli } from '../helpers/cli.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

/** Runs the built CLI with stdout as raw bytes (a UTF-8 decode would hide invalid output). */
function cliBytes(args: string[], env: Record<string, string | undefined> = { NO_COLOR: '1', FORCE_COLOR: undefined }): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [cliPath, ...args], { encoding: 'buffer', maxBuffer: 64 << 20, timeout: 200_000, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      if (err && code === -1) reject(err);
      else resolve({ code, stdout, stderr: stderr.toString('utf8') });
    });
  });
}

/** The inverse of escapeBytes: `\n \t \r \0 \\` and `\xNN` back to bytes. */
function unescape(text: string): Buffer {
  const parts: Buffer[] = [];
  const short: Record<string, number> = { n: 0x0a, t: 0x09, r: 0x0d, '0': 0x00, '\\': 0x5c };
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '\\') continue;
    parts.push(Buffer.from(text.slice(run, i), 'utf8'));
    const c = text[i + 1]!;
    if (c === 'x') {
      parts.push(Buffer.from([parseInt(text.slice(i + 2, i + 4), 16)]));
      i += 3;
    } else {
      if (!(c in short)) throw new Error(`unknown escape \\${c} in ${JSON.stringify(text)}`);
      parts.push(Buffer.from([short[c]!]));
      i += 1;
    }
    run = i + 1;
  }
  parts.push(Buffer.from(text.slice(run), 'utf8'));
  return Buffer.concat(parts);
}

// Bytes that try hard to break a line or reach the terminal: line breaks, tabs, NUL, backslashes,
// CSI and OSC sequences (7-bit and C1), DEL, invalid UTF-8, next to plain and non-ASCII text.
const NASTY = [
  '\n', '\r\n', '\r', '\t', '\0', '\\', '\\n', '\\x1b', '\x1b[31m', '\x1b[2J\x1b[H', '\x1b]0;title\x07', '\x1b[1A\x1b[K', '\x08', '\x0b', '\x0c', '\x7f', 'é', '✓', '😀', 'plain',
].map((s) => Buffer.from(s, 'utf8'));
NASTY.push(Buffer.from([0xc2, 0x9b, 0x33, 0x31, 0x6d]), Buffer.from([0xc2, 0x85]), Buffer.from([0x9b]), Buffer.from([0xff, 0xfe]), Buffer.from([0xe2, 0x82]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xc0, 0x8a]));

const bytesArb = fc
  .array(fc.oneof(fc.constantFrom(...NASTY), fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a))), { maxLength: 6 })
  .map((parts) => Buffer.concat(parts));
const nullable = fc.option(bytesArb, { nil: null, freq: 6 });
const headerKeyArb = fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('\n', 'a\tb', '\x1b[2J', '\u009b31m', 'k\\'));
const recordsArb = fc.array(
  fc.record({ key: nullable, value: nullable, headers: fc.array(fc.record({ key: headerKeyArb, value: nullable }), { maxLength: 3 }) }),
  { minLength: 1, maxLength: 25 },
);

describe('escapeBytes', () => {
  it.each([
    ['a\nb\tc\rd\0e\\f', 'a\\nb\\tc\\rd\\0e\\\\f'],
    ['\x1b[31mred\x07', '\\x1b[31mred\\x07'],
    ['del\x7f', 'del\\x7f'],
    ['\u009b31m', '\\xc2\\x9b31m'],
    ['héllo ✓', 'héllo ✓'],
  ])('%j → %j', (input, expected) => {
    expect(escapeBytes(Buffer.from(input, 'utf8'), true)).toBe(expected);
  });

  it('bytes that are not valid UTF-8 are \\xNN, valid characters around them stay', () => {
    expect(escapeBytes(Buffer.from([0x68, 0xc3, 0xa9, 0xff, 0xe2, 0x82, 0x5c]))).toBe('hé\\xff\\xe2\\x82\\\\');
    expect(escapeBytes(Buffer.from([0xed, 0xa0, 0x80, 0xc0, 0xaf]))).toBe('\\xed\\xa0\\x80\\xc0\\xaf'); // a surrogate, an overlong '/'
  });
});

describe('read (text)', () => {
  it('Control characters in keys and values never produce more than one line per record in text output', async () => {
    let run = 0;
    // Twenty random record lists, each one batch, in one partition read by one process: a `read`
    // per list proved nothing more than one over all of them and cost a process start each.
    await fc.assert(
      fc.asyncProperty(fc.array(recordsArb, { minLength: 20, maxLength: 20 }), async (lists) => {
        const dir = path.join(makeTempDir('logtool-text-'), `t${run++}-0`);
        const log = Log.open(dir, { rememberConfig: false });
        const records = lists.flat();
        try {
          let offset = 0;
          for (const list of lists) await log.append(list.map((r) => ({ ...r, timestamp: 1_700_000_000_000 + offset++ })));
        } finally {
          await log.close();
        }
        const r = await cliBytes(['read', dir]);
        expect(r.code).toBe(0);
        const out = r.stdout;
        expect(isUtf8(out)).toBe(true);
        expect(out.includes(0x1b)).toBe(false); // no ESC at all
        for (const b of out) expect(b >= 0x20 ? b !== 0x7f : b === 0x09 || b === 0x0a).toBe(true); // only column tabs and line ends
        const text = out.toString('utf8');
        expect(text).not.toMatch(/[\u0080-\u009f]/); // no C1 control
        expect(text.endsWith('\n')).toBe(true);
        const lines = text.slice(0, -1).split('\n');
        expect(lines).toHaveLength(records.length);
        lines.forEach((line, i) => {
          const rec = records[i]!;
          const cols = line.split('\t');
          // offset, timestamp, key, value (and headers): data tabs are escaped, so the columns are exact.
          expect(cols).toHaveLength(rec.headers.length > 0 ? 5 : 4);
          expect(cols[0]).toBe(String(i));
          for (const [col, bytes] of [[cols[2]!, rec.key], [cols[3]!, rec.value]] as const) {
            if (bytes === null) expect(col).toBe('null');
            else expect(unescape(col).equals(bytes)).toBe(true); // the escapes name the exact bytes
          }
        });
      }),
      { numRuns: 1 },
    );
  }, 180_000);

  it('--json is not escaped: the exact strings', async () => {
    const dir = path.join(makeTempDir('logtool-text-json-'), 't-0');
    const log = Log.open(dir, { rememberConfig: false });
    try {
      await log.append([{ key: Buffer.from('k\n\\'), value: Buffer.from('v\x1b[31m\t'), headers: [{ key: 'h\r', value: Buffer.from('\u009b') }] }]);
    } finally {
      await log.close();
    }
    const r = await cli('read', dir, '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ key: 'k\n\\', value: 'v\x1b[31m\t', headers: [{ key: 'h\r', value: '\u009b' }] });
    const text = await cli('read', dir);
    expect(text.stdout).toMatch(/^0\t\S+\tk\\n\\\\\tv\\x1b\[31m\\t\th\\r=\\xc2\\x9b\n$/);
  });
});

/**
 * Runs the built CLI on a pseudo-terminal (`script -qec`), so stdout and stderr are TTYs, with
 * FORCE_COLOR and NO_COLOR unset unless `env` sets them. Returns what the terminal received.
 */
function onTerminal(args: string[], env: Record<string, string> = {}): { code: number; output: string } {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const base: Record<string, string | undefined> = { ...process.env, TERM: 'xterm-256color' };
  delete base.FORCE_COLOR;
  delete base.NO_COLOR;
  const r = spawnSync('script', ['-qec', [process.execPath, cliPath, ...args].map(quote).join(' '), '/dev/null'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: 200_000,
    env: { ...base, ...env },
  });
  return { code: r.status ?? -1, output: r.stdout };
}

describe('colour', () => {
  let dir: string;
  beforeAll(async () => {
    dir = path.join(makeTempDir('logtool-colour-'), 't-0');
    const log = Log.open(dir, { rememberConfig: false });
    try {
      await log.append([{ key: Buffer.from('k'), value: Buffer.from('v') }]);
    } finally {
      await log.close();
    }
  });

  it('on a terminal a table has colour; with NO_COLOR=1 no ESC byte appears, tables included', () => {
    const coloured = onTerminal(['segments', dir]);
    expect(coloured.code).toBe(0);
    expect(coloured.output).toContain('┌'); // the table, so the output really was a terminal
    expect(coloured.output).toContain('\x1b[');
    const plain = onTerminal(['segments', dir], { NO_COLOR: '1' });
    expect(plain.code).toBe(0);
    expect(plain.output).toContain('┌');
    expect(plain.output).toMatch(/│ base offset │ bytes │/);
    expect(plain.output).not.toContain('\x1b');
    // Records and errors too.
    expect(onTerminal(['read', dir], { NO_COLOR: '1' }).output).not.toContain('\x1b');
    const err = onTerminal(['read', path.join(dir, 'missing')], { NO_COLOR: '1' });
    expect(err.code).toBe(1);
    expect(err.output).toMatch(/^error: /);
  });

  it('FORCE_COLOR as chalk documents: 0 turns colour off on a terminal, 1 turns it on in a pipe and wins over NO_COLOR', async () => {
    expect(onTerminal(['segments', dir], { FORCE_COLOR: '0' }).output).not.toContain('\x1b');
    const forced = await cliBytes(['read', dir], { NO_COLOR: undefined, FORCE_COLOR: '1' });
    expect(forced.stdout.toString()).toContain('\x1b[');
    const both = await cliBytes(['read', dir], { NO_COLOR: '1', FORCE_COLOR: '1' });
    expect(both.stdout.toString()).toContain('\x1b[');
    const piped = await cliBytes(['read', dir], { NO_COLOR: undefined, FORCE_COLOR: undefined });
    expect(piped.stdout.toString()).not.toContain('\x1b');
  });
});

describe('errors under --json', () => {
  const fields = ['kind', 'message', 'file', 'position', 'exitCode'];

  it('read <missing dir> --json: stderr is one JSON line with kind, message, file, position, exitCode; exit 1', async () => {
    const missing = path.join(makeTempDir('logtool-json-err-'), 'missing-0');
    const r = await cli('read', missing, '--json');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.endsWith('\n')).toBe(true);
    const lines = r.stderr.slice(0, -1).split('\n');
    expect(lines).toHaveLength(1);
    const { error } = JSON.parse(lines[0]!) as { error: Record<string, unknown> };
    expect(Object.keys(error)).toEqual(fields);
    expect(error).toEqual({ kind: 'not-found', message: 'no such directory', file: missing, position: null, exitCode: 1 });
    // Without --json: the text line, as before.
    const text = await cli('read', missing);
    expect(text.code).toBe(1);
    expect(text.stderr).toBe(`error: ${missing}: no such directory\n`);
  });

  it('usage errors, those commander finds included, are the JSON object too: no plain line, no usage hint', async () => {
    const dir = path.join(makeTempDir('logtool-json-usage-'), 't-0');
    for (const [args, message] of [
      [['read', dir, '--json', '--no-such-option'], "unknown option '--no-such-option'"],
      [['read', '--json'], "missing required argument 'dir'"],
      [['read', dir, '--json', '--encoding', 'latin1'], '--encoding must be utf8, base64 or hex, not "latin1"'],
    ] as const) {
      const r = await cli(...args);
      expect(r.code, r.stderr).toBe(2);
      const lines = r.stderr.split('\n').filter(Boolean);
      expect(lines, r.stderr).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toEqual({ error: { kind: 'usage', message, file: null, position: null, exitCode: 2 } });
    }
  });
});

describe('help', () => {
  it('help nosuchcommand: exit 2, says the command is unknown, prints no help', async () => {
    const r = await cli('help', 'nosuchcommand');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: unknown command 'nosuchcommand'\n/);
    expect(r.stderr).not.toContain('Usage:');
  });

  it('help, help <command> and help help still print help on stdout, exit 0', async () => {
    const [all, read, help] = await Promise.all([cli('help'), cli('help', 'read'), cli('help', 'help')]);
    for (const r of [all, read, help]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
    }
    expect(all.stdout).toMatch(/^Usage: logtool \[options\] \[command\]/);
    expect(all.stdout).toMatch(/\n {2}help \[command\] +display help for command\n/);
    expect(read.stdout).toMatch(/^Usage: logtool read \[options\] <dir>/);
    expect(help.stdout).toMatch(/^Usage: logtool help \[command\]/);
  });
});
