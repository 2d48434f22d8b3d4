/**
 * `logtool dump-log --files <x>.snapshot` through the built CLI prints what Kafka's
 * DumpLogSegments.dumpProducerIdSnapshot prints. The expected lines are computed here from the
 * bytes with the layout of Kafka's ProducerSnapshot.json, not with logtool's decoder:
 *
 *  - every fixture snapshot that has entries, line for line, exit 0 (an empty one prints only
 *    its `Dumping` line);
 *  - an ongoing transaction (`OptionalLong[n]`), a producer without batch metadata (no batch
 *    fields, the trailing space kept), a first sequence that wraps below 0;
 *  - a corrupt snapshot: its path and byte on stderr, exit 3, and the next file still dumped;
 *  - --json: the same fields, one object per producer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { fixturePath, makeTempDir, removeTempDirs, requireFixtures, segmentCases } from '../helpers/fixtures.js';
import { crc32c } from '../../src/engine/format/crc32c.js';

requireFixtures(import.meta.url);
beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

/** Kafka's print for each 46-byte entry after the 10-byte header, read with DataView. */
function expectedLines(bytes: Buffer): string[] {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const lines: string[] = [];
  for (let p = 10; p + 46 <= bytes.length; p += 46) {
    const lastSeq = v.getInt32(p + 10);
    const lastOffset = v.getBigInt64(p + 14);
    const delta = v.getInt32(p + 22);
    const ts = v.getBigInt64(p + 26);
    const txn = v.getBigInt64(p + 38);
    const firstSeq = lastSeq < delta ? 2147483647 - (delta - lastSeq) + 1 : lastSeq - delta;
    lines.push(
      `producerId: ${v.getBigInt64(p)} producerEpoch: ${v.getInt16(p + 8)} coordinatorEpoch: ${v.getInt32(p + 34)} ` +
        `currentTxnFirstOffset: ${txn >= 0n ? `OptionalLong[${txn}]` : 'OptionalLong.empty'} lastTimestamp: ${ts} ` +
        (lastOffset >= 0n ? `firstSequence: ${firstSeq} lastSequence: ${lastSeq} lastOffset: ${lastOffset} offsetDelta: ${delta} timestamp: ${ts}` : ''),
    );
  }
  return lines;
}

/** A snapshot file built byte by byte (CRC-32C over [6, end)). */
function snapshotBytes(entries: { pid: bigint; epoch: number; seq: number; last: bigint; delta: number; ts: bigint; coord: number; txn: bigint }[]): Buffer {
  const b = Buffer.alloc(10 + 46 * entries.length);
  b.writeInt16BE(1, 0);
  b.writeInt32BE(entries.length, 6);
  entries.forEach((e, i) => {
    const p = 10 + 46 * i;
    b.writeBigInt64BE(e.pid, p);
    b.writeInt16BE(e.epoch, p + 8);
    b.writeInt32BE(e.seq, p + 10);
    b.writeBigInt64BE(e.last, p + 14);
    b.writeInt32BE(e.delta, p + 22);
    b.writeBigInt64BE(e.ts, p + 26);
    b.writeInt32BE(e.coord, p + 34);
    b.writeBigInt64BE(e.txn, p + 38);
  });
  b.writeUInt32BE(crc32c(b, 6, b.length), 2);
  return b;
}

const snapshots = segmentCases().flatMap((c) =>
  Object.keys(c.partitions).flatMap((p) => {
    const dir = fixturePath(c.case, p);
    return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.snapshot')).map((f) => path.join(dir, f)) : [];
  }),
);

describe('dump-log of producer snapshots', () => {
  it('prints Kafka\'s lines for every fixture snapshot with entries, and only the Dumping line for an empty one', async () => {
    const withEntries = snapshots.filter((f) => fs.statSync(f).size > 10);
    expect(withEntries.length).toBeGreaterThanOrEqual(3);
    const empty = snapshots.find((f) => fs.statSync(f).size === 10)!;
    const files = [...withEntries, empty];
    const r = await cli('dump-log', '--files', files.join(','));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const expected = files.flatMap((f) => [`Dumping ${f}`, ...expectedLines(fs.readFileSync(f))]);
    expect(r.stdout.split('\n').slice(0, -1)).toEqual(expected);
    expect(expected.length).toBeGreaterThan(files.length + 10);
  });

  it('prints an ongoing transaction, a producer without batch metadata and a wrapped first sequence as Kafka does', async () => {
    const file = path.join(makeTempDir(), '00000000000000000042.snapshot');
    fs.writeFileSync(file, snapshotBytes([
      { pid: 7n, epoch: 3, seq: 9, last: 41n, delta: 4, ts: 1700000000000n, coord: 2, txn: 37n },
      { pid: 8n, epoch: 0, seq: -1, last: -1n, delta: 0, ts: 1700000000001n, coord: -1, txn: -1n },
      { pid: 9n, epoch: 1, seq: 1, last: 40n, delta: 3, ts: 5n, coord: -1, txn: -1n },
    ]));
    const r = await cli('dump-log', '--files', file);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `Dumping ${file}\n` +
        'producerId: 7 producerEpoch: 3 coordinatorEpoch: 2 currentTxnFirstOffset: OptionalLong[37] lastTimestamp: 1700000000000 firstSequence: 5 lastSequence: 9 lastOffset: 41 offsetDelta: 4 timestamp: 1700000000000\n' +
        'producerId: 8 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1700000000001 \n' +
        'producerId: 9 producerEpoch: 1 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 5 firstSequence: 2147483646 lastSequence: 1 lastOffset: 40 offsetDelta: 3 timestamp: 5\n',
    );
  });

  it('--json: one object per producer with the same fields, no other lines, no decoder needed', async () => {
    const file = path.join(makeTempDir(), '00000000000000000042.snapshot');
    fs.writeFileSync(file, snapshotBytes([
      { pid: 7n, epoch: 3, seq: 9, last: 41n, delta: 4, ts: 1700000000000n, coord: 2, txn: 37n },
      { pid: 8n, epoch: 0, seq: -1, last: -1n, delta: 0, ts: 1700000000001n, coord: -1, txn: -1n },
    ]));
    const r = await cli('dump-log', '--json', '--files', file);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      '{"producerId":7,"producerEpoch":3,"coordinatorEpoch":2,"currentTxnFirstOffset":37,"lastTimestamp":1700000000000,"firstSequence":5,"lastSequence":9,"lastOffset":41,"offsetDelta":4,"timestamp":1700000000000}\n' +
        '{"producerId":8,"producerEpoch":0,"coordinatorEpoch":-1,"currentTxnFirstOffset":null,"lastTimestamp":1700000000001}\n',
    );
  });

  it('reports a corrupt snapshot with its path and byte, exits 3, and still dumps the next file', async () => {
    const src = snapshots.find((f) => fs.statSync(f).size > 10)!;
    const bad = path.join(makeTempDir(), path.basename(src));
    const bytes = fs.readFileSync(src);
    bytes[20]! ^= 0x04;
    fs.writeFileSync(bad, bytes);
    const r = await cli('dump-log', '--files', `${bad},${src}`);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`${bad} at byte 2:`);
    expect(r.stderr).toMatch(/CRC/);
    expect(r.stdout.split('\n').slice(0, -1)).toEqual([`Dumping ${bad}`, `Dumping ${src}`, ...expectedLines(fs.readFileSync(src))]);
  });
});
