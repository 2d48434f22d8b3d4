import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Limits against a hang, not timings: a slow or busy machine (CI's, or one shared by several
    // runs) takes several times as long for the tests that run hundreds of child processes.
    testTimeout: 240_000,
    hookTimeout: 240_000,
    pool: 'forks',
    // Vitest's default is one worker per core less one: a single worker on CI's two cores. Most
    // suites wait on child processes and fsync, so two workers finish the run in far less time.
    maxWorkers: 2,
  },
});
