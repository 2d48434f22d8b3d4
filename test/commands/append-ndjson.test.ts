/**
 * `append`'s byte-level NDJSON parser (append-ndjson.ts, issue 15): wherever it takes a line, the
 * record is exactly the one JSON.parse's path (parseNdjson) makes of it; every line it is not sure
 * of is left to that path (undefined), so errors and unusual shapes stay as they were.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseNdjsonLine } from '../../src/commands/append-ndjson.js';
import { parseNdjson } from '../../src/commands/append.js';
import type { Encoding } from '../../src/commands/shared.js';

/** What JSON.parse's path makes of a line, or the error message it throws. */
function viaJsonParse(line: Buffer, enc: Encoding): unknown {
  try {
    return parseNdjson(line.toString('utf8'), enc, 'stdin line 1');
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

/** The fast path's record, which must be what JSON.parse's path makes of the same line. */
function takenAlike(text: string | Buffer, enc: Encoding): boolean {
  const line = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const fast = parseNdjsonLine(line, enc);
  if (fast === undefined) return false;
  expect(fast, `${line.toString('utf8')} (${enc})`).toEqual(viaJsonParse(line, enc));
  return true;
}

describe('parseNdjsonLine', () => {
  it('takes the lines `read --json` prints, exactly as JSON.parse would', () => {
    const taken = [
      '{"key":null,"value":"aGVsbG8=","headers":[]}',
      '{"offset":0,"timestamp":1700000000000,"key":"azE=","value":"dmFsdWU","headers":[]}',
      '{"offset":12,"timestamp":-1,"key":"","value":"","headers":[]}',
      '{"value":null}',
      '{"value":"QUJD", "key" : "QQ==" , "timestamp":0 ,"headers":[ ]}',
      '{"value":"_-8A","timestamp":999999999999999}',
      '{"value":"+/8A","headers":null,"timestamp":null,"offset":null}\t ',
    ];
    for (const line of taken) expect(takenAlike(line, 'base64'), line).toBe(true);
    expect(takenAlike('{"key":"ünïcødé ✓","value":"{~}\x7f","headers":[]}', 'utf8')).toBe(true);
    expect(takenAlike('{"key":"k","value":"plain text","timestamp":-42}', 'utf8')).toBe(true);
    expect(takenAlike('{"key":"00ff","value":"DEADbeef"}', 'hex')).toBe(true);
  });

  it('leaves every other line to JSON.parse, which gives the record or the error it always gave', () => {
    const left: [string, Encoding][] = [
      ['', 'utf8'],
      ['   ', 'utf8'],
      [' {"value":"x"}', 'utf8'],
      ['\ufeff{"value":"x"}', 'utf8'],
      ['{}', 'utf8'],
      ['{"key":"k"}', 'utf8'],
      ['{"value":"a\\"b"}', 'utf8'],
      ['{"value":"tab\tinside"}', 'utf8'],
      ['{"value":{"base64":"AAE="}}', 'utf8'],
      ['{"value":"x","headers":[{"key":"h","value":"v"}]}', 'utf8'],
      ['{"value":"x","value":"y"}', 'utf8'],
      ['{"value":"x","extra":1}', 'utf8'],
      ['{"value":"x","timestamp":"5"}', 'utf8'],
      ['{"value":"x","timestamp":1.0}', 'utf8'],
      ['{"value":"x","timestamp":1e3}', 'utf8'],
      ['{"value":"x","timestamp":-0}', 'utf8'],
      ['{"value":"x","timestamp":007}', 'utf8'],
      ['{"value":"x","timestamp":9007199254740993}', 'utf8'],
      ['{"value":"x","timestamp":-}', 'utf8'],
      ['{"value":"x"} trailing', 'utf8'],
      ['{"value":"x",}', 'utf8'],
      ['{"value":"x"', 'utf8'],
      ['{"value":nul}', 'utf8'],
      ['{"value":true}', 'utf8'],
      ['{"value":12}', 'utf8'],
      ['{"key":[],"value":"x"}', 'utf8'],
      ['{"value":"!!!!"}', 'base64'],
      ['{"value":"A"}', 'base64'],
      ['{"value":"AAAAA"}', 'base64'],
      ['{"value":"AA="}', 'base64'],
      ['{"value":"A==="}', 'base64'],
      ['{"value":"AAAA=="}', 'base64'],
      ['{"value":"AA=A"}', 'base64'],
      ['{"value":"abc"}', 'hex'],
      ['{"value":"abzz"}', 'hex'],
    ];
    for (const [line, enc] of left) expect(parseNdjsonLine(Buffer.from(line, 'utf8'), enc), `${line} (${enc})`).toBeUndefined();
    // Bytes that are not valid UTF-8 in a utf8 string: JSON.parse's path (which replaces them with U+FFFD).
    const invalid = Buffer.concat([Buffer.from('{"value":"a'), Buffer.from([0xff, 0xc3]), Buffer.from('"}')]);
    expect(parseNdjsonLine(invalid, 'utf8')).toBeUndefined();
  });

  it('reads a line given as a range of a larger buffer exactly as the same bytes alone, whatever follows the range', () => {
    // splitLines hands lines on as ranges: every cut of these lines, with the rest of the line
    // (which would complete it) after the range and another line before it, parses as the cut alone.
    const lines: [string, Encoding][] = [
      ['{"offset":0,"timestamp":1700000000000,"key":"azE=","value":"dmFsdWU","headers":[]}', 'base64'],
      ['{"value":null , "key" : "00ff","timestamp":-42}', 'hex'],
      ['{"key":"k","value":"plain text","headers":[ ]}', 'utf8'],
    ];
    const before = Buffer.from('{"value":"QUJD"}\n');
    for (const [text, enc] of lines) {
      const line = Buffer.from(text, 'utf8');
      const buf = Buffer.concat([before, line]);
      for (let cut = 0; cut <= line.length; cut++) {
        const alone = parseNdjsonLine(Buffer.from(line.subarray(0, cut)), enc);
        expect(parseNdjsonLine(buf, enc, before.length, before.length + cut), `${text.slice(0, cut)} (${enc})`).toEqual(alone);
      }
      expect(parseNdjsonLine(buf, enc, before.length, buf.length)).toBeDefined();
    }
  });

  it('decodes base64 as Buffer.from does, both alphabets, padded or not, whatever the last group’s spare bits', () => {
    for (let i = 0; i < 2000; i++) {
      const bytes = randomBytes(i % 40);
      let text = bytes.toString(i % 2 ? 'base64' : 'base64url');
      if (i % 3 === 0) text = text.replace(/=+$/, '');
      const data = text.replace(/=+$/, '');
      if (i % 5 === 0 && data.length % 4 >= 2) {
        // A last group whose spare bits are not zero: Node ignores them, so must the parser.
        text = `${data.slice(0, -1)}${data.endsWith('z') ? 'y' : 'z'}${text.slice(data.length)}`;
      }
      const line = Buffer.from(JSON.stringify({ key: null, value: text, headers: [] }));
      expect(takenAlike(line, 'base64'), text).toBe(true);
      expect(takenAlike(line, 'utf8'), text).toBe(true);
      takenAlike(line, 'hex');
    }
  });
});
