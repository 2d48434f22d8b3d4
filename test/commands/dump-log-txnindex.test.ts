/**
 * `logtool dump-log --files <x>.txnindex` through the built CLI prints what Kafka's
 * DumpLogSegments.dumpTxnIndex prints for TransactionIndex.allAbortedTxns (kafka-format.md §6.3:
 * 34-byte entries, version int16 read by its first byte, producerId, firstOffset, lastOffset,
 * lastStableOffset). No fixture holds a non-empty .txnindex, so the files are written here, by hand:
 *
 *  - three aborted transactions (one starting in an earlier segment, one producer id above 2^53)
 *    and a trailing partial entry, which Kafka ignores: one line each, exit 0; `--json`, one object
 *    per entry, no decoder needed, no other lines;
 *  - an empty file prints only its `Dumping` line;
 *  - an entry of version 1: Kafka's message with the file and byte position on stderr, no entry
 *    printed, exit 3, the next file still dumped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

type Aborted = [version: number, producerId: bigint, first: bigint, last: bigint, lso: bigint];

function txnIndex(entries: Aborted[]): Buffer {
  const b = Buffer.alloc(entries.length * 34);
  entries.forEach(([version, pid, first, last, lso], i) => {
    const v = new DataView(b.buffer, b.byteOffset + i * 34, 34);
    v.setInt16(0, version);
    v.setBigInt64(2, pid);
    v.setBigInt64(10, first);
    v.setBigInt64(18, last);
    v.setBigInt64(26, lso);
  });
  return b;
}

const lines = (text: string): string[] => text.split('\n').filter((l, i, a) => !(l === '' && i === a.length - 1));

const ABORTED: Aborted[] = [
  [0, 4000n, 95n, 101n, 90n],
  [0, 4001n, 102n, 110n, 102n],
  [0, 9007199254740993n, 111n, 150n, 111n],
];

describe('dump-log .txnindex', () => {
  it("prints one Kafka line per aborted transaction, ignores a trailing partial entry; --json one object each", async () => {
    const dir = makeTempDir();
    const file = path.join(dir, '00000000000000000100.txnindex');
    fs.writeFileSync(file, Buffer.concat([txnIndex(ABORTED), Buffer.alloc(20, 7)]));
    const r = await cli('dump-log', '--files', file);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      `Dumping ${file}`,
      'version: 0 producerId: 4000 firstOffset: 95 lastOffset: 101 lastStableOffset: 90',
      'version: 0 producerId: 4001 firstOffset: 102 lastOffset: 110 lastStableOffset: 102',
      'version: 0 producerId: 9007199254740993 firstOffset: 111 lastOffset: 150 lastStableOffset: 111',
    ]);
    const j = await cli('dump-log', '--json', '--files', file);
    expect(j.code).toBe(0);
    expect(lines(j.stdout)).toEqual([
      '{"version":0,"producerId":4000,"firstOffset":95,"lastOffset":101,"lastStableOffset":90}',
      '{"version":0,"producerId":4001,"firstOffset":102,"lastOffset":110,"lastStableOffset":102}',
      '{"version":0,"producerId":9007199254740993,"firstOffset":111,"lastOffset":150,"lastStableOffset":111}',
    ]);
  });

  it('an empty .txnindex prints only its Dumping line', async () => {
    const file = path.join(makeTempDir(), '00000000000000000000.txnindex');
    fs.writeFileSync(file, Buffer.alloc(0));
    const r = await cli('dump-log', '--files', file);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([`Dumping ${file}`]);
  });

  it('an entry of an unknown version: Kafka reads all entries first, so none is printed; exit 3; the next file is dumped', async () => {
    const dir = makeTempDir();
    const bad = path.join(dir, '00000000000000000100.txnindex');
    fs.writeFileSync(bad, txnIndex([ABORTED[0]!, [0x0100, 4001n, 102n, 110n, 102n]]));
    const good = path.join(dir, '00000000000000000200.txnindex');
    fs.writeFileSync(good, txnIndex([ABORTED[1]!]));
    const r = await cli('dump-log', '--files', `${bad},${good}`);
    expect(r.code).toBe(3);
    expect(lines(r.stdout)).toEqual([`Dumping ${bad}`, `Dumping ${good}`, 'version: 0 producerId: 4001 firstOffset: 102 lastOffset: 110 lastStableOffset: 102']);
    expect(lines(r.stderr)).toEqual([`${bad} at byte 34: Unexpected aborted transaction version 1 in transaction index ${bad}, current version is 0`]);
  });
});
