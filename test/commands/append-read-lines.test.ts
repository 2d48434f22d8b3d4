/**
 * `append`'s line splitter (readLines): each line is handed on as a view of the input chunk it
 * lies in, and only a line running across chunks is copied (issue 15, peak memory: it used to
 * join the carried bytes with the whole next chunk, copying all the input once more). LF and
 * CRLF endings, a CR and its LF in different chunks, a line over three chunks, a last line without
 * an ending.
 */
import { describe, expect, it } from 'vitest';
import { readLines } from '../../src/commands/append.js';

async function* chunksOf(parts: readonly string[]): AsyncGenerator<Buffer> {
  for (const p of parts) yield Buffer.from(p, 'utf8');
}

async function split(parts: readonly string[]): Promise<{ lines: string[]; views: boolean[]; pauses: number }> {
  const lines: string[] = [];
  const views: boolean[] = [];
  let pauses = 0;
  const chunks: Buffer[] = [];
  const source = (async function* () {
    for await (const c of chunksOf(parts)) {
      chunks.push(c);
      yield c;
    }
  })();
  await readLines(source, 'test', (line) => {
    lines.push(line.toString('utf8'));
    views.push(chunks.some((c) => c.buffer === line.buffer && line.byteOffset >= c.byteOffset && line.byteOffset + line.length <= c.byteOffset + c.length));
  }, async () => {
    pauses++;
  });
  return { lines, views, pauses };
}

describe('readLines', () => {
  it('hands lines within a chunk on as views of it, and joins only a line across chunks', async () => {
    const r = await split(['alpha\nbeta\r\ngam', 'ma\ndelta\nepsi', 'lon\r', '\nzeta\neta']);
    expect(r.lines).toEqual(['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta']);
    expect(r.views).toEqual([true, true, false, true, false, true, false]);
    expect(r.pauses).toBe(4);
  });

  it('joins a line over three chunks and keeps a multi-byte character split between them whole', async () => {
    const text = 'één-twee\n';
    const bytes = Buffer.from(text, 'utf8');
    const parts = [bytes.subarray(0, 1), bytes.subarray(1, 3), bytes.subarray(3)];
    const lines: string[] = [];
    await readLines((async function* () { yield* parts; })(), 'test', (l) => {
      lines.push(l.toString('utf8'));
    }, async () => undefined);
    expect(lines).toEqual(['één-twee']);
  });
});
