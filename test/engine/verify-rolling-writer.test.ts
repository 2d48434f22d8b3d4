/**
 * verify beside a writer that is rolling (Kafka's LogSegment files appear one by one: the `.log`,
 * then its `.index` and `.timeindex`). A reader that meets the newest segment in that gap must look
 * again rather than report an index file missing; one that stays missing is still reported.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { verifyLog } from '../../src/engine/recovery/log-verifier.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

async function writerWithTwoSegments(): Promise<{ dir: string; writer: Log; timeIndex: string }> {
  const dir = path.join(makeTempDir('logtool-verify-roll-'), 't-0');
  const writer = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 4096 }, rememberConfig: false });
  for (let i = 0; i < 60; i++) await writer.append([{ value: Buffer.alloc(100, i) }]);
  await writer.flush();
  const last = writer.segments[writer.segments.length - 1]!;
  expect(writer.segments.length).toBeGreaterThan(1);
  return { dir, writer, timeIndex: last.timeIndexPath };
}

/** `beforeLast` runs when verify has checked every segment but the newest. */
const missingProblems = (dir: string, beforeLast?: () => void) => {
  const reader = Log.open(dir, { readOnly: true });
  const lastBytes = reader.segments[reader.segments.length - 1]!.size;
  try {
    const onProgress = (done: number, total: number) => done === total - lastBytes && beforeLast?.();
    return verifyLog(reader, { onProgress }).problems.filter((p) => /missing/.test(p.message));
  } finally {
    reader.close();
  }
};

describe('verify beside a rolling writer', () => {
  it("does not report the newest segment's .timeindex missing when it appears while verify looks", async () => {
    const { dir, writer, timeIndex } = await writerWithTwoSegments();
    try {
      const content = fs.readFileSync(timeIndex);
      fs.unlinkSync(timeIndex);
      // Another thread puts the file back 3 ms after the signal, while verify runs on this one.
      const signal = new Int32Array(new SharedArrayBuffer(4));
      const worker = new Worker(
        `const { workerData } = require('node:worker_threads'); const fs = require('node:fs');
         Atomics.wait(workerData.signal, 0, 0);
         Atomics.wait(workerData.signal, 0, 1, 3);
         fs.writeFileSync(workerData.file, workerData.content);`,
        { eval: true, workerData: { signal, file: timeIndex, content } },
      );
      await new Promise((r) => setTimeout(r, 200)); // the worker is waiting
      const problems = missingProblems(dir, () => {
        Atomics.store(signal, 0, 1);
        Atomics.notify(signal, 0);
      });
      await worker.terminate();
      expect(fs.existsSync(timeIndex)).toBe(true);
      expect(problems).toEqual([]);
    } finally {
      await writer.close();
    }
  });

  it('still reports an index file that stays missing while the writer holds the partition', async () => {
    const { dir, writer, timeIndex } = await writerWithTwoSegments();
    try {
      fs.unlinkSync(timeIndex);
      const problems = missingProblems(dir);
      expect(problems.map((p) => p.file)).toEqual([timeIndex]);
    } finally {
      await writer.close();
    }
  });
});
