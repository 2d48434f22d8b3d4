/**
 * A channel's put commits are atomic at any size, against real crashes (issue 13): a child process
 * (the built engine) commits put transactions of 5 to 44 records of ~230 bytes into a log with
 * max.message.bytes 2048 — one batch for the small ones, a logtool transaction of up to six
 * batches and a COMMIT marker for the others — and prints each commit once it resolved. The
 * parent SIGKILLs it at a seeded random moment, several times over the same log; after each kill
 * it reopens the log (recovery runs) and opens a Channel, which ends a transaction the kill left
 * open, then checks:
 *
 *  - no logtool transaction is left open;
 *  - a take (a fresh group) and a read_committed read see every commit whole or not at all, each
 *    record intact, and every commit the child had acknowledged.
 *
 * LOGTOOL_CHANNEL_KILL_TRIALS=N runs N kills (default 12), LOGTOOL_CHANNEL_KILL_SEED=S sets the seed.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Channel, Log, type LogRecord } from '../../src/api.js';
import { scanProducerState } from '../../src/engine/partition-state/isolation.js';
import { isLogtoolProducerId } from '../../src/engine/partition-state/log-transaction.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { engineEntry, ensureBuilt } from '../helpers/build.js';
import { seededRandom } from '../helpers/crash-io.js';

const TRIALS = Math.max(2, Number(process.env.LOGTOOL_CHANNEL_KILL_TRIALS ?? 12) || 12);
const SEED = Number(process.env.LOGTOOL_CHANNEL_KILL_SEED ?? Date.now() % 100_000);
const CONFIG = { flushMode: 'sync', maxMessageBytes: 2048, segmentBytes: 16_384 } as const;

const CHILD_SOURCE = (engineUrl: string): string => `
import { Log, Channel } from ${JSON.stringify(engineUrl)};
const [dir, cycle, seedText] = process.argv.slice(2);
let x = (Number(seedText) >>> 0) || 1;
const rnd = () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 4294967296; };
const out = (line) => process.stdout.write(line + '\\n'); // a pipe: synchronous on Linux
const log = Log.open(dir, { config: ${JSON.stringify(CONFIG)}, rememberConfig: false });
const channel = await Channel.open(log, { group: 'writer', capacity: 1e6, capacityBytes: 2 ** 30, transactionCapacity: 1000 });
out('O');
for (let id = 0; ; id++) {
  const n = 5 + Math.floor(rnd() * 40);
  const tx = channel.putTransaction();
  for (let k = 0; k < n; k++) tx.put({ key: Buffer.from(cycle + '-' + id), value: Buffer.from(cycle + '-' + id + ':' + k + ':' + n + ':' + 'x'.repeat(200)) });
  const r = await tx.commit();
  out('A ' + cycle + '-' + id + ' ' + n + ' ' + r.baseOffset + ' ' + r.lastOffset + ' ' + r.status);
}
`;

let childScript: string;

beforeAll(() => {
  ensureBuilt();
  childScript = path.join(makeTempDir('logtool-channel-kill-child-'), 'child.mjs');
  fs.writeFileSync(childScript, CHILD_SOURCE(pathToFileURL(engineEntry).href));
}, 120_000);
afterAll(removeTempDirs);

/** Runs the child, SIGKILLs it `delayMs` after it opened its channel; returns the commits it acknowledged. */
function runAndKill(dir: string, cycle: number, seed: number, delayMs: number): Promise<Map<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, dir, String(cycle), String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      if (buf === '' && d.toString().startsWith('O\n')) setTimeout(() => child.kill('SIGKILL'), delayMs);
      buf += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      if (signal !== 'SIGKILL') return reject(new Error(`child ended without being killed (${signal}): ${stderr}`));
      const acked = new Map<string, number>();
      for (const line of buf.split('\n').slice(0, -1)) {
        const [kind, id, n, , , status] = line.split(' ');
        if (kind === 'A') {
          expect(status).toBe('flushed');
          acked.set(id!, Number(n));
        }
      }
      resolve(acked);
    });
  });
}

/** Records grouped by commit id, each checked intact and in its commit's order. */
function commitsOf(records: Iterable<LogRecord>, where: string): Map<string, number> {
  const seen = new Map<string, number>();
  const sizes = new Map<string, number>();
  for (const r of records) {
    const m = /^(\d+-\d+):(\d+):(\d+):x{200}$/.exec(r.value?.toString() ?? '');
    if (!m || r.key?.toString() !== m[1]) throw new Error(`${where}: offset ${r.offset} is not a record as written`);
    const [, id, k, n] = m;
    if (Number(k) !== (seen.get(id!) ?? 0)) throw new Error(`${where}: commit ${id} record ${k} out of order`);
    seen.set(id!, Number(k) + 1);
    sizes.set(id!, Number(n));
  }
  for (const [id, count] of seen) if (count !== sizes.get(id)) throw new Error(`${where}: commit ${id} is partly visible: ${count} of ${sizes.get(id)} records`);
  return seen;
}

describe('channel put commits of several batches under SIGKILL', () => {
  it(`every commit is seen whole or not at all, acknowledged ones always; the next open ends the dangling transaction (seed ${SEED})`, async () => {
    const dir = path.join(makeTempDir('logtool-channel-kill-'), 'q-0');
    const rnd = seededRandom(SEED);
    const acked = new Map<string, number>();
    let danglingSeen = 0;
    let multiBatch = 0;
    for (let cycle = 0; cycle < TRIALS; cycle++) {
      const where = `cycle ${cycle} (LOGTOOL_CHANNEL_KILL_SEED=${SEED})`;
      for (const [id, n] of await runAndKill(dir, cycle, Math.floor(rnd() * 2 ** 31), 30 + Math.floor(rnd() * 900))) acked.set(id, n);
      const log = Log.open(dir, { config: CONFIG, onWarning: () => {} });
      try {
        danglingSeen += scanProducerState(log.segments).openTransactions().filter((t) => isLogtoolProducerId(t.producerId)).length;
        const channel = await Channel.open(log, { group: `check-${cycle}`, capacity: 1e6, capacityBytes: 2 ** 30, transactionCapacity: 1e6 });
        const state = scanProducerState(log.segments);
        expect(state.openTransactions(), where).toEqual([]);
        multiBatch = [...state.producers.keys()].filter(isLogtoolProducerId).length;
        const take = channel.takeTransaction();
        const taken: LogRecord[] = [];
        for (let r = take.take(); r; r = take.take()) taken.push(r);
        take.rollback();
        const viaTake = commitsOf(taken, `${where}, take`);
        const viaRead = commitsOf(log.read({ isolationLevel: 'read_committed' }), `${where}, read_committed`);
        expect([...viaTake.keys()], where).toEqual([...viaRead.keys()]);
        for (const [id, n] of acked) expect(viaRead.get(id), `${where}: acknowledged commit ${id}`).toBe(n);
      } finally {
        await log.close();
      }
    }
    console.log(`channel kill: ${TRIALS} kills, ${acked.size} commits acknowledged, ${multiBatch} transactional commits in the log, ${danglingSeen} transactions left open by a kill and ended (LOGTOOL_CHANNEL_KILL_SEED=${SEED})`);
    expect(multiBatch).toBeGreaterThan(0);
  }, 600_000);
});
