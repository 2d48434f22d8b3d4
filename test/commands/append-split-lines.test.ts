/**
 * `append`'s one line splitter (splitLines, append-lines.ts), which feeds both the plain --lines
 * path (value ranges) and the record path (NDJSON, --lines with records): each line is a range of
 * the input chunk it lies in, a line running across chunks a range of one buffer holding it and
 * the rest of its chunk; LF and CRLF endings, a CR and its LF in different chunks, a line over
 * three chunks, a last line without an ending, chunks reused by their source once the next is
 * asked for (stdinChunks does), a line over the limit.
 */
import { describe, expect, it } from 'vitest';
import { splitLines, MAX_LINE_BYTES } from '../../src/commands/append-lines.js';

async function split(parts: readonly (string | Buffer)[], reuse = false): Promise<{ lines: string[]; inChunk: boolean[]; pauses: number; lineNos: number[] }> {
  const lines: string[] = [];
  const inChunk: boolean[] = [];
  const lineNos: number[] = [];
  let pauses = 0;
  let current: Buffer | undefined;
  const shared = Buffer.alloc(64);
  const source = (async function* () {
    for (const p of parts) {
      const bytes = typeof p === 'string' ? Buffer.from(p, 'utf8') : p;
      // With `reuse`, every chunk is the same buffer overwritten, as stdinChunks yields them.
      current = reuse ? shared.subarray(0, bytes.copy(shared)) : bytes;
      yield current;
      if (reuse) shared.fill(0x21);
    }
  })();
  await splitLines(source, 'test', (buf, start, end, lineNo) => {
    lines.push(buf.toString('utf8', start, end));
    inChunk.push(buf === current);
    lineNos.push(lineNo);
    return undefined;
  }, async () => {
    pauses++;
  });
  return { lines, inChunk, pauses, lineNos };
}

describe('splitLines', () => {
  it('hands lines within a chunk on as ranges of it, and a line across chunks as a range of one joined buffer', async () => {
    const r = await split(['alpha\nbeta\r\ngam', 'ma\ndelta\nepsi', 'lon\r', '\nzeta\neta']);
    expect(r.lines).toEqual(['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta']);
    expect(r.inChunk).toEqual([true, true, false, false, false, false, false]);
    expect(r.lineNos).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(r.pauses).toBe(5); // each chunk, and the last line without an ending
  });

  it('keeps what it carries over when the source reuses its chunk buffer', async () => {
    const r = await split(['one\ntw', 'o\r', '\nthr', 'ee', '\n\nfour'], true);
    expect(r.lines).toEqual(['one', 'two', 'three', '', 'four']);
  });

  it('joins a line over three chunks and keeps a multi-byte character split between them whole', async () => {
    const bytes = Buffer.from('één-twee\n', 'utf8');
    const r = await split([bytes.subarray(0, 1), bytes.subarray(1, 3), bytes.subarray(3)]);
    expect(r.lines).toEqual(['één-twee']);
  });

  it('stops at a line longer than the limit, naming it', async () => {
    const big = Buffer.alloc(1 << 20, 0x78);
    async function* huge(): AsyncGenerator<Buffer> {
      yield Buffer.from('a\nb\n');
      for (let i = 0; i <= MAX_LINE_BYTES / big.length; i++) yield big;
    }
    const seen: string[] = [];
    await expect(splitLines(huge(), 'in.txt', (buf, start, end) => {
      seen.push(buf.toString('utf8', start, end));
      return undefined;
    }, async () => undefined)).rejects.toThrow(`in.txt line 3 is longer than ${MAX_LINE_BYTES} bytes`);
    expect(seen).toEqual(['a', 'b']);
  });
});
