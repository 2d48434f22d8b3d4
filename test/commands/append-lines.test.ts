/**
 * `append --lines`' batching without record objects (append-lines.ts): the values each batch gets
 * and where batches end — the end of each input chunk, --batch-records, max.message.bytes — as
 * the record path (readLines + BatchAppender) ends them, so the log is byte-identical; lines over
 * chunks (joined in a reused buffer, also when one joined chunk's tail starts the next join), CRLF,
 * a last line without an ending, a line too large for any batch.
 */
import { describe, expect, it } from 'vitest';
import { appendLines, type SliceSink } from '../../src/commands/append-lines.js';
import type { ValueSlices } from '../../src/api/format.js';

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
