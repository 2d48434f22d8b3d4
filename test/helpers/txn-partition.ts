/**
 * A partition of transactional batches built with an independent encoder: kafkajs 2.2.4's
 * RecordBatch v0 encoder for every batch; kafkajs cannot set the control flag, so a marker batch is
 * its one-record batch (key: version 0 + type, value: version 0 + coordinator epoch) with the
 * control bit set in the attributes and the CRC-32C recomputed here with kafkajs's own CRC-32C.
 *
 * The layout (offsets as appended; `TXN_LAYOUT` is the source of the expected lists in the tests):
 *
 *   0-1   plain              a0 a1
 *   2-3   P1 (1000/0) txn    t1-0 t1-1
 *   4-5   P2 (2000/3) txn    t2-0 t2-1
 *   6-7   plain              b0 b1
 *   8     P1 COMMIT (coordinator epoch 7)
 *   9-10  P2 txn             t2-2 t2-3
 *   11    P2 ABORT  (coordinator epoch 9)
 *   12-13 P4 (4000/0) idempotent, not transactional   c0 c1
 *   14-15 P3 (3000/1) txn    t3-0 t3-1        ← never ended: open
 *   16-17 P1 txn             t1b-0 t1b-1
 *   18    P1 COMMIT (coordinator epoch 7)
 *   19-20 plain              d0 d1
 *
 * and the `.txnindex` Kafka's append path keeps beside it, written here by hand: one entry for P2's
 * aborted transaction (first 4, marker 11, LSO 12: nothing else open when it ended).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Log } from '../../src/api.js';
import { makeTempDir } from './fixtures.js';
import { ensureBuilt } from './build.js';

const require = createRequire(import.meta.url);
const kjsRoot = path.dirname(require.resolve('kafkajs/package.json'));
const { RecordBatch } = require(path.join(kjsRoot, 'src/protocol/recordBatch/v0/index.js')) as { RecordBatch: (o: object) => Promise<{ buffer: Buffer }> };
const Record = require(path.join(kjsRoot, 'src/protocol/recordBatch/record/v0/index.js')) as (o: object) => unknown;
const Long = require(path.join(kjsRoot, 'src/utils/long.js')) as { fromNumber(n: number): unknown };
const kjsCrc32C = require(path.join(kjsRoot, 'src/protocol/recordBatch/crc32C/index.js')) as (b: Buffer) => number;

export const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

export type Step =
  | { kind: 'data'; values: string[]; producerId?: number; producerEpoch?: number; transactional?: boolean; ts?: number }
  | { kind: 'marker'; type: 'ABORT' | 'COMMIT'; producerId: number; producerEpoch: number; coordinatorEpoch: number; ts?: number };

export const P1 = { producerId: 1000, producerEpoch: 0 };
export const P2 = { producerId: 2000, producerEpoch: 3 };
export const P3 = { producerId: 3000, producerEpoch: 1 };
export const P4 = { producerId: 4000, producerEpoch: 0 };

export const TXN_LAYOUT: Step[] = [
  { kind: 'data', values: ['a0', 'a1'] },
  { kind: 'data', values: ['t1-0', 't1-1'], ...P1, transactional: true },
  { kind: 'data', values: ['t2-0', 't2-1'], ...P2, transactional: true },
  { kind: 'data', values: ['b0', 'b1'] },
  { kind: 'marker', type: 'COMMIT', ...P1, coordinatorEpoch: 7 },
  { kind: 'data', values: ['t2-2', 't2-3'], ...P2, transactional: true },
  { kind: 'marker', type: 'ABORT', ...P2, coordinatorEpoch: 9 },
  { kind: 'data', values: ['c0', 'c1'], ...P4 },
  { kind: 'data', values: ['t3-0', 't3-1'], ...P3, transactional: true, ts: T0 + 14_000 },
  { kind: 'data', values: ['t1b-0', 't1b-1'], ...P1, transactional: true },
  { kind: 'marker', type: 'COMMIT', ...P1, coordinatorEpoch: 7 },
  { kind: 'data', values: ['d0', 'd1'] },
];

const sequences = new Map<number, number>();

/** One batch encoded by kafkajs (a marker: control bit set, CRC recomputed). */
export async function encodeStep(step: Step, baseOffset: number, partitionLeaderEpoch = 5): Promise<Buffer> {
  const ts = step.ts ?? T0 + baseOffset * 1000;
  const pid = step.producerId ?? -1;
  if (step.kind === 'marker') {
    const key = Buffer.from([0, 0, 0, step.type === 'ABORT' ? 0 : 1]);
    const value = Buffer.alloc(6);
    value.writeInt32BE(step.coordinatorEpoch, 2);
    const { buffer } = await RecordBatch({
      firstOffset: Long.fromNumber(baseOffset),
      firstTimestamp: ts,
      maxTimestamp: ts,
      partitionLeaderEpoch,
      lastOffsetDelta: 0,
      transactional: true,
      producerId: Long.fromNumber(pid),
      producerEpoch: step.producerEpoch,
      firstSequence: -1,
      records: [Record({ offsetDelta: 0, timestampDelta: 0, key, value, headers: {} })],
    });
    buffer.writeInt16BE(buffer.readInt16BE(21) | 0x20, 21); // isControl
    buffer.writeUInt32BE(kjsCrc32C(buffer.subarray(21)) >>> 0, 17);
    return buffer;
  }
  const seq = pid >= 0 ? (sequences.get(pid) ?? 0) : -1;
  if (pid >= 0) sequences.set(pid, seq + step.values.length);
  const { buffer } = await RecordBatch({
    firstOffset: Long.fromNumber(baseOffset),
    firstTimestamp: ts,
    maxTimestamp: ts + step.values.length - 1,
    partitionLeaderEpoch,
    lastOffsetDelta: step.values.length - 1,
    transactional: step.transactional === true,
    producerId: Long.fromNumber(pid),
    producerEpoch: step.producerEpoch ?? -1,
    firstSequence: seq,
    records: step.values.map((v, i) => Record({ offsetDelta: i, timestampDelta: i, key: Buffer.from(`k-${v}`), value: Buffer.from(v), headers: {} })),
  });
  return buffer;
}

/** The layout's `.txnindex` entries: [producerId, firstOffset, lastOffset, lastStableOffset]. */
export const TXN_LAYOUT_ABORTED: [number, number, number, number][] = [[P2.producerId, 4, 11, 12]];

/** Writes `<dir>/00000000000000000000.txnindex` with these entries (34 bytes each, version 0). */
export function writeTxnIndexByHand(dir: string, entries: [number, number, number, number][] = TXN_LAYOUT_ABORTED): void {
  const buf = Buffer.alloc(34 * entries.length);
  entries.forEach((e, i) => e.forEach((v, k) => buf.writeBigInt64BE(BigInt(v), i * 34 + 2 + k * 8)));
  fs.writeFileSync(path.join(dir, '00000000000000000000.txnindex'), buf);
}

/** The layout's partition at `dir`: its batches and its `.txnindex`. */
export async function buildTxnPartition(dir: string): Promise<void> {
  await appendSteps(dir, TXN_LAYOUT);
  writeTxnIndexByHand(dir);
}

/** The layout's partition in a new temporary log directory (removed by removeTempDirs). */
export async function newTxnPartition(): Promise<string> {
  const dir = path.join(makeTempDir(), 'txn-0');
  await buildTxnPartition(dir);
  return dir;
}

/** For CLI tests: dist/ built and the layout's partition made (call from beforeAll). */
export async function cliTxnPartition(): Promise<string> {
  ensureBuilt();
  return newTxnPartition();
}

/** Lines of NDJSON output, parsed. */
export const jsonLines = (s: string) => s.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

/** Appends the steps to the log at `dir` (created if needed) through Log.appendEncoded. */
export async function appendSteps(dir: string, steps: Step[]): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  sequences.clear();
  const log = Log.open(dir, { config: { flushMode: 'sync' } });
  try {
    for (const step of steps) {
      const buf = await encodeStep(step, log.nextOffset);
      await log.appendEncoded(buf, { control: step.kind === 'marker' });
    }
  } finally {
    await log.close();
  }
}

/** Values of the layout's data records, by offset (controls excluded). */
export function layoutValues(steps: Step[] = TXN_LAYOUT): Map<number, string> {
  const out = new Map<number, string>();
  let offset = 0;
  for (const s of steps) {
    if (s.kind === 'marker') offset++;
    else for (const v of s.values) out.set(offset++, v);
  }
  return out;
}
