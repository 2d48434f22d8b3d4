/**
 * snappy's output lives in memory V8 allocates: a loop of batches that never yields to the event
 * loop (awaited appends that resolve at once, a synchronous Log.read()) keeps its memory bounded.
 * The library's default output, an external buffer, is freed only by a finalizer on a later turn
 * of the event loop, so the same loop held every batch's output until it ended.
 */
import { describe, expect, it } from 'vitest';
import { snappyCompress, snappyDecompress } from '../../../src/engine/format/codecs/snappy.js';

describe('snappy codec memory', () => {
  it('compresses and decompresses 300 MB of batches in one synchronous loop within a bounded RSS', () => {
    const batch = Buffer.alloc(100 * 1024);
    for (let i = 0; i < batch.length; i++) batch[i] = (i * 7 + (i >> 5)) & 0xff;
    const compressed = snappyCompress(batch);
    expect(snappyDecompress(compressed, 1 << 20)).toEqual(batch);
    const before = process.memoryUsage().rss;
    let peak = before;
    for (let i = 0; i < 3000; i++) {
      snappyCompress(batch);
      snappyDecompress(compressed, 1 << 20);
      if (i % 100 === 0) peak = Math.max(peak, process.memoryUsage().rss);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    // 3,000 batches each way are ~600 MB of output; external buffers held them all (~800 MiB growth here).
    expect((peak - before) / 2 ** 20).toBeLessThan(150);
  });
});
