// Preloaded with `node --import` by tests of start-up (test/commands/help-lazy.test.ts): appends every
// module the process loads — ES modules as resolved URLs, CommonJS and native add-ons by request,
// CommonJS files (the bundled CLI's chunks) also by absolute path — one per line to the file named
// by LOGTOOL_MODULE_TRACE.
import fs from 'node:fs';
import Module, { register } from 'node:module';

const file = process.env.LOGTOOL_MODULE_TRACE;
if (file) {
  // The resolve hook runs on the loader's thread: it appends there, synchronously.
  const hook = `import fs from 'node:fs'; let file;
export function initialize(data) { file = data.file; }
export async function resolve(s, c, next) { const r = await next(s, c); fs.appendFileSync(file, r.url + '\\n'); return r; }`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`, { data: { file } });
  const load = Module._load;
  Module._load = function (request, ...rest) {
    fs.appendFileSync(file, `${request}\n`);
    return load.call(this, request, ...rest);
  };
  const loadFile = Module.prototype.load;
  Module.prototype.load = function (filename) {
    fs.appendFileSync(file, `${filename}\n`);
    return loadFile.call(this, filename);
  };
}
