// Preloaded into a real `logtool` child process (node --import this-file dist/cli.js …) by
// fault-child.test.ts: installs a layer in front of the OS file calls that makes call number
// LOGTOOL_FAULT_CALL fail with LOGTOOL_FAULT_ERRNO (default EIO), and writes the number of calls
// made to LOGTOOL_FAULT_COUNT_FILE at exit. Test-only: nothing in src reads these variables.
import fs from 'node:fs';
import { installIO, nativeIO } from '../../dist/engine/io.js';
import { ioError } from '../../dist/engine/errors.js';

const failAt = Number(process.env.LOGTOOL_FAULT_CALL ?? 0);
const errno = process.env.LOGTOOL_FAULT_ERRNO ?? 'EIO';
const countFile = process.env.LOGTOOL_FAULT_COUNT_FILE;
let calls = 0;

const layer = {};
for (const [name, fn] of Object.entries(nativeIO)) {
  layer[name] = (...args) => {
    calls++;
    if (calls === failAt) {
      const where = typeof args[0] === 'string' ? args[0] : `fd ${args[0]}`;
      const err = ioError(Object.assign(new Error(`injected ${errno}`), { code: errno }), where, `${name} (injected fault)`);
      if (name.endsWith('Async')) return Promise.reject(err);
      throw err;
    }
    return fn(...args);
  };
}
installIO(layer);
if (countFile) process.on('exit', () => fs.writeFileSync(countFile, String(calls)));
