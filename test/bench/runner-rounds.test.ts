/**
 * How `bench` turns several rounds into one row (issue 15, "medians of repeats"): a scenario's
 * ratio is the median of its per-round ratios to the baseline that ran beside it in the same
 * round, and its rates are the median round's, so one fast round of a baseline (or a scenario)
 * does not decide a ratio.
 */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { median, pairedRatio, runBench } from '../../src/bench/runner.js';
import { singleRunResult, type BenchScenario } from '../../src/bench/types.js';

/** A scenario whose round i reports `rates[i]` records per second (1,000 records). */
function fixed(name: string, rates: number[], extra: Partial<BenchScenario> = {}): BenchScenario {
  let round = 0;
  return {
    name,
    run: async () => {
      const rate = rates[round++]!;
      // A numeric extra that is not the rate's order (the median round has 30, the median is 20), and a string.
      return singleRunResult({ records: 1000, bytes: 100_000, seconds: 1000 / rate }, 'op', { toLibrary: [10, 30, 20][round - 1]!, label: `round ${round}` });
    },
    ...extra,
  };
}

describe('bench rounds', () => {
  it('median: odd and even counts, unsorted input left as it is', () => {
    const xs = [5, 1, 3];
    expect(median(xs)).toBe(3);
    expect(xs).toEqual([5, 1, 3]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('pairs each round with the baseline round beside it and takes the median ratio', () => {
    const s = (rate: number) => ({ records: rate, bytes: rate * 100, seconds: 1, ops: 1, p50Ms: 1, p99Ms: 1, p999Ms: 1, opUnit: 'op', peakRssMB: 1, latencyHistogram: { fromMs: 0, counts: [] }, extra: {} });
    // Baseline rounds 10, 20 (a fast round), 10; scenario 8, 9, 8: paired 0.8, 0.45, 0.8.
    const r = pairedRatio([s(8), s(9), s(8)], [s(10), s(20), s(10)], 'recordsPerSec')!;
    expect(r.rounds).toEqual([0.8, 0.45, 0.8]);
    expect(r.median).toBe(0.8);
    // Best of 3 on each side would have said 9 / 20 = 0.45.
    expect(pairedRatio([s(1)], [s(0)], 'recordsPerSec')).toBeNull();
  });

  it('runBench reports the median round, paired ratios per round and a target judged on them', async () => {
    const scenarios: BenchScenario[] = [
      fixed('base', [1000, 4000, 1000], { baseline: true }),
      fixed('engine', [900, 1000, 800], { baselineName: 'base', target: { ratioAtLeast: 0.85 } }),
    ];
    const report = await runBench({ scenarios, repeat: 3, isolate: false, dir: os.tmpdir(), records: 1000, durationMs: 100 });
    const base = report.scenarios.find((x) => x.name === 'base')!;
    const engine = report.scenarios.find((x) => x.name === 'engine')!;
    expect(base.recordsPerSec).toBeCloseTo(1000, 6);
    expect(engine.recordsPerSec).toBeCloseTo(900, 6);
    expect(engine.ratioRounds).toEqual([0.9, 0.25, 0.8]);
    expect(engine.ratioToBaseline).toBeCloseTo(0.8, 9);
    expect(engine.meetsTarget).toBe(false);
    expect(engine.recordsPerSecRounds).toEqual([900, 1000, 800]);
    // Numeric extras are each the median over rounds; others come from the median round (900/s, the first).
    expect(engine.toLibrary).toBe(20);
    expect(engine.label).toBe('round 1');
    expect(report.machine.repeat).toBe(3);
  });
});
