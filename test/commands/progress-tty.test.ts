/**
 * The progress line (src/render/progress.ts) of the long commands: in a real pseudo-terminal
 * (util-linux `script`) a long verify shows counts, rate and ETA on stderr and erases the line
 * before its report; the same command on a pipe prints no progress and no escape code at all.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { describeCounts, fitWidth, formatDuration } from '../../src/render/progress.js';
import { ensureBuilt, cliPath } from '../helpers/build.js';
import { run } from '../helpers/cli.js';
import { removeTempDirs, tempPartitionPath } from '../helpers/fixtures.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

/** A partition large enough that `verify --deep` takes well over a second: ~22 MiB in 20000 batches. */
async function bigPartition(): Promise<string> {
  const dir = tempPartitionPath('big-0');
  const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 8 << 20 } });
  const value = Buffer.alloc(200, 'x');
  let pending: Promise<unknown>[] = [];
  for (let i = 0; i < 20_000; i++) {
    const records = Array.from({ length: 5 }, (_, j) => ({ key: Buffer.from(`k${i}-${j}`), value, timestamp: 1_700_000_000_000 + i }));
    pending.push(log.append(records));
    if (pending.length >= 256) {
      await Promise.all(pending);
      pending = [];
    }
  }
  await Promise.all(pending);
  await log.close();
  return dir;
}

/** Runs a command line in a pseudo-terminal (stdout and stderr both the terminal), CI unset. */
const inTerminal = (command: string) => run('script', ['-qfec', command, '/dev/null'], { CI: undefined as unknown as string, NO_COLOR: '1' }, 120_000);

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe('progress on a terminal, nothing on a pipe', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await bigPartition();
  }, 120_000);

  it('a long verify on a terminal draws counts, rate and ETA, then erases the line before its report', async () => {
    const r = await inTerminal(`${shellQuote(process.execPath)} ${shellQuote(cliPath)} verify --deep ${shellQuote(dir)}`);
    expect(r.code).toBe(0);
    const draws = r.stdout.split('\r').filter((s) => s.includes('verifying'));
    expect(draws.length).toBeGreaterThan(0);
    // One of them shows bytes done of the total, a percentage and a rate.
    expect(draws.some((d) => /verifying .*big-0: [\d.]+ (B|KiB|MiB) of [\d.]+ MiB \(\d+%\), [\d.]+ (KiB|MiB)\/s/.test(d))).toBe(true);
    // The last draw is erased (\r + erase-to-end) before the report's first line.
    const report = r.stdout.indexOf('Verified ');
    expect(report).toBeGreaterThan(0);
    expect(r.stdout.slice(0, report).endsWith('\r\x1b[K')).toBe(true);
    expect(r.stdout).toContain('Everything checks out.');
    // NO_COLOR: the only escape code is the erase sequence, never a colour.
    expect(r.stdout).not.toMatch(/\x1b\[[0-9;]*m/);
  }, 120_000);

  it('append from a large input on a terminal: progress with counts, and every --json line starts on a clean line', async () => {
    const root = path.dirname(dir);
    const input = path.join(root, 'lines.txt');
    // Progress draws first REDRAW_INTERVAL_MS (100 ms) after it starts, so that a short command shows
    // none: the input must take clearly longer than that to append. 200,000 lines took under 100 ms
    // on a fast run (a CI run failed so); 2,000,000 (about 24 MB) take several hundred.
    fs.writeFileSync(input, Array.from({ length: 2_000_000 }, (_, i) => `line-${i}`).join('\n') + '\n');
    const target = path.join(root, 'lines-0');
    const r = await inTerminal(`${shellQuote(process.execPath)} ${shellQuote(cliPath)} append ${shellQuote(target)} --lines --flush async --json --input ${shellQuote(input)}`);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\r').some((d) => /appending .*: [\d.]+ (KiB|MiB) of [\d.]+ MiB \(\d+%\)/.test(d))).toBe(true);
    const acks = [...r.stdout.matchAll(/\{"baseOffset"/g)].map((m) => m.index!);
    expect(acks.length).toBeGreaterThanOrEqual(200); // batches of ≤ 1000 records, also cut where an input chunk ends
    // Each acknowledgement line begins after a newline, or right after the progress line was erased.
    for (const at of acks) expect(at === 0 || r.stdout[at - 1] === '\n' || r.stdout.slice(at - 4, at) === '\r\x1b[K', r.stdout.slice(Math.max(0, at - 80), at)).toBe(true);
  }, 120_000);

  it('the same verify on a pipe prints no progress and no escape codes', async () => {
    const r = await run(process.execPath, [cliPath, 'verify', '--deep', dir], { CI: undefined as unknown as string, NO_COLOR: undefined as unknown as string });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).not.toContain('\x1b');
    expect(r.stdout).not.toContain('\r');
    expect(r.stdout).toContain('Everything checks out.');
  }, 120_000);

  it('CI set: no progress even on a terminal', async () => {
    const r = await run('script', ['-qfec', `${shellQuote(process.execPath)} ${shellQuote(cliPath)} verify ${shellQuote(dir)}`, '/dev/null'], { CI: 'true' }, 120_000);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('verifying');
    expect(r.stdout).not.toContain('\x1b');
  }, 120_000);
});

describe('describeCounts', () => {
  it('with a total: done of total, percentage, rate and ETA; without: done and rate', () => {
    expect(describeCounts(1 << 20, 4 << 20, 1000, 'bytes')).toBe('1.00 MiB of 4.00 MiB (25%), 1.00 MiB/s, ETA 3s');
    expect(describeCounts(1200, undefined, 2000, 'records')).toBe('1200 records, 600 records/s');
    expect(describeCounts(10, 10, 1000, 'segments')).toBe('10 segments of 10 segments (100%), 10 segments/s');
    expect(formatDuration(3_725_000)).toBe('1h02m');
    expect(formatDuration(61_000)).toBe('1m01s');
  });

  it('a long label gives way to the counts, keeping its start and end, within the width', () => {
    const line = fitWidth(`verifying /very/long/${'x'.repeat(100)}/orders-3`, ': 1.00 MiB of 4.00 MiB (25%)', 80);
    expect(line.length).toBeLessThanOrEqual(77);
    expect(line).toMatch(/^verifying \/very.*….*orders-3: 1\.00 MiB of 4\.00 MiB \(25%\)$/);
    expect(fitWidth('short', ': 1 records', 0)).toBe('short: 1 records');
  });
});
