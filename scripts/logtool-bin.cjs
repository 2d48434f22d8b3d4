#!/usr/bin/env node
// The package's bin (copied to dist/bin/logtool.cjs by scripts/bundle-cli.mjs): runs the bundled
// program (main.cjs, src/program.ts with what it imports) on this process. CommonJS, so that no
// ES module loader starts: a process then costs little more than `node -e 0` (issue 15).
'use strict';

require('./main.cjs').main(process.argv.slice(2));
