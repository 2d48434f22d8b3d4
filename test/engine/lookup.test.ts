/**
 * Offset lookups (Kafka's LogSegment.translateOffset and FileRecords.searchForOffsetWithSize, issue
 * 15): a read from an offset reads the batch holding it, not the batches before it; the offset
 * index's block cache follows appends and truncation; records below the offset are checked as
 * every record is but not built (passRecordsBelow's tight loop included).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, OffsetIndex, realIO, type FileIO } from '../../src/api.js';
import { encodeBatch, readBatchHeader, RecordDecoder, type LogRecord } from '../../src/engine/format/record-batch.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

/** realIO, counting the bytes read from `.log` files and the reads. */
function countingIO(): { io: FileIO; logBytesRead: () => number; logReads: () => number; reset: () => void } {
  const paths = new Map<number, string>();
  let bytes = 0;
  let reads = 0;
  const io: FileIO = {
    ...realIO,
    open(p, flags) {
      const fd = realIO.open(p, flags);
      paths.set(fd, p);
      return fd;
    },
    read(fd, buf, offset, length, position) {
      const n = realIO.read(fd, buf, offset, length, position);
      if (paths.get(fd)?.endsWith('.log')) {
        bytes += n;
        reads++;
      }
      return n;
    },
  };
  return { io, logBytesRead: () => bytes, logReads: () => reads, reset: () => (bytes = reads = 0) };
}

/** 40 batches of 200 records of about 100 B (about 22 KiB each: every batch but the first gets an index entry), and where each lies. */
async function fortyBatches(name: string): Promise<{ dir: string; batch: (k: number) => { position: number; size: number } }> {
  const dir = path.join(makeTempDir(), name);
  const writer = Log.open(dir, { config: { flushMode: 'async' }, rememberConfig: false });
  const batches: { position: number; size: number }[] = [];
  for (let b = 0; b < 40; b++) {
    const before = writer.positions().committed.position;
    await writer.append(Array.from({ length: 200 }, (_, i) => ({ key: null, value: Buffer.from(value(b * 200 + i)) })));
    batches.push({ position: before, size: writer.positions().committed.position - before });
  }
  await writer.close();
  return { dir, batch: (k) => batches[k]! };
}
const value = (offset: number): string => `r${offset}`.padEnd(100, '.');

/** Reads the record at each offset (checking it) through countingIO; `check` gets the `.log` reads and bytes each lookup took. */
async function eachLookup(dir: string, offsets: number[], check: (offset: number, reads: number, bytes: number) => void): Promise<void> {
  const counting = countingIO();
  const log = Log.open(dir, { readOnly: true, io: counting.io });
  try {
    for (const offset of offsets) {
      counting.reset();
      const [r] = [...log.read({ fromOffset: offset, maxRecords: 1 })];
      expect(r?.offset).toBe(offset);
      expect(r?.value?.toString()).toBe(value(offset));
      check(offset, counting.logReads(), counting.logBytesRead());
    }
  } finally {
    await log.close();
  }
}

describe('a read from an offset', () => {
  it('reads the batch holding the offset and not the batches before it', async () => {
    const { dir, batch } = await fortyBatches('lookup-0');
    await eachLookup(dir, [1, 199, 200, 4321, 7999, 5555], (offset, reads, bytes) => {
      // The batch, plus at most a few KiB of the one the index entry points at (its header).
      expect(bytes).toBeLessThan(batch(1).size + 8 * 1024);
      // A few KiB at the floor entry's batch (its header), then the batch holding the offset in one
      // read, up to where it ends at the latest (the entry after next; for the last, the segment's end).
      expect(reads).toBeLessThanOrEqual(2);
    });
  });
});

describe('a read from an offset the index places', () => {
  it('reads the batch holding the offset, and only it, in one read', async () => {
    const { dir, batch } = await fortyBatches('guess-0');
    // Batches 2..38: the floor entry is the batch before (or the batch itself, for its last offset).
    await eachLookup(dir, [400, 4321, 5555, 5599, 7600, 7799], (offset, reads, bytes) => {
      expect(reads).toBe(1);
      expect(bytes).toBe(batch(Math.floor(offset / 200)).size);
    });
  });

  it('returns the batches after it once each, in order, as a read from the start does', async () => {
    const { dir } = await fortyBatches('guess-1');
    const log = Log.open(dir, { readOnly: true });
    try {
      const offsets = [...log.read({ fromOffset: 4321, maxRecords: 700 })].map((r) => r.offset);
      expect(offsets).toEqual(Array.from({ length: 700 }, (_, i) => 4321 + i));
      const tail = [...log.read({ fromOffset: 7799 })].map((r) => r.offset);
      expect(tail).toEqual(Array.from({ length: 201 }, (_, i) => 7799 + i));
    } finally {
      await log.close();
    }
  });

  it('falls back to the scan from the floor entry when the guess does not hold: an index keyed on first offsets (Kafka < 2.0), a damaged batch', async () => {
    const { dir, batch } = await fortyBatches('guess-2');
    // Rewrite each entry's key from its batch's last offset to its first (199 below).
    const indexFile = path.join(dir, '00000000000000000000.index');
    const original = fs.readFileSync(indexFile);
    const index = Buffer.from(original);
    for (let at = 0; at + 8 <= index.length && index.readInt32BE(at + 4) > 0; at += 8) index.writeInt32BE(index.readInt32BE(at) - 199, at);
    fs.writeFileSync(indexFile, index);
    const counting = countingIO();
    let log = Log.open(dir, { readOnly: true, io: counting.io });
    try {
      for (const offset of [4321, 4200, 4399, 5555, 7000, 7999, 1000, 3210]) {
        counting.reset();
        const [r] = [...log.read({ fromOffset: offset, maxRecords: 1 })];
        expect(r?.offset).toBe(offset);
        expect(r?.value?.toString()).toBe(value(offset));
      }
      // The guesses missed: the index stopped guessing, so a lookup reads the floor batch's header and its batch.
      counting.reset();
      expect([...log.read({ fromOffset: 6789, maxRecords: 1 })][0]?.offset).toBe(6789);
      expect(counting.logReads()).toBe(2);
    } finally {
      await log.close();
    }
    // A batch whose CRC fails where the (last-offset) index places it: the reader's warning as before, no record.
    fs.writeFileSync(indexFile, original);
    const bad = batch(21);
    const logFile = path.join(dir, '00000000000000000000.log');
    const fd = fs.openSync(logFile, 'r+');
    fs.writeSync(fd, Buffer.from('X'), 0, 1, bad.position + bad.size - 10);
    fs.closeSync(fd);
    const warnings: string[] = [];
    log = Log.open(dir, { readOnly: true, onWarning: (w) => warnings.push(`${w.position}: ${w.message}`) });
    try {
      expect([...log.read({ fromOffset: 4321, maxRecords: 1 })]).toEqual([]);
      expect(warnings).toEqual([expect.stringMatching(new RegExp(`^${bad.position}: CRC-32C mismatch in batch at offset 4200`))]);
    } finally {
      await log.close();
    }
  });
});

describe('OffsetIndex.lookup', () => {
  it('sees entries appended after a lookup cached their block, and forgets truncated ones', () => {
    const file = path.join(makeTempDir(), '00000000000000000000.index');
    const index = new OffsetIndex({ io: realIO, path: file, baseOffset: 0, maxIndexBytes: 8 * 4096, writable: true });
    try {
      for (let i = 1; i <= 700; i++) index.append(i * 10, i * 100);
      expect(index.lookup(5_000)).toEqual({ offset: 5_000, position: 50_000 });
      expect(index.lookup(7_005)).toEqual({ offset: 7_000, position: 70_000 });
      index.append(7_010, 70_123); // in the block the last lookup read
      expect(index.lookup(9_999)).toEqual({ offset: 7_010, position: 70_123 });
      index.truncateTo(6_000); // drops 6000 and above
      expect(index.lookup(9_999)).toEqual({ offset: 5_990, position: 59_900 });
      index.append(6_500, 99_999);
      expect(index.lookup(6_600)).toEqual({ offset: 6_500, position: 99_999 });
      expect(index.lookup(5)).toEqual({ offset: 0, position: 0 });
    } finally {
      index.close();
    }
  });
});

describe('OffsetIndex.append', () => {
  it('writes each entry as two big-endian int32s (relative offset, position), across pending-buffer growth and flushes', () => {
    const file = path.join(makeTempDir(), '00000000000000001000.index');
    const index = new OffsetIndex({ io: realIO, path: file, baseOffset: 1000, maxIndexBytes: 8 * 4096, writable: true });
    const entries = 1300; // past 4096 pending bytes (512 entries) twice; the pending buffer grows from 256 bytes first
    const expected = Buffer.alloc(entries * 8);
    try {
      for (let i = 0; i < entries; i++) {
        const relative = i === entries - 1 ? 0x7fffffff : 5 + i * 3;
        const position = i === entries - 1 ? 0x7fffffff : i * 4099 + (i % 7);
        index.append(1000 + relative, position);
        expected.writeInt32BE(relative, i * 8);
        expected.writeInt32BE(position, i * 8 + 4);
      }
      expect(index.entry(entries - 2)).toEqual({ offset: 1000 + 5 + (entries - 2) * 3, position: (entries - 2) * 4099 + ((entries - 2) % 7) });
      index.trimToValidSize();
    } finally {
      index.close();
    }
    expect(fs.readFileSync(file).equals(expected)).toBe(true);
  });
});

describe('OffsetIndex.truncateTo', () => {
  it('zeros written entries it drops, beyond one 1 MiB chunk of the shared zeros, and keeps the ones below', () => {
    const file = path.join(makeTempDir(), '00000000000000000000.index');
    const entries = 150_000; // 1.2 MB of written entries: two chunks of zeros
    const index = new OffsetIndex({ io: realIO, path: file, baseOffset: 0, maxIndexBytes: 8 * 160_000, writable: true });
    try {
      for (let i = 0; i < entries; i++) index.append(i, i * 10);
      index.flush(); // every entry written to the file
      index.truncateTo(7); // drops offsets 7 and above: truncateToEntries(7)
      expect(index.entries).toBe(7);
      expect(index.lookup(100_000)).toEqual({ offset: 6, position: 60 });
      index.append(7, 71);
      expect(index.lookup(100_000)).toEqual({ offset: 7, position: 71 });
    } finally {
      index.close();
    }
    const bytes = fs.readFileSync(file);
    expect(bytes.readInt32BE(6 * 8)).toBe(6);
    expect(bytes.readInt32BE(6 * 8 + 4)).toBe(60);
    expect(bytes.readInt32BE(7 * 8 + 4)).toBe(71);
    // Everything the truncation dropped reads as zeros, whatever the file's length after close.
    expect(bytes.subarray(8 * 8).every((b) => b === 0)).toBe(true);
  });
});

describe('RecordDecoder with fromOffset', () => {
  const batch = encodeBatch(
    Array.from({ length: 5 }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: [{ key: 'h', value: Buffer.from(`${i}`) }] })),
    { baseOffset: 100, nowMs: 1_700_000_000_000 },
  );
  const all = (b: Buffer, fromOffset?: number): LogRecord[] => {
    const d = new RecordDecoder(b, 0, readBatchHeader(b, 0), { fromOffset });
    const out: LogRecord[] = [];
    for (let r = d.next(); r !== undefined; r = d.next()) out.push(r);
    return out;
  };

  it('returns exactly the records at or above the offset, as a full decode does', () => {
    expect(all(batch, 103)).toEqual(all(batch).filter((r) => r.offset >= 103));
    expect(all(batch, 100)).toEqual(all(batch));
    expect(all(batch, 105)).toEqual([]);
  });

  /** The message of what f throws, or 'no error'. */
  const message = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      return (e as Error).message;
    }
    return 'no error';
  };

  // Records without headers, keys null or not, lengths of one and two varint bytes: what passRecordsBelow passes over.
  const plain = encodeBatch(
    Array.from({ length: 300 }, (_, i) => ({ key: i % 3 === 0 ? null : Buffer.from(`k${i}`), value: i % 5 === 0 ? null : Buffer.alloc(i % 150, i) })),
    { baseOffset: 1000, nowMs: 1_700_000_000_000 },
  );

  it('returns exactly the records at or above the offset from a batch of records without headers', () => {
    const everything = all(plain);
    for (const from of [1000, 1001, 1063, 1064, 1150, 1299, 1300]) expect(all(plain, from)).toEqual(everything.filter((r) => r.offset >= from));
  });

  it('fails on a malformed header-less record it passes over as a read from the start does', () => {
    // Record k's fields: length varint, attributes, timestamp delta, offset delta, key length, …
    const recordAt = (b: Buffer, k: number): number => {
      let at = 61;
      for (let i = 0; i < k; i++) at += (b[at]! < 0x80 ? 1 : 2) + (((b[at]! & 0x7f) | (b[at]! < 0x80 ? 0 : b[at + 1]! << 7)) >>> 1);
      return at;
    };
    const damaged = (edit: (b: Buffer, record: number) => void): Buffer => {
      const b = Buffer.from(plain);
      edit(b, recordAt(b, 7)); // record 7: key "k7", value of 7 bytes (one-byte lengths)
      return b;
    };
    const cases = {
      // Length one more: a byte left over.
      leftover: damaged((b, r) => (b[r] = b[r]! + 2)),
      // Key length (after length, attributes, timestamp delta, offset delta) beyond the record.
      key: damaged((b, r) => (b[r + 4] = 100)),
      // A header count of one where none follows.
      headers: damaged((b, r) => (b[r + 1 + (b[r]! >>> 1) - 1] = 2)),
      // Length running past the batch.
      length: damaged((b, r) => (b[r] = 0x7e)),
    };
    for (const [name, bad] of Object.entries(cases)) {
      const fromStart = message(() => all(bad));
      expect(fromStart, name).not.toBe('no error');
      expect(message(() => all(bad, 1200)), name).toBe(fromStart);
    }
  });

  it('still checks the records it passes over: a malformed one fails the read as it does from the start', () => {
    // Record 0's header count (its last field before the next record) claims one header more.
    const bad = Buffer.from(batch);
    const first = 61; // first record: length varint, attributes, timestamp delta, offset delta, key, value, header count
    const length = bad[first]! >>> 1;
    const headerCountAt = first + 1 + length - 5; // then "h"'s length, "h", the value's length, the value
    expect(bad[headerCountAt]).toBe(2); // zig-zag 1
    bad[headerCountAt] = 4; // two headers: the second runs past the record
    const fromStart = message(() => all(bad));
    expect(fromStart).not.toBe('no error');
    expect(message(() => all(bad, 103))).toBe(fromStart);
  });
});
