#!/usr/bin/env node
// Runs the vitest suite and ends with one plain summary line ("N passed, N failed, N skipped"),
// which CI reads; the exit code is vitest's.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const reportFile = path.resolve('.vitest-tmp/report.json');
fs.mkdirSync(path.dirname(reportFile), { recursive: true });
fs.rmSync(reportFile, { force: true });
const args = ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`, ...process.argv.slice(2)];
const r = spawnSync('npx', args, { stdio: 'inherit' });
let code = r.status ?? 1;
try {
  const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
  const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  console.log(`\n${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);
  if (report.numTotalTests === 0) code = code || 1;
} catch {
  console.log('\n0 passed, 1 failed');
  code = code || 1;
}
process.exit(code);
