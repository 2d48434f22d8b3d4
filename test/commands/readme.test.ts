/**
 * The README says what the code does (issue 14): its shell examples run as written (in a scratch
 * directory: `logdata/...` is seeded with demo records, `/var/lib/kafka/data/payments-3` is a copy
 * of a broker partition from the fixtures), the `lost+found/` names it shows are the ones recovery
 * writes, and the shape it gives for `positions()` is the object the engine returns.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { ensureBuilt } from '../helpers/build.js';
import { cli, sh } from '../helpers/cli.js';
import { fixturePath, makeTempDir, removeTempDirs, repoRoot, requireFixtures, segmentCases } from '../helpers/fixtures.js';

requireFixtures(import.meta.url);
beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');

/** The lines of the README's ```sh blocks that run logtool (or the built CLI). */
function shellExamples(): string[] {
  const lines: string[] = [];
  for (const block of readme.matchAll(/^```sh\n([\s\S]*?)^```/gm)) {
    for (const line of block[1]!.split('\n')) if (/(^|\|\s*)(logtool|node dist\/cli\.js) /.test(line)) lines.push(line);
  }
  return lines;
}

/** A broker partition with at least one batch, copied to <root>/var/lib/kafka/data/payments-3. */
function brokerPartition(root: string): string {
  const dest = path.join(root, 'var', 'lib', 'kafka', 'data', 'payments-3');
  fs.mkdirSync(dest, { recursive: true });
  // One with batches and every file present (no index left out of the corpus as all zeros).
  const pick = segmentCases()
    .flatMap((c) => Object.entries(c.partitions).map(([partition, p]) => ({ c, partition, p })))
    .find(({ c, partition, p }) => !p.empty && Object.values(p.selfDecoded ?? {}).some((f) => f.batches > 0) && c.absentFiles.every((a) => !a.path.startsWith(`${partition}/`)));
  expect(pick, 'a fixture partition with batches').toBeDefined();
  const src = fixturePath(pick!.c.case, pick!.partition);
  for (const name of fs.readdirSync(src)) if (fs.statSync(path.join(src, name)).isFile()) fs.copyFileSync(path.join(src, name), path.join(dest, name));
  return dest;
}

describe('README examples', () => {
  it('every logtool example in the README runs as written (exit 0) on a demo directory', async () => {
    const examples = shellExamples();
    expect(examples.length).toBeGreaterThanOrEqual(5);
    const root = makeTempDir('logtool-readme-');
    brokerPartition(root);
    // The demo partition the examples read: 250 records with keys order-0..order-49, timestamps in 2026-11-30.
    const log = Log.open(path.join(root, 'logdata', 'orders-0'));
    const t0 = Date.parse('2026-11-30T00:00:00Z');
    for (let i = 0; i < 250; i++) await log.append([{ key: Buffer.from(`order-${i % 50}`), value: Buffer.from(JSON.stringify({ total: i })), timestamp: t0 + i * 1000 }]);
    await log.close();
    for (const example of examples) {
      // Absolute broker paths point into the scratch directory; `logtool` is the built CLI.
      const line = example.replaceAll('/var/lib/kafka/', `${root}/var/lib/kafka/`);
      const r = await sh(`cd ${JSON.stringify(root)} && logtool() { "$NODE" "$CLI" "$@"; } && ${line.replace(/^node dist\/cli\.js /, 'logtool ')}`);
      expect(r.code, `${example}\n${r.stderr}`).toBe(0);
      expect(r.stderr, example).toBe('');
      if (!line.includes(' append ')) expect(r.stdout.length, example).toBeGreaterThan(0);
    }
  }, 240_000);
});

describe('README facts', () => {
  it("lost+found names are the ones recovery writes: '<file>.bytes-<from>-<to>.<time>' and '<file>.dropped.<time>'", async () => {
    const documented = /lost\+found\/`, named[\s\S]*?\(`([^`]+)`[\s\S]*?`([^`]+\.dropped\.[^`]+)`/.exec(readme);
    expect(documented, 'the README names the files in lost+found/').not.toBeNull();
    const [cut, dropped] = [documented![1]!, documented![2]!];
    const toPattern = (name: string) => new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\d{5,}/, '\\d{20}').replace(/\\<time\\>|<time>/, '\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d-\\d{3}Z').replace(/-\d+-\d+/, '-\\d+-\\d+').replace(/<segment>/, '\\d{20}')}$`);
    // A log of three segments; garbage after a batch of the first one: recovery cuts its tail
    // and drops the later segments (Kafka's rule), keeping both in lost+found/.
    const dir = path.join(makeTempDir(), 'lf-0');
    const log = Log.open(dir, { config: { segmentBytes: 200 } });
    for (let i = 0; i < 12; i++) await log.append([{ key: null, value: Buffer.alloc(40, i) }]);
    await log.close();
    const first = path.join(dir, '00000000000000000000.log');
    const size = fs.statSync(first).size;
    fs.appendFileSync(first, Buffer.alloc(30, 0xff));
    const r = await cli('recover', dir, '--full');
    expect(r.code, r.stderr).toBe(3);
    const names = fs.readdirSync(path.join(dir, 'lost+found'));
    const cutName = names.find((n) => n.includes('.bytes-'));
    expect(cutName).toMatch(new RegExp(`^00000000000000000000\\.log\\.bytes-${size}-${size + 30}\\.`));
    expect(cutName).toMatch(toPattern(cut));
    const droppedNames = names.filter((n) => n.includes('.dropped.'));
    expect(droppedNames.length).toBeGreaterThan(0);
    for (const n of droppedNames.filter((d) => d.includes('.log.'))) expect(n).toMatch(toPattern(dropped));
    for (const n of droppedNames) expect(n).toMatch(/^\d{20}\.(log|index|timeindex)\.dropped\./);
  });

  it("positions() has the fields the README lists", async () => {
    const line = /log\.positions\(\);\s*\/\/ \{ ([^}]+) \}/.exec(readme);
    expect(line, 'the README shows positions()').not.toBeNull();
    const documented = line![1]!.split(',').map((s) => s.trim().split(/[\s:]/)[0]);
    const log = Log.open(path.join(makeTempDir(), 'p-0'));
    await log.append([{ key: null, value: Buffer.from('v') }]);
    const p = log.positions();
    await log.close();
    expect(documented.sort()).toEqual(Object.keys(p).sort());
    expect(Object.keys(p.written).sort()).toEqual(['offset', 'position', 'segment']);
  });
});
