/**
 * Tests that run the built CLI or engine in child processes need dist/ current. ensureBuilt()
 * compiles with `tsc -p tsconfig.json` unless every dist/*.js is newer than its source; an
 * exclusive file lock makes parallel test files build once, and none of them starts children
 * while another rewrites dist/.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { repoRoot } from './fixtures.js';

const require = createRequire(import.meta.url);
const fsExt: { flockSync(fd: number, flags: 'ex' | 'un'): void } = require('fs-ext');

export const distDir = path.join(repoRoot, 'dist');
export const cliPath = path.join(distDir, 'cli.js');
export const engineEntry = path.join(distDir, 'api.js');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function upToDate(): boolean {
  const src = path.join(repoRoot, 'src');
  for (const f of sources(src)) {
    const js = path.join(distDir, path.relative(src, f)).replace(/\.ts$/, '.js');
    const built = fs.statSync(js, { throwIfNoEntry: false });
    if (!built || built.mtimeMs < fs.statSync(f).mtimeMs) return false;
  }
  return true;
}

export function ensureBuilt(): void {
  const lockDir = path.join(repoRoot, '.vitest-tmp');
  fs.mkdirSync(lockDir, { recursive: true });
  const fd = fs.openSync(path.join(lockDir, 'build.lock'), 'w');
  try {
    fsExt.flockSync(fd, 'ex');
    if (upToDate()) return;
    try {
      execFileSync(process.execPath, [path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: repoRoot, stdio: 'pipe' });
    } catch (e) {
      // Type errors still emit JavaScript; only a missing build is fatal here.
      if (!fs.existsSync(cliPath) || !fs.existsSync(engineEntry)) throw e;
      const out = (e as { stdout?: Buffer }).stdout?.toString() ?? '';
      process.stderr.write(`warning: tsc reported errors; testing the JavaScript it emitted\n${out.slice(0, 2000)}\n`);
    }
  } finally {
    fs.closeSync(fd); // drops the lock
  }
}
