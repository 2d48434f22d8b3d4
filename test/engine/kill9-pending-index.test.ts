/**
 * Index entries pending in memory (abstract-index.ts: the active segment's newest `.index` and
 * `.timeindex` entries are written at a flush, a roll, a close or when 4 KiB of them are pending)
 * against a real SIGKILL. A child process (the built engine) appends in async mode with a small
 * index interval and small segments, rolls and flushes (the recovery point checkpoint moves past
 * the sealed segments), appends more without a flush or a roll, and waits. Then:
 *
 *  - the active `.index` on disk holds fewer entries than the rebuilt one (entries are pending:
 *    the state this test is about);
 *  - a reader in another process (this one, read-only, beside the live writer) finds every record
 *    by offset and by timestamp: an index shorter than its `.log` is sparse, never wrong;
 *  - after the kill, a read-only reader and then the writer's recovery find every record, and after
 *    a clean close every segment's `.index` and `.timeindex` are byte-identical to a rebuild
 *    (LogSegment.recover): no sealed segment below the recovery point kept a short index that
 *    the loader trusts (its last time-index entry is what time retention trusts).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { rebuiltIndexes } from '../helpers/index-rebuild.js';
import { builtEngineChild } from '../helpers/build.js';

const T0 = 1_700_000_000_000;
const FLUSHED_RECORDS = 1000;
const PENDING_RECORDS = 120;
const CONFIG = { flushMode: 'async', segmentBytes: 32_768, indexIntervalBytes: 100, flushMs: 3_600_000, flushBytes: 1 << 30 };
const MAX_INDEX_BYTES = 10 * 1024 * 1024;

/** Record i's value (its bytes follow from i) and timestamp. */
const RECORD_SOURCE = `
function valueFor(i) {
  let x = (i * 2654435761) >>> 0;
  const v = Buffer.allocUnsafe(20 + (x % 90));
  for (let k = 0; k < v.length; k++) { x = (x * 1103515245 + 12345) >>> 0; v[k] = x >>> 24; }
  return v;
}
const timestampFor = (i) => ${T0} + i * 10;
`;
const { valueFor, timestampFor } = new Function(`${RECORD_SOURCE}; return { valueFor, timestampFor };`)() as {
  valueFor(i: number): Buffer;
  timestampFor(i: number): number;
};

const CHILD_SOURCE = (engineUrl: string): string => `
import { Log } from ${JSON.stringify(engineUrl)};
${RECORD_SOURCE}
const [dir] = process.argv.slice(2);
const log = Log.open(dir, { config: ${JSON.stringify(CONFIG)}, rememberConfig: false });
const append = (i) => log.append([{ key: null, value: valueFor(i), timestamp: timestampFor(i) }]);
let i = 0;
for (; i < ${FLUSHED_RECORDS}; i++) await append(i);
// A roll asks for a flush, which writes the pending entries: roll here, and flush, so that the
// appends below (about 16 KB) stay in one segment with their entries pending.
log.roll();
await log.flush({ checkpoint: true });
for (; i < ${FLUSHED_RECORDS + PENDING_RECORDS}; i++) await append(i);
const a = log.activeSegment;
process.stdout.write('R ' + log.nextOffset + ' ' + a.baseOffset + ' ' + a.offsetIndex.pendingEntries + ' ' + log.segments.length + '\\n');
setInterval(() => {}, 60_000);
`;

let childScript: string;

beforeAll(() => {
  childScript = builtEngineChild('logtool-pending-index-child-', CHILD_SOURCE);
});
afterAll(removeTempDirs);

/** Starts the child on dir; resolves with its report once it waits, and a function that SIGKILLs it. */
function startChild(dir: string): Promise<{ report: number[]; kill: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stderr = '';
    let exited: Promise<void> | undefined;
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const ended = new Promise<void>((res) => child.on('close', () => (clearTimeout(guard), res())));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      out += d;
      const m = /^R (\d+) (\d+) (\d+) (\d+)$/m.exec(out);
      if (m && !exited) {
        exited = ended;
        resolve({ report: m.slice(1).map(Number), kill: () => (child.kill('SIGKILL'), ended) });
      }
    });
    child.on('error', reject);
    void ended.then(() => {
      if (!exited) reject(new Error(`child ended before it reported: ${stderr}`));
    });
  });
}

/** Valid (non-zero) entries of an index file. */
function validEntries(file: string, entryBytes: number): number {
  const b = fs.readFileSync(file);
  let n = 0;
  while ((n + 1) * entryBytes <= b.length && b.subarray(n * entryBytes, (n + 1) * entryBytes).some((x) => x !== 0)) n++;
  return n;
}

/** Every record, looked up by its offset and by its timestamp, is the one appended there. */
function expectEveryRecord(log: Log, count: number, what: string): void {
  expect(log.nextOffset, what).toBe(count);
  for (let i = 0; i < count; i++) {
    const [r] = [...log.read({ fromOffset: i, maxRecords: 1 })];
    expect(r?.offset, `${what}: offset ${i}`).toBe(i);
    expect(r!.value!.equals(valueFor(i)), `${what}: value at ${i}`).toBe(true);
    if (i % 7 === 0) {
      const [t] = [...log.read({ fromTime: timestampFor(i), maxRecords: 1 })];
      expect(t?.offset, `${what}: timestamp of ${i}`).toBe(i);
    }
  }
}

const name = (base: number, suffix: string) => `${String(base).padStart(20, '0')}${suffix}`;

describe('index entries pending in memory, against SIGKILL', () => {
  it('readers beside the writer and after the kill find every record; recovery leaves every index equal to a rebuild', async () => {
    const dir = path.join(makeTempDir('logtool-pending-index-'), 'p-0');
    const total = FLUSHED_RECORDS + PENDING_RECORDS;
    const { report, kill } = await startChild(dir);
    const [next, activeBase, pending, segmentCount] = report as [number, number, number, number];
    expect(next).toBe(total);
    expect(segmentCount).toBeGreaterThan(3);
    expect(pending).toBeGreaterThan(10);
    try {
      // The active .index on disk lacks the pending entries (a rebuild of a copy has them all).
      const live = validEntries(path.join(dir, name(activeBase, '.index')), 8);
      const rebuilt = rebuiltIndexes(dir, [activeBase], CONFIG.indexIntervalBytes, MAX_INDEX_BYTES).get(activeBase)!;
      expect(live + pending).toBe(rebuilt.index.length / 8);

      const reader = Log.open(dir, { readOnly: true });
      try {
        expectEveryRecord(reader, total, 'a reader beside the writer');
      } finally {
        await reader.close();
      }
    } finally {
      await kill();
    }

    const afterKill = Log.open(dir, { readOnly: true });
    try {
      expectEveryRecord(afterKill, total, 'a reader after the kill');
    } finally {
      await afterKill.close();
    }
    const writer = Log.open(dir, { config: CONFIG as never });
    expect(writer.loadReport.cleanShutdown).toBe(false);
    expectEveryRecord(writer, total, 'the writer after recovery');
    await writer.close();

    const bases = fs.readdirSync(dir).filter((n) => n.endsWith('.log')).map((n) => Number(n.slice(0, 20)));
    expect(bases.length).toBe(segmentCount);
    for (const [base, r] of rebuiltIndexes(dir, bases, CONFIG.indexIntervalBytes, MAX_INDEX_BYTES)) {
      expect(fs.readFileSync(path.join(dir, name(base, '.index'))).toString('hex'), name(base, '.index')).toBe(r.index.toString('hex'));
      expect(fs.readFileSync(path.join(dir, name(base, '.timeindex'))).toString('hex'), name(base, '.timeindex')).toBe(r.timeindex.toString('hex'));
    }
  }, 120_000);
});
