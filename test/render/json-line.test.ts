/**
 * read --json's lines built as strings (src/render/json-line.ts, recordJsonLine) are byte for byte
 * what JSON.stringify writes for the same record object, for every kind of key, value, header and
 * timestamp (issue 15: the NDJSON output must not change while its per-record garbage goes).
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll } from 'vitest';
import { Chalk } from 'chalk';
import { recordJsonLine, recordText, writeRecordJson, writeRecordText } from '../../src/commands/read.js';
import { bytesToText } from '../../src/commands/shared.js';
import { formatTimestamp } from '../../src/render/timestamp.js';
import { Output } from '../../src/render/output.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { bytesJsonText, jsonString } from '../../src/render/json-line.js';
import type { LogRecord } from '../../src/api/format.js';

afterAll(removeTempDirs);

const samples: (Buffer | null)[] = [
  null,
  Buffer.alloc(0),
  Buffer.from('plain ascii'),
  Buffer.from('quote " backslash \\ slash / tab \t nl \n nul \0 del \x7f'),
  Buffer.from('ünïcödé € 😀 \u2028 \u2029'),
  Buffer.from([0xff, 0xfe, 0x41]), // not UTF-8
  Buffer.from([0xed, 0xa0, 0x80]), // an encoded surrogate: not valid UTF-8
  Buffer.from([0x00, 0x1f, 0x20, 0x22, 0x5c]),
  Buffer.from('del \x7f c1 \u0085 \u009b nbsp \u00a0 \u00c2'),
  Buffer.from('c1 only \u0085, then \u00a0 \u00c2'),
  Buffer.from('del only \x7f'),
];

/** The object form read --json printed before (JSON.stringify of it is the reference). */
function expected(buf: Buffer | null, enc: 'utf8' | 'base64' | 'hex'): unknown {
  if (buf === null) return null;
  if (enc !== 'utf8') return buf.toString(enc);
  return Buffer.from(buf.toString('utf8'), 'utf8').equals(buf) ? buf.toString('utf8') : { base64: buf.toString('base64') };
}

describe('JSON lines built as strings', () => {
  it('bytesJsonText and jsonString write what JSON.stringify writes', () => {
    for (const enc of ['utf8', 'base64', 'hex'] as const) {
      for (const b of samples) expect(bytesJsonText(b, enc)).toBe(JSON.stringify(expected(b, enc)));
    }
    for (const s of ['', 'a', '"', '\\', '\u0000', '\u001f', ' ', '\ud800', 'x\udc00y', '😀', '\ud83d\ude00\ud800']) expect(jsonString(s)).toBe(JSON.stringify(s));
  });

  it('every byte JSON escapes, alone and between others, is escaped as JSON.stringify escapes it (written as bytes, not a string)', () => {
    for (let b = 0; b < 0x80; b++) {
      for (const buf of [Buffer.from([b]), Buffer.from([0x61, b, 0x62]), Buffer.from([b, b, 0xc3, 0xa9, b]), Buffer.concat([Buffer.alloc(70, 'x'), Buffer.from([b]), Buffer.alloc(70, 'y')])]) {
        expect(bytesJsonText(buf, 'utf8'), `byte ${b}`).toBe(JSON.stringify(buf.toString('utf8')));
      }
    }
  });

  it('recordJsonLine equals JSON.stringify of the record object, headers and int64 timestamps included', () => {
    const timestamps = [0, -1, 1796170886371, 2 ** 53 - 1, 2n ** 60n, -(2n ** 63n)];
    let n = 0;
    for (const enc of ['utf8', 'base64', 'hex'] as const) {
      for (const ts of timestamps) {
        for (let i = 0; i < samples.length; i++) {
          const headers = i % 3 === 0 ? [] : [{ key: 'h"\u0001\ud800', value: samples[(i + 1) % samples.length]! }, { key: 'k', value: samples[i]! }];
          const r = { offset: 1000 + i, timestamp: ts, key: samples[i]!, value: samples[samples.length - 1 - i]!, headers } as LogRecord;
          const tsJson = typeof ts === 'number' ? ts : ts.toString();
          const object = { offset: r.offset, timestamp: tsJson, key: expected(r.key, enc), value: expected(r.value, enc), headers: headers.map((h) => ({ key: h.key, value: expected(h.value, enc) })) };
          const stats = { nonUtf8: 0 };
          expect(recordJsonLine(r, enc, stats)).toBe(JSON.stringify(object));
          n++;
        }
      }
    }
    expect(n).toBe(3 * 6 * samples.length);
  });

  it('written into Output through a real pipe, lines of every size (past a chunk too) arrive as JSON.stringify writes them', async () => {
    const file = path.join(makeTempDir(), 'out.ndjson');
    const child = spawn('sh', ['-c', `cat > "${file}"`], { stdio: ['pipe', 'ignore', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const out = new Output(child.stdin as unknown as NodeJS.WriteStream);
    const expectedLines: string[] = [];
    const sizes = [0, 1, 100, 1000, 65_535, 65_536, 131_071, 131_072, 300_000];
    for (let i = 0; i < 3000; i++) {
      const size = i % 100 === 0 ? sizes[(i / 100) % sizes.length]! : (i * 37) % 2000;
      const value = Buffer.alloc(size, i % 7 === 0 ? 'é"' : 'v');
      const r = { offset: i, timestamp: 1_700_000_000_000 + i, key: samples[i % samples.length]!, value, headers: [] } as LogRecord;
      expectedLines.push(JSON.stringify({ offset: i, timestamp: r.timestamp, key: expected(r.key, 'utf8'), value: expected(value, 'utf8'), headers: [] }));
      writeRecordJson(out, r, 'utf8', { nonUtf8: 0 });
      if (out.endLine()) await out.flush();
    }
    await out.flush();
    child.stdin.end();
    expect(await exited).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${expectedLines.join('\n')}\n`);
  });

  it('text lines written as bytes into Output equal the escaped text, with and without colours', async () => {
    const file = path.join(makeTempDir(), 'out.txt');
    const child = spawn('sh', ['-c', `cat > "${file}"`], { stdio: ['pipe', 'ignore', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const out = new Output(child.stdin as unknown as NodeJS.WriteStream);
    const plain = new Chalk({ level: 0 });
    const coloured = new Chalk({ level: 1 });
    const expectedLines: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const key = samples[i % samples.length]!;
      const value = i % 50 === 0 ? Buffer.alloc(200_000 + i, 'w') : samples[(i * 3) % samples.length]!;
      const headers = i % 4 === 0 ? [{ key: 'h\n', value: samples[i % samples.length]! }] : [];
      const r = { offset: i, timestamp: 1_700_000_000_000 + i, key, value, headers } as LogRecord;
      const hs = headers.length ? `\t${headers.map((h) => `h\\n=${bytesToText(h.value, 'utf8')}`).join(',')}` : '';
      const line = `${i}\t${formatTimestamp(r.timestamp)}\t${bytesToText(key, 'utf8')}\t${bytesToText(value, 'utf8')}${hs}`;
      expectedLines.push(line);
      expect(recordText(r, 'utf8', { nonUtf8: 0 }, coloured)).toBe(`${coloured.cyan(String(i))}\t${coloured.dim(formatTimestamp(r.timestamp))}\t${coloured.green(bytesToText(key, 'utf8'))}\t${bytesToText(value, 'utf8')}${hs}`);
      const stats = { nonUtf8: 0 };
      const textStats = { nonUtf8: 0 };
      writeRecordText(out, r, 'utf8', stats, plain);
      bytesToText(key, 'utf8', textStats);
      bytesToText(value, 'utf8', textStats);
      for (const h of headers) bytesToText(h.value, 'utf8', textStats);
      // Keys and values that are not UTF-8 are counted once each, as bytesToText counts them (the warning's number).
      expect(stats.nonUtf8).toBe(textStats.nonUtf8);
      if (out.endLine()) await out.flush();
    }
    await out.flush();
    child.stdin.end();
    expect(await exited).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${expectedLines.join('\n')}\n`);
  });
});
