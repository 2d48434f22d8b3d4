/**
 * Writeback ahead (cleaned-output.ts, issue 15): a `.cleaned` log gets an fdatasync in the thread
 * pool every WRITEBACK_AHEAD_BYTES while the filter still writes it, so the disk writes the output
 * as it is produced; the fdatasync before the swap (Kafka's cleanSegments: cleaned.flush() before
 * replaceSegments) still comes last, after every background one, and before the rename. A
 * background fdatasync that fails stops the compaction before anything changes, naming the file
 * (an error an fdatasync reports is reported once: the next one may succeed over lost pages).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/engine/log/log.js';
import { realIO, type FileIO } from '../../../src/engine/io.js';
import { LogtoolError } from '../../../src/engine/errors.js';
import { WRITEBACK_AHEAD_BYTES } from '../../../src/engine/cleaner/cleaned-output.js';
import { removeTempDirs, tempPartitionPath } from '../../helpers/fixtures.js';
import { pathTrackingIO } from '../../helpers/path-io.js';
import { fingerprint, readAll } from './helpers.js';

afterAll(removeTempDirs);

const T0 = 1_700_000_000_000;
const VALUE_BYTES = 1000;
/** One sealed segment of about 4 × WRITEBACK_AHEAD_BYTES whose keys are all distinct but the last. */
async function bigSegment(dir: string): Promise<number> {
  const records = Math.ceil((4 * WRITEBACK_AHEAD_BYTES) / VALUE_BYTES);
  const log = Log.open(dir, { config: { segmentBytes: 64 * WRITEBACK_AHEAD_BYTES, flushMode: 'async' } });
  try {
    for (let i = 0; i < records; i += 100) {
      const n = Math.min(100, records - i);
      // The very last record repeats key 0: the segment changes, so it is recopied and swapped.
      await log.append(Array.from({ length: n }, (_, j) => ({ key: Buffer.from(`k${i + j === records - 1 ? 0 : i + j}`), value: Buffer.alloc(VALUE_BYTES, (i + j) & 0xff), timestamp: T0 + i + j })));
    }
    log.roll();
    await log.append([{ key: Buffer.from('end'), value: Buffer.from('end'), timestamp: T0 }]);
  } finally {
    await log.close();
  }
  return records;
}

/** Records `async-start <path>`, `async-end <path>`, `datasync <path>`, `rename <from> -> <to>`; fails async syncs of `failAsync`. */
function recordingIO(events: string[], failAsync?: RegExp): FileIO {
  return pathTrackingIO((name, base) => ({
    datasync(fd) {
      events.push(`datasync ${name(fd)}`);
      base.datasync(fd);
    },
    async datasyncAsync(fd) {
      const p = name(fd);
      events.push(`async-start ${p}`);
      if (failAsync?.test(p)) {
        events.push(`async-failed ${p}`);
        throw new LogtoolError('io', 'fdatasync failed: EIO (i/o error)', { file: p });
      }
      await base.datasyncAsync(fd);
      events.push(`async-end ${p}`);
    },
    rename(from, to) {
      base.rename(from, to);
      events.push(`rename ${from} -> ${to}`);
    },
  }), realIO);
}

describe('writeback ahead of the swap', () => {
  it('syncs a large .cleaned log in the background while writing it, then once more before its rename', async () => {
    const dir = tempPartitionPath('writeback-0');
    const records = await bigSegment(dir);
    const events: string[] = [];
    const log = Log.open(dir, { io: recordingIO(events) });
    try {
      const report = await log.compact({ nowMs: T0, deleteDelayMs: 0 });
      expect(report.recordsRemoved).toBe(1);
    } finally {
      await log.close();
    }
    const cleaned = path.join(dir, '00000000000000000000.log.cleaned');
    const renamed = events.findIndex((e) => e.startsWith(`rename ${cleaned} -> `));
    expect(renamed, events.join('\n')).toBeGreaterThan(0);
    const starts = events.flatMap((e, i) => (e === `async-start ${cleaned}` ? [i] : []));
    const ends = events.flatMap((e, i) => (e === `async-end ${cleaned}` ? [i] : []));
    // At least one background sync per WRITEBACK_AHEAD_BYTES written while another was not in flight.
    expect(starts.length).toBeGreaterThanOrEqual(1);
    expect(ends.length).toBe(starts.length);
    // One at a time: each ends before the next starts.
    for (let k = 1; k < starts.length; k++) expect(ends[k - 1]!).toBeLessThan(starts[k]!);
    // The fdatasync the swap relies on: on the main thread, after every background one, before the rename.
    const final = events.lastIndexOf(`datasync ${cleaned}`);
    expect(final).toBeGreaterThan(ends[ends.length - 1]!);
    expect(final).toBeLessThan(renamed);
    // The compacted log: every key once, its latest value.
    expect(readAll(dir).length).toBe(records);
  });

  it('a background fdatasync that fails stops the compaction before anything changes, naming the file', async () => {
    const dir = tempPartitionPath('writeback-fail-0');
    await bigSegment(dir);
    const before = fingerprint(dir);
    const events: string[] = [];
    const log = Log.open(dir, { io: recordingIO(events, /\.log\.cleaned$/) });
    let error: unknown;
    try {
      await log.compact({ nowMs: T0, deleteDelayMs: 0 }).catch((e: unknown) => (error = e));
    } finally {
      await log.close();
    }
    expect(events.some((e) => e.startsWith('async-failed '))).toBe(true);
    expect(error).toBeInstanceOf(LogtoolError);
    const e = error as LogtoolError;
    expect(e.kind).toBe('io');
    expect(e.file).toBe(path.join(dir, '00000000000000000000.log.cleaned'));
    expect(e.message).not.toContain('\n');
    // Nothing was swapped, nothing is left behind.
    expect(events.some((ev) => ev.startsWith('rename ') && ev.includes('.log.cleaned'))).toBe(false);
    expect(fs.readdirSync(dir).filter((n) => n.includes('.cleaned'))).toEqual([]);
    const after = fingerprint(dir);
    for (const [name, sha] of Object.entries(before)) if (/\.(log|index|timeindex)$/.test(name)) expect(after[name], name).toBe(sha);
  });
});
