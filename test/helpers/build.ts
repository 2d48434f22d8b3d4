/**
 * Tests that run the built CLI or engine in child processes need dist/ current. ensureBuilt()
 * compiles with `tsc -p tsconfig.json` unless every dist/*.js is newer than its source, and
 * bundles the CLI (scripts/bundle-cli.mjs, the package's bin) unless the bundle is newer than every
 * source; an exclusive file lock makes parallel test files build once, and none of them starts
 * children while another rewrites dist/.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeTempDir, repoRoot } from './fixtures.js';

const require = createRequire(import.meta.url);
const fsExt: { flockSync(fd: number, flags: 'ex' | 'un'): void } = require('fs-ext');

export const distDir = path.join(repoRoot, 'dist');
/** The CLI as users run it: the package's bin, bundled. */
export const cliPath = path.join(distDir, 'bin', 'logtool.cjs');
/** The same program compiled, unbundled: for preloads that install layers into dist/'s own modules (fault-preload.mjs). */
export const compiledCliPath = path.join(distDir, 'cli.js');
const bundleManifest = path.join(distDir, 'bin', 'manifest.json');
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

/** Whether tsc's output and the bundle are each newer than every source they are built from. */
function upToDate(): { compiled: boolean; bundled: boolean } {
  const src = path.join(repoRoot, 'src');
  const bundle = fs.statSync(bundleManifest, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  let compiled = true;
  let bundled = bundle > 0;
  for (const f of sources(src)) {
    const js = path.join(distDir, path.relative(src, f)).replace(/\.ts$/, '.js');
    const built = fs.statSync(js, { throwIfNoEntry: false });
    const srcMs = fs.statSync(f).mtimeMs;
    if (!built || built.mtimeMs < srcMs) compiled = false;
    if (bundle < srcMs) bundled = false;
  }
  for (const f of ['bundle-cli.mjs', 'logtool-bin.cjs']) if (bundle < fs.statSync(path.join(repoRoot, 'scripts', f)).mtimeMs) bundled = false;
  return { compiled, bundled };
}

export function ensureBuilt(): void {
  const lockDir = path.join(repoRoot, '.vitest-tmp');
  fs.mkdirSync(lockDir, { recursive: true });
  const fd = fs.openSync(path.join(lockDir, 'build.lock'), 'w');
  try {
    fsExt.flockSync(fd, 'ex');
    const current = upToDate();
    if (current.compiled && current.bundled) return;
    if (!current.compiled) compile();
    execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'bundle-cli.mjs')], { cwd: repoRoot, stdio: 'pipe' });
  } finally {
    fs.closeSync(fd); // drops the lock
  }
}

/** tsc's output in dist/ (the engine, workers, preloads and the compiled CLI). */
function compile(): void {
  try {
    execFileSync(process.execPath, [path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: repoRoot, stdio: 'pipe' });
  } catch (e) {
    // Type errors still emit JavaScript; only a missing build is fatal here.
    if (!fs.existsSync(compiledCliPath) || !fs.existsSync(engineEntry)) throw e;
    const out = (e as { stdout?: Buffer }).stdout?.toString() ?? '';
    process.stderr.write(`warning: tsc reported errors; testing the JavaScript it emitted\n${out.slice(0, 2000)}\n`);
  }
}

/**
 * A child process's script (an ES module in a temporary directory) made from `source`, which is
 * given the built engine's URL to import, once dist/ is current (ensureBuilt). Returns its path.
 */
export function builtEngineChild(tempPrefix: string, source: (engineUrl: string) => string): string {
  ensureBuilt();
  const script = path.join(makeTempDir(tempPrefix), 'child.mjs');
  fs.writeFileSync(script, source(pathToFileURL(engineEntry).href));
  return script;
}
