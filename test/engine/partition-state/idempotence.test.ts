/**
 * Idempotent appends by property test (partition-state/idempotence.ts, Kafka's broker rules): random
 * sequences of next batches, retries of recent and older batches, sequence gaps, stale epochs, epoch
 * bumps and reopens, for two producers, against a model written from Kafka's rules: a retry of one
 * of the last five batches of the epoch returns the original offsets and writes nothing; an older
 * retry or a gap is refused; a stale epoch is refused; a new epoch starts at sequence 0; a producer
 * the log does not know may start anywhere. The log ends with exactly the accepted records, once.
 */
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../../src/api.js';
import { LogtoolError } from '../../../src/engine/errors.js';
import { makeTempDir, removeTempDirs } from '../../helpers/fixtures.js';

afterAll(removeTempDirs);

type Op =
  | { kind: 'next'; pid: number; count: number }
  | { kind: 'retry'; pid: number; back: number }
  | { kind: 'gap'; pid: number; skip: number; count: number }
  | { kind: 'stale'; pid: number }
  | { kind: 'bump'; pid: number; firstSeq: number; count: number }
  | { kind: 'reopen' };

const pidArb = fc.constantFrom(11, 22);
const countArb = fc.integer({ min: 1, max: 4 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('next' as const), pid: pidArb, count: countArb }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('retry' as const), pid: pidArb, back: fc.integer({ min: 1, max: 7 }) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('gap' as const), pid: pidArb, skip: fc.integer({ min: 1, max: 3 }), count: countArb }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('stale' as const), pid: pidArb }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('bump' as const), pid: pidArb, firstSeq: fc.constantFrom(0, 0, 3), count: countArb }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'reopen' as const }), weight: 1 },
);

interface Sent {
  firstSeq: number;
  count: number;
  baseOffset: number;
}
interface ModelProducer {
  epoch: number;
  lastSeq: number;
  /** Every batch of the current epoch, oldest first. */
  history: Sent[];
  /** How many of its last batches the log's producer state knows (at most five; one after a reopen). */
  retained: number;
}

describe('idempotent appends', () => {
  it('duplicates of the last five batches return the original offsets; gaps, older retries and stale epochs are refused', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
        const dir = path.join(makeTempDir(), 'idem-0');
        let log = Log.open(dir, { config: { flushMode: 'async' } });
        const model = new Map<number, ModelProducer>();
        let nextOffset = 0;
        let accepted = 0;
        let value = 0;
        const records = (n: number) => Array.from({ length: n }, () => ({ key: null, value: Buffer.from(`v${value++}`) }));
        // Refusals throw at the call, as append's other argument checks do; nothing is appended.
        const refused = async (p: () => Promise<unknown>) => {
          const e = await Promise.resolve().then(p).then(() => undefined, (err: unknown) => err);
          expect(e).toBeInstanceOf(LogtoolError);
          expect((e as LogtoolError).kind).toBe('refused');
        };
        try {
          for (const op of ops) {
            if (op.kind === 'reopen') {
              await log.close();
              log = Log.open(dir, { config: { flushMode: 'async' } });
              // Loaded from the snapshot close took: Kafka's snapshot entry holds a producer's last batch only.
              for (const mp of model.values()) mp.retained = Math.min(mp.retained, 1);
              continue;
            }
            const m = model.get(op.pid);
            const append = (epoch: number, firstSeq: number, count: number) => log.append(records(count), { producerId: op.pid, producerEpoch: epoch, baseSequence: firstSeq });
            const accept = async (epoch: number, firstSeq: number, count: number) => {
              const r = await append(epoch, firstSeq, count);
              expect([r.baseOffset, r.lastOffset, r.duplicate]).toEqual([nextOffset, nextOffset + count - 1, undefined]);
              const mp = m && m.epoch === epoch ? m : { epoch, lastSeq: -1, history: [], retained: 0 };
              mp.history.push({ firstSeq, count, baseOffset: nextOffset });
              mp.retained = Math.min(mp.retained + 1, 5);
              mp.lastSeq = firstSeq + count - 1;
              model.set(op.pid, mp);
              nextOffset += count;
              accepted += count;
            };
            if (op.kind === 'next') await accept(m?.epoch ?? 0, m ? m.lastSeq + 1 : 0, op.count);
            else if (op.kind === 'retry') {
              const sent = m?.history[m.history.length - op.back];
              if (!m || !sent) continue;
              if (op.back <= m.retained) {
                const r = await append(m.epoch, sent.firstSeq, sent.count);
                expect([r.baseOffset, r.lastOffset, r.duplicate]).toEqual([sent.baseOffset, sent.baseOffset + sent.count - 1, true]);
              } else await refused(() => append(m.epoch, sent.firstSeq, sent.count));
            } else if (op.kind === 'gap') {
              if (!m) await accept(0, op.skip, op.count); // unknown producer: any first sequence
              else await refused(() => append(m.epoch, m.lastSeq + 1 + op.skip, op.count));
            } else if (op.kind === 'stale') {
              if (m && m.epoch > 0) await refused(() => append(m.epoch - 1, 0, 1));
            } else {
              const epoch = (m?.epoch ?? 0) + 1;
              if (op.firstSeq === 0 || !m) await accept(epoch, op.firstSeq, op.count);
              else await refused(() => append(epoch, op.firstSeq, op.count));
            }
          }
          expect(log.nextOffset).toBe(nextOffset);
          const read = [...log.read()];
          expect(read.length).toBe(accepted);
          expect(read.map((r) => r.offset)).toEqual(read.map((_, i) => i));
          expect(new Set(read.map((r) => r.value!.toString())).size).toBe(accepted);
        } finally {
          await log.close();
        }
      }),
      { numRuns: 40 },
    );
  }, 300_000);
});
