/**
 * Issue 9 item 19: `recover` without `--full` trusts segments (after a clean shutdown, or below
 * the recovery point) and must say which, pointing to `--full`, instead of calling a log with a
 * corrupt trusted batch "already consistent"; and `verify` and `recover --dry-run` agree on index
 * files by Kafka's rules (LogLoader / LogSegment.sanityCheck): a missing `.index` is rebuilt, a
 * missing `.timeindex` recreated empty (both: something to repair), a missing `.txnindex` means no
 * aborted transactions (nothing to repair), an insane `.txnindex` makes Kafka recover the segment.
 * The built CLI runs in child processes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log, type LogConfig } from '../../src/api.js';
import { cli } from '../helpers/cli.js';
import { ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

beforeAll(() => {
  ensureBuilt();
}, 120_000);
afterAll(removeTempDirs);

const config: Partial<LogConfig> = { flushMode: 'async', segmentBytes: 800, indexIntervalBytes: 100 };
const name = (base: number, suffix: string) => `${String(base).padStart(20, '0')}${suffix}`;

/** A cleanly closed log of several segments (marker written: the only partition of its log dir). */
async function makeLog(): Promise<string> {
  const dir = path.join(makeTempDir('logtool-agree-'), 'orders-0');
  const log = Log.open(dir, { config });
  for (let i = 0; i < 40; i++) await log.append([{ key: Buffer.from(`k${i}`), value: Buffer.from(`value ${i} ${'#'.repeat(60)}`), timestamp: 1_700_000_000_000 + i }]);
  await log.close();
  return dir;
}

const bases = (dir: string) =>
  fs
    .readdirSync(dir)
    .filter((n) => /^\d{20}\.log$/.test(n))
    .map((n) => Number(n.slice(0, 20)))
    .sort((a, b) => a - b);

describe('recover without --full names the segments it did not check', () => {
  it('a corrupt batch in a trusted segment: not "already consistent", the segment named, --full pointed to; verify finds it', async () => {
    const dir = await makeLog();
    expect(bases(dir).length).toBeGreaterThan(2);
    const first = path.join(dir, name(0, '.log'));
    const bytes = fs.readFileSync(first);
    bytes[100] ^= 0xff; // inside the first batch: its CRC no longer matches
    fs.writeFileSync(first, bytes);

    const text = await cli('recover', dir, '--no-progress');
    expect(text.code, text.stderr).toBe(0); // nothing was repaired
    expect(text.stdout).not.toMatch(/already consistent/);
    expect(text.stdout).toMatch(/not checked .*00000000000000000000\.log/);
    expect(text.stdout).toMatch(/--full/);

    const json = await cli('recover', dir, '--json', '--no-progress');
    const report = JSON.parse(json.stdout);
    expect(report.status).toBe('not-fully-checked');
    expect(report.segmentsNotChecked).toContain(first);

    const verify = await cli('verify', dir, '--no-progress');
    expect(verify.code).toBe(3);
    expect(verify.stdout).toContain(`${first} at byte 0`);
    const full = await cli('recover', dir, '--full', '--dry-run', '--no-progress');
    expect(full.code).toBe(3);
    expect(full.stdout).toMatch(/would truncate\s+00000000000000000000\.log at byte 0/);
  });

  it('a log whose every segment was validated is "already consistent"', async () => {
    const dir = await makeLog();
    const r = await cli('recover', dir, '--full', '--json', '--no-progress');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'consistent', segmentsNotChecked: [] });
  });
});

describe('verify and recover --dry-run agree on index files, by Kafka’s rules', () => {
  type Damage = { what: string; expected: 0 | 3; apply: (dir: string, sealed: number, active: number) => void };
  const damages: Damage[] = [
    { what: 'nothing', expected: 0, apply: () => {} },
    { what: 'no .txnindex (no aborted transactions)', expected: 0, apply: (dir) => expect(fs.readdirSync(dir).some((n) => n.endsWith('.txnindex'))).toBe(false) },
    { what: 'missing sealed .index', expected: 3, apply: (dir, s) => fs.rmSync(path.join(dir, name(s, '.index'))) },
    { what: 'missing sealed .timeindex', expected: 3, apply: (dir, s) => fs.rmSync(path.join(dir, name(s, '.timeindex'))) },
    { what: 'missing active .index', expected: 3, apply: (dir, _s, a) => fs.rmSync(path.join(dir, name(a, '.index'))) },
    { what: 'missing active .timeindex', expected: 3, apply: (dir, _s, a) => fs.rmSync(path.join(dir, name(a, '.timeindex'))) },
    {
      what: 'insane sealed .txnindex (version 7)',
      expected: 3,
      apply: (dir, s) => {
        const entry = Buffer.alloc(34);
        entry.writeInt8(7, 0);
        fs.writeFileSync(path.join(dir, name(s, '.txnindex')), entry);
      },
    },
  ];
  it.concurrent.each(damages.map((d) => [d.what, d] as const))('%s', async (_what, d) => {
    const dir = await makeLog();
    const b = bases(dir);
    d.apply(dir, b[1]!, b[b.length - 1]!);
    const [verify, dry] = await Promise.all([cli('verify', dir, '--no-progress'), cli('recover', dir, '--dry-run', '--no-progress')]);
    expect({ verify: verify.code, recoverDryRun: dry.code }, `${verify.stdout}\n${dry.stdout}`).toEqual({ verify: d.expected, recoverDryRun: d.expected });
  });
});
