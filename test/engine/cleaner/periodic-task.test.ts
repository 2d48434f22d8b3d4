/**
 * The background schedule of retention and compaction (cleaner/periodic-task.ts) with a fake clock
 * and a fake log: rounds run when due, keep their cadence, skip while busy or while the previous
 * round runs, and stop() waits for the round in progress.
 */
import { describe, expect, it } from 'vitest';
import { PeriodicTask } from '../../../src/engine/cleaner/periodic-task.js';
import { FakeClock } from '../../helpers/fake-clock.js';

describe('PeriodicTask', () => {
  it('runs each round when it is due, at a fixed cadence, and reports results', () => {
    const clock = new FakeClock();
    const ranAt: number[] = [];
    const results: number[] = [];
    const task = new PeriodicTask({ run: () => (ranAt.push(clock.now), ranAt.length), onResult: (r) => results.push(r), onError: () => {} }, 100, clock);
    task.start();
    expect(task.nextDueMs).toBe(1_100);
    clock.advance(99);
    expect(ranAt).toEqual([]);
    clock.advance(1);
    expect(ranAt).toEqual([1_100]);
    clock.advance(250);
    expect(ranAt).toEqual([1_100, 1_200, 1_300]);
    expect(results).toEqual([1, 2, 3]);
    expect(task.nextDueMs).toBe(1_400);
  });

  it('skips a tick while busy() says so and keeps ticking after an error', () => {
    const clock = new FakeClock();
    let busy = true;
    let runs = 0;
    const errors: unknown[] = [];
    const task = new PeriodicTask(
      {
        run: () => {
          runs++;
          throw new Error('disk gone');
        },
        busy: () => busy,
        onError: (e) => errors.push(e),
      },
      50,
      clock,
    );
    task.start();
    clock.advance(100);
    expect(runs).toBe(0);
    busy = false;
    clock.advance(100);
    expect(runs).toBe(2);
    expect(errors.map((e) => (e as Error).message)).toEqual(['disk gone', 'disk gone']);
  });

  it('never starts a round while the previous one runs, and stop() waits for it', async () => {
    const clock = new FakeClock();
    let release!: () => void;
    let started = 0;
    let finished = 0;
    const task = new PeriodicTask(
      {
        run: async () => {
          started++;
          await new Promise<void>((r) => (release = r));
          finished++;
          return finished;
        },
        onError: () => {},
      },
      10,
      clock,
    );
    task.start();
    clock.advance(10);
    expect(task.running).toBe(true);
    clock.advance(100); // ten ticks while the round runs: none starts another
    expect(started).toBe(1);
    let stopped = false;
    const stopping = task.stop().then(() => (stopped = true));
    expect(task.started).toBe(false);
    expect(clock.armed).toBe(0);
    await Promise.resolve();
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(stopped).toBe(true);
    expect(finished).toBe(1);
    expect(task.running).toBe(false);
    clock.advance(1_000);
    expect(started).toBe(1); // stopped: no more rounds
  });

  it('reports a rejected round to onError', async () => {
    const clock = new FakeClock();
    const errors: string[] = [];
    const task = new PeriodicTask({ run: () => Promise.reject(new Error('no space')), onError: (e) => errors.push((e as Error).message) }, 5, clock);
    task.start();
    clock.advance(5);
    await task.stop();
    expect(errors).toEqual(['no space']);
  });

  it('refuses a non-positive interval', () => {
    expect(() => new PeriodicTask({ run: () => 0, onError: () => {} }, 0)).toThrow(/positive interval/);
  });
});
