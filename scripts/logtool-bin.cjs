#!/usr/bin/env node
// The package's bin (copied to dist/bin/logtool.cjs by scripts/bundle-cli.mjs): runs the bundled
// program (main.cjs, src/program.ts with what it imports) on this process. CommonJS, so that no
// ES module loader starts: a process then costs little more than `node -e 0` (issue 15).
//
// The chunks beside this file are compiled with V8's code cache (`<chunk>.cache`, written at build
// time by writeCodeCache after a few typical runs), which spares parsing and compiling what those
// runs used. A cache is used only for the chunk it was made from (its size and mtime are the
// cache's first 16 bytes); V8 itself rejects one from another Node.js version, and the chunk is
// then compiled as usual.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');

const HEADER_BYTES = 16;
/** The chunks this process compiled, for writeCodeCache. */
const compiled = new Map();

/** The cache made from exactly this chunk, if there is one. */
function cacheFor(filename, stat) {
  let bytes;
  try {
    bytes = fs.readFileSync(`${filename}.cache`);
  } catch {
    return undefined;
  }
  const same = bytes.length > HEADER_BYTES && bytes.readDoubleLE(0) === stat.size && bytes.readDoubleLE(8) === stat.mtimeMs;
  return same ? bytes.subarray(HEADER_BYTES) : undefined;
}

const plain = Module._extensions['.js'];
Module._extensions['.cjs'] = function loadChunk(module, filename) {
  if (path.dirname(filename) !== __dirname) return plain(module, filename);
  const fd = fs.openSync(filename, 'r');
  let source;
  let stat;
  try {
    stat = fs.fstatSync(fd);
    source = fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const cachedData = cacheFor(filename, stat);
  const script = new vm.Script(wrapped, { filename, cachedData });
  compiled.set(filename, { script, stat, cacheUsed: cachedData !== undefined && !script.cachedDataRejected });
  const require = (id) => module.require(id);
  script.runInThisContext().call(module.exports, module.exports, require, module, filename, __dirname);
};

/** Writes each compiled chunk's code cache, with what V8 compiled while it ran (the build's job). */
function writeCodeCache() {
  for (const [filename, { script, stat }] of compiled) {
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeDoubleLE(stat.size, 0);
    header.writeDoubleLE(stat.mtimeMs, 8);
    fs.writeFileSync(`${filename}.cache`, Buffer.concat([header, script.createCachedData()]));
  }
  return compiled.size;
}

/** Whether each chunk compiled so far was compiled from its code cache (for the start-up test). */
const cacheUse = () => Object.fromEntries([...compiled].map(([filename, c]) => [path.basename(filename), c.cacheUsed]));

if (require.main === module) require('./main.cjs').main(process.argv.slice(2));
else module.exports = { writeCodeCache, cacheUse };
