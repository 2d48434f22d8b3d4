/**
 * Issue 9's "no-op changes nothing": on copies of every fixture log directory (real Kafka brokers'
 * log.dirs), `verify`, `rebuild-index --verify`, `retention --dry-run`, `compact --dry-run` and a
 * `recover` that reports nothing to repair (exit 0) leave every byte of every file of the log
 * directory as it was — the broker's clean-shutdown marker (Kafka 3.7+ keeps its broker epoch
 * there, KIP-966) and checkpoint files included — and create no file.
 *
 * Runtime: every case is covered; per case the partition with the most segments runs every command
 * as a child process of the built CLI, cases concurrently.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { ensureBuilt } from '../helpers/build.js';
import { fixturePath, makeTempDir, removeTempDirs, segmentCases, type SegmentCase } from '../helpers/fixtures.js';

beforeAll(() => {
  ensureBuilt();
}, 120_000);
afterAll(removeTempDirs);

function hashTree(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const n of fs.readdirSync(d).sort()) {
      const p = path.join(d, n);
      if (fs.statSync(p).isDirectory()) walk(p);
      else out.set(path.relative(root, p), crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex'));
    }
  };
  walk(root);
  return out;
}

function changedFiles(before: Map<string, string>, after: Map<string, string>): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((n) => before.get(n) !== after.get(n)).sort();
}

function copyCase(c: SegmentCase): string {
  const to = path.join(makeTempDir('logtool-noop-'), path.basename(c.case));
  fs.cpSync(fixturePath(c.case), to, { recursive: true });
  // The corpus is read-only; the copies must be writable like a broker's.
  const chmod = (p: string) => {
    fs.chmodSync(p, fs.statSync(p).isDirectory() ? 0o755 : 0o644);
    if (fs.statSync(p).isDirectory()) for (const n of fs.readdirSync(p)) chmod(path.join(p, n));
  };
  chmod(to);
  return to;
}

/** The partition with the most segments (then the most data): where most can go wrong. */
function samplePartition(c: SegmentCase): string | undefined {
  const entries = Object.entries(c.partitions).filter(([name]) => fs.existsSync(fixturePath(c.case, name)));
  const bytes = ([, p]: (typeof entries)[number]) => Object.values(p.selfDecoded ?? {}).reduce((n, f) => n + f.bytes, 0);
  entries.sort((a, b) => (b[1].segments?.length ?? 0) - (a[1].segments?.length ?? 0) || bytes(b) - bytes(a) || a[0].localeCompare(b[0]));
  return entries[0]?.[0];
}

// (recover --dry-run runs inside every recover below: a recover plans as a dry run first.)
const READ_ONLY_COMMANDS: string[][] = [['verify'], ['rebuild-index', '--verify'], ['retention', '--dry-run'], ['compact', '--dry-run']];

const cases = segmentCases();

describe.runIf(cases.length > 0)('a command that repairs nothing changes no byte of a Kafka log directory', () => {
  it.concurrent.each(cases.map((c) => [c.case, c] as const))('%s', async (_name, c) => {
    const root = copyCase(c);
    const p = samplePartition(c);
    expect(p).toBeDefined();
    let recoveredConsistent = 0;
    {
      const dir = path.join(root, p!);
      for (const args of READ_ONLY_COMMANDS) {
        const before = hashTree(root);
        const r = await cli(...args, dir, '--no-progress');
        expect(r.stderr, `${args.join(' ')} ${p}`).not.toMatch(/internal error/);
        expect([0, 3], `${args.join(' ')} ${p}: ${r.stderr}`).toContain(r.code);
        expect(changedFiles(before, hashTree(root)), `${args.join(' ')} ${p}`).toEqual([]);
      }
      // A real recover: when it reports "already consistent" (exit 0), it changed nothing either.
      const before = hashTree(root);
      const r = await cli('recover', dir, '--json', '--no-progress');
      expect([0, 3], `recover ${p}: ${r.stderr}`).toContain(r.code);
      if (r.code === 0) {
        expect(['consistent', 'not-fully-checked']).toContain(JSON.parse(r.stdout).status);
        expect(changedFiles(before, hashTree(root)), `recover ${p}`).toEqual([]);
        recoveredConsistent++;
      }
    }
    // Brokers that shut down cleanly left logs that need no repair: the comparison above did run.
    if (fs.existsSync(fixturePath(c.case, '.kafka_cleanshutdown'))) expect(recoveredConsistent).toBeGreaterThan(0);
  }, 120_000);
});

describe.runIf(cases.some((c) => c.case.includes('kraft-confluentgo')))('a recover that repairs one partition of a Kafka 3.7+ log directory', () => {
  it("keeps the broker's clean-shutdown marker content (KIP-966 epoch) and the checkpoint's order", async () => {
    const c = cases.find((k) => k.case.includes('kraft-confluentgo'))!;
    const root = copyCase(c);
    const marker = fs.readFileSync(path.join(root, '.kafka_cleanshutdown'));
    expect(marker.toString()).toMatch(/"brokerEpoch":\d+/);
    const rpFile = path.join(root, 'recovery-point-offset-checkpoint');
    const original = fs.readFileSync(rpFile, 'utf8');
    expect(original).toContain('\nseasons 0 61\n');
    // Damage one partition: its recovery point lost (0), its offset index gone.
    fs.writeFileSync(rpFile, original.replace('\nseasons 0 61\n', '\nseasons 0 0\n'));
    fs.rmSync(path.join(root, 'seasons-0', '00000000000000000020.index'));
    const r = await cli('recover', path.join(root, 'seasons-0'), '--json', '--no-progress');
    expect(r.code, r.stderr).toBe(3);
    expect(JSON.parse(r.stdout).status).toBe('repaired');
    // The marker Kafka wrote comes back byte for byte; the one changed entry is back in its place.
    expect(fs.readFileSync(path.join(root, '.kafka_cleanshutdown'))).toEqual(marker);
    expect(fs.readFileSync(rpFile, 'utf8')).toBe(original);
    expect(fs.existsSync(path.join(root, 'seasons-0', '00000000000000000020.index'))).toBe(true);
  });
});
