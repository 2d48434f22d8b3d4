/**
 * `logtool verify`: a read-only check that reports every problem with its file and byte position
 * (or index entry) and exits 3, or exits 0 when all is well — on logs logtool wrote, on damaged
 * copies, and (engine API) on every broker partition in the fixtures.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { verifyLog } from '../../src/engine/recovery/log-verifier.js';
import { computeBatchCrc, encodeBatch } from '../../src/engine/format/record-batch.js';
import { segmentFileName } from '../../src/engine/segment/segment.js';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';
import { fixturesRoot, hasFixtures, removeTempDirs, segmentCases, tempPartitionPath } from '../helpers/fixtures.js';

import { requireFixtures } from '../helpers/fixtures.js';
requireFixtures(import.meta.url);

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const T0 = 1_700_000_000_000;

async function makeLog(): Promise<string> {
  const dir = tempPartitionPath('v-0');
  const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 2000, indexIntervalBytes: 200 } });
  for (let i = 0; i < 60; i++) await log.append([{ key: Buffer.from(`k${i}`), value: Buffer.from(`value-${i}-${'x'.repeat(30)}`), timestamp: T0 + i }]);
  await log.close();
  return dir;
}

const logFiles = (dir: string) => fs.readdirSync(dir).filter((n) => n.endsWith('.log')).sort();

describe('logtool verify', () => {
  it('exits 0 on a healthy log, and changes nothing', async () => {
    const dir = await makeLog();
    const before = fs.readdirSync(dir).map((n) => [n, fs.readFileSync(path.join(dir, n)).toString('hex')]);
    const r = await cli('verify', dir, '--deep', '--json');
    expect(r.code).toBe(0);
    const rep = JSON.parse(r.stdout);
    expect(rep).toMatchObject({ ok: true, problems: [], records: 60, logEndOffset: 60 });
    expect(rep.segments).toBeGreaterThan(1);
    expect(rep.indexEntries).toBeGreaterThan(0);
    expect(fs.readdirSync(dir).map((n) => [n, fs.readFileSync(path.join(dir, n)).toString('hex')])).toEqual(before);
  });

  it('names the file and byte of a flipped bit (exit 3) and keeps checking later segments', async () => {
    const dir = await makeLog();
    const files = logFiles(dir);
    const victim = path.join(dir, files[1]!);
    const buf = fs.readFileSync(victim);
    buf[200] ^= 0x10;
    fs.writeFileSync(victim, buf);
    const r = await cli('verify', dir, '--json');
    expect(r.code).toBe(3);
    const rep = JSON.parse(r.stdout);
    expect(rep.ok).toBe(false);
    expect(rep.problems[0]).toMatchObject({ file: victim });
    expect(rep.problems[0].position).toBeLessThanOrEqual(200);
    expect(rep.problems[0].message).toMatch(/CRC-32C mismatch/);
    const text = await cli('verify', dir);
    expect(text.code).toBe(3);
    expect(text.stdout).toContain(`${victim} at byte ${rep.problems[0].position}`);
  });

  it('reports a wrong index entry by entry number', async () => {
    const dir = await makeLog();
    const index = path.join(dir, segmentFileName(0, '.index'));
    const buf = fs.readFileSync(index);
    expect(buf.length).toBeGreaterThanOrEqual(8);
    buf.writeInt32BE(buf.readInt32BE(4) + 3, 4); // position no longer at a batch boundary
    fs.writeFileSync(index, buf);
    const r = await cli('verify', dir, '--json');
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).problems).toEqual([expect.objectContaining({ file: index, entry: 0 })]);
    expect((await cli('verify', dir, '--no-indexes')).code).toBe(0);
  });

  it('--deep finds a record-level fault the CRC cannot: a batch rewritten with a valid CRC', async () => {
    const dir = tempPartitionPath('d-0');
    fs.mkdirSync(dir, { recursive: true });
    const batch = encodeBatch([{ key: Buffer.from('k'), value: Buffer.from('hello'), timestamp: T0 }], { baseOffset: 0 });
    batch[61] = 0x7e; // record length varint now claims far more than the batch holds
    batch.writeUInt32BE(computeBatchCrc(batch, 0, batch.length), 17);
    fs.writeFileSync(path.join(dir, segmentFileName(0, '.log')), batch);
    // Empty indexes are valid (Kafka's rule: a missing .index or .timeindex is itself a repair).
    for (const suffix of ['.index', '.timeindex']) fs.writeFileSync(path.join(dir, segmentFileName(0, suffix)), '');
    expect((await cli('verify', dir)).code).toBe(0);
    const deep = await cli('verify', dir, '--deep', '--json');
    expect(deep.code).toBe(3);
    expect(JSON.parse(deep.stdout).problems[0].message).toMatch(/record 0/);
  });

  it('a missing directory is an operational error (exit 1)', async () => {
    const r = await cli('verify', path.join(path.dirname(tempPartitionPath()), 'nope-0'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no such directory/);
  });

  it.skipIf(!hasFixtures)('every broker partition in the fixtures verifies clean, records decoded', () => {
    let partitions = 0;
    let records = 0;
    // Index files too large for the corpus are absent from it: verify reports exactly those missing.
    const absent = new Set(segmentCases().flatMap((c) => c.absentFiles.map((a) => path.join(fixturesRoot, c.case, a.path))));
    let absentReported = 0;
    const emptied = new Set(segmentCases().flatMap((c) => (c.excludedFiles as { path: string }[]).filter((a) => a.path.endsWith('.log')).map((a) => path.join(fixturesRoot, c.case, path.dirname(a.path)))));
    for (const c of fs.readdirSync(path.join(fixturesRoot, 'segments'))) {
      for (const p of fs.readdirSync(path.join(fixturesRoot, 'segments', c))) {
        const dir = path.join(fixturesRoot, 'segments', c, p);
        if (!fs.statSync(dir).isDirectory() || !/-\d+$/.test(p)) continue;
        const log = Log.open(dir, { readOnly: true });
        try {
          const r = verifyLog(log, { deep: true });
          // Where the corpus left the .log files out (KRaft's __cluster_metadata-0), its epochs rightly start beyond the emptied log.
          const missing = r.problems.filter((p) => absent.has(p.file) && /^missing/.test(p.message));
          absentReported += missing.length;
          const beyondEmptied = r.problems.filter((p) => emptied.has(dir) && /is beyond the log end offset 0$/.test(p.message));
          expect(r.problems.filter((p) => !missing.includes(p) && !beyondEmptied.includes(p)), dir).toEqual([]);
          records += r.records;
        } finally {
          void log.close();
        }
        partitions++;
      }
    }
    expect(absentReported).toBe(absent.size);
    expect(partitions).toBeGreaterThan(500);
    expect(records).toBeGreaterThan(10_000);
  });
});
