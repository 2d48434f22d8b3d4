#!/usr/bin/env node
// The command line as users run it (package.json "bin", issue 15): src/program.ts and what it
// imports, bundled by rolldown into CommonJS chunks in dist/bin/ — main.cjs (commander, the
// program, the command table) and one chunk per command or shared group, loaded when a command
// runs — started by logtool.cjs (scripts/logtool-bin.cjs). A process then reads a handful of
// files instead of a hundred ES modules, which was most of what start-up cost beyond `node -e 0`.
// Run after `tsc -p tsconfig.json` (npm run build): worker entries and preloads stay the compiled
// files in dist/, which the bundle names by URL (distUrls). dist/bin/manifest.json lists the
// source modules of each chunk, for the start-up test (test/commands/help-lazy.test.ts). Last,
// a child process runs the typical first commands in-process (every command's --help, an append,
// reads) and writes the chunks' V8 code caches (writeCodeCache in logtool-bin.cjs). The compiled
// dist/cli.js runs the same program unbundled.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const srcDir = path.join(root, 'src');
const distDir = path.join(root, 'dist');
export const binDir = path.join(distDir, 'bin');

/**
 * `new URL('./x.js', import.meta.url)` in src/a/b.ts names dist/a/x.js, a compiled file beside
 * b.js; from a chunk in dist/bin/ the same file is `../a/x.js`.
 */
function distUrls() {
  const pattern = /new URL\((['"])(\.{1,2}\/[^'"]+)\1, import\.meta\.url\)/g;
  return {
    name: 'dist-urls',
    transform(code, id) {
      if (!id.startsWith(srcDir) || !code.includes('import.meta.url')) return null;
      const fromDist = path.join(distDir, path.relative(srcDir, path.dirname(id)));
      const out = code.replace(pattern, (_m, q, rel) => {
        const target = path.relative(binDir, path.join(fromDist, rel)).split(path.sep).join('/');
        return `new URL(${q}${target.startsWith('.') ? target : `./${target}`}${q}, import.meta.url)`;
      });
      return out === code ? null : { code: out, map: null };
    },
  };
}

/** A module as the manifest names it: `src/…` or `node_modules/<package>/…` (node_modules may be a link). */
function moduleName(id) {
  const posix = id.split(path.sep).join('/');
  const dep = posix.lastIndexOf('/node_modules/');
  return dep >= 0 ? posix.slice(dep + 1) : path.relative(root, id).split(path.sep).join('/');
}

/** dist/bin/manifest.json: each chunk's source modules, relative to the repository. */
function manifest() {
  return {
    name: 'manifest',
    generateBundle(_options, bundle) {
      const chunks = {};
      for (const [file, chunk] of Object.entries(bundle)) {
        if (chunk.type === 'chunk') chunks[file] = chunk.moduleIds.filter((m) => path.isAbsolute(m)).map(moduleName);
      }
      this.emitFile({ type: 'asset', fileName: 'manifest.json', source: `${JSON.stringify(chunks, null, 1)}\n` });
    },
  };
}

/**
 * Runs in a child process (`node -e`, argv: the bin directory, a scratch directory): commands as a
 * user's first ones, output discarded, then the code caches of every chunk they loaded.
 */
const TRAIN = `const path = require('node:path');
const [binDir, scratch] = process.argv.slice(1);
const bin = require(path.join(binDir, 'logtool.cjs'));
const { runCli, buildProgram } = require(path.join(binDir, 'main.cjs'));
const quiet = { stdout: () => {}, stderr: () => {} };
(async () => {
  await runCli(['--help'], quiet);
  for (const c of buildProgram().commands) await runCli([c.name(), '--help'], quiet);
  const dir = path.join(scratch, 't-0');
  await runCli(['append', dir, '--value', 'hello'], quiet);
  for (const extra of [[], ['--json'], ['--batches']]) await runCli(['read', dir, ...extra], quiet);
  await runCli(['segments', dir], quiet);
  await runCli(['verify', dir], quiet);
  process.exitCode = 0;
  bin.writeCodeCache();
})();`;

function writeCodeCaches() {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'logtool-bundle-'));
  try {
    execFileSync(process.execPath, ['-e', TRAIN, binDir, scratch], { stdio: ['ignore', 'ignore', 'inherit'] });
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

export async function bundleCli() {
  fs.rmSync(binDir, { recursive: true, force: true });
  await build({
    input: { main: path.join(srcDir, 'program.ts') },
    platform: 'node',
    // Native add-ons load through createRequire when first used; they are never bundled.
    external: [/^node:/, 'fs-ext', 'lz4-napi', 'snappy', 'zstd-napi', /^zstd-napi\//, '@node-rs/crc32', /^sse4_crc32\//],
    plugins: [distUrls(), manifest()],
    // Modules the commands share with the program (errors, commander) stay in main.cjs.
    preserveEntrySignatures: 'allow-extension',
    logLevel: 'warn',
    output: { dir: binDir, format: 'cjs', entryFileNames: '[name].cjs', chunkFileNames: '[name].cjs' },
  });
  fs.copyFileSync(path.join(root, 'scripts', 'logtool-bin.cjs'), path.join(binDir, 'logtool.cjs'));
  fs.chmodSync(path.join(binDir, 'logtool.cjs'), 0o755);
  writeCodeCaches();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await bundleCli();
