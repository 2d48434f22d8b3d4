/**
 * `logtool bench --quick --json` through the built CLI, as CI runs it: it finishes, prints the
 * documented JSON shape, and every scenario (engine scenarios and raw baselines) has numbers.
 * Speed is never judged here.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchScenarios } from '../../src/bench/scenarios.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { cliPath, ensureBuilt } from '../helpers/build.js';

beforeAll(ensureBuilt);
afterAll(removeTempDirs);

/** The scenarios and baselines the issue requires (more may exist). */
const REQUIRED = [
  'async-append-100B',
  'async-append-1KiB',
  'durable-batched-1000',
  'sync-1-producer',
  'sync-group-16',
  'sync-group-256',
  'buffered-append-100B',
  'read-decode-100B',
  'scan-crc',
  'random-lookup',
  'raw-write-100B',
  'raw-write-1KiB',
  'raw-write-fdatasync',
  'raw-fdatasync-per-1000',
  'raw-read-crc',
  // issue 15: the thread-pool hop, start-up, the CLI's pipes, peak memory of whole processes
  'raw-write-fdatasync-async',
  'raw-fdatasync-per-1000-async',
  'startup-node',
  'startup-help',
  'startup-read-1',
  'raw-pipe-to-file',
  'cli-append-lines-pipe',
  'raw-pipe-ndjson-to-file',
  'cli-append-ndjson-pipe',
  'raw-print-json',
  'cli-read-json-pipe',
  'cli-read-text-pipe',
  'memory-node',
  'memory-append-pipe',
  'memory-read-json',
  'memory-verify-deep',
];

const isNumber = (x: unknown): boolean => typeof x === 'number' && Number.isFinite(x) && x >= 0;

describe('bench --quick --json', () => {
  it('reports every scenario with numbers, and removes its scratch directory', { timeout: 320_000 }, () => {
    const parent = makeTempDir('logtool-bench-test-');
    // Whole-process scenarios start many Node.js processes: minutes on a loaded CI machine.
    const r = spawnSync(process.execPath, [cliPath, 'bench', parent, '--quick', '--json'], { encoding: 'utf8', timeout: 300_000 });
    expect(r.stderr).toBe(''); // no spinner off a terminal, no warnings
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout) as { scenarios: Record<string, unknown>[]; machine: Record<string, unknown> };
    const names = report.scenarios.map((s) => s.name);
    expect(names).toEqual(benchScenarios.map((s) => s.name));
    for (const n of REQUIRED) expect(names).toContain(n);
    for (const s of report.scenarios) {
      for (const f of ['recordsPerSec', 'mbPerSec', 'p50Ms', 'p99Ms', 'p999Ms', 'peakRssMB', 'records', 'seconds']) {
        expect(isNumber(s[f]), `${String(s.name)}.${f} = ${String(s[f])}`).toBe(true);
      }
      expect(s.records as number).toBeGreaterThan(0);
      expect(s.recordsPerSec as number).toBeGreaterThan(0);
      expect(s.p99Ms as number).toBeGreaterThanOrEqual(s.p50Ms as number);
      expect(s.p999Ms as number).toBeGreaterThanOrEqual(s.p99Ms as number);
      if (s.kind === 'scenario') {
        expect(names).toContain(s.baseline);
        expect(isNumber(s.ratioToBaseline), `${String(s.name)}.ratioToBaseline`).toBe(true);
        expect(s.ratioToBaseline as number).toBeGreaterThan(0);
      } else {
        expect(s.kind).toBe('baseline');
        expect(s.baseline).toBeNull();
        expect(s.ratioToBaseline).toBeNull();
      }
    }
    for (const f of ['cpus', 'cpuModel', 'node', 'fsType']) expect(report.machine[f]).toBeTruthy();
    // Whole processes: the child's own peak RSS (read from the child, never 0), medians beside node -e 0.
    const byName = new Map(report.scenarios.map((s) => [s.name, s]));
    for (const n of ['memory-node', 'memory-append-pipe', 'memory-read-json', 'memory-verify-deep', 'cli-read-json-pipe']) expect(byName.get(n)!.peakRssMB as number).toBeGreaterThan(10);
    expect(byName.get('memory-read-json')!.ratioMetric).toBe('peakRssMB');
    for (const n of ['startup-help', 'startup-read-1']) {
      expect(byName.get(n)!.ratioMetric).toBe('p50Ms');
      expect(isNumber(byName.get(n)!.interleavedRatio), n).toBe(true);
    }
    // The pipes carried every record: read --json printed one line per record of the data set.
    expect(byName.get('cli-read-json-pipe')!.stdoutBytes as number).toBeGreaterThan(byName.get('cli-read-json-pipe')!.records as number);
    // The scratch directory made inside `parent` is gone.
    expect(fs.readdirSync(parent)).toEqual([]);
  });

  it('--list names every scenario; an unknown scenario is a usage error', () => {
    const list = spawnSync(process.execPath, [cliPath, 'bench', '--list'], { encoding: 'utf8' });
    expect(list.status).toBe(0);
    expect(list.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0])).toEqual(benchScenarios.map((s) => s.name));
    const bad = spawnSync(process.execPath, [cliPath, 'bench', '--quick', '--scenarios', 'no-such-thing'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown scenario "no-such-thing"/);
  });
});
