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
];

const isNumber = (x: unknown): boolean => typeof x === 'number' && Number.isFinite(x) && x >= 0;

describe('bench --quick --json', () => {
  it('reports every scenario with numbers, and removes its scratch directory', () => {
    const parent = makeTempDir('logtool-bench-test-');
    const r = spawnSync(process.execPath, [cliPath, 'bench', parent, '--quick', '--json'], { encoding: 'utf8', timeout: 120_000 });
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
