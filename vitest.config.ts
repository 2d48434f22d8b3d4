import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker per core less one: a single worker on CI's two cores. Most
    // suites wait on child processes and fsync, so two workers finish the run in far less time.
    maxWorkers: 2,
  },
});
