#!/usr/bin/env node
/**
 * logtool's command line, compiled: runs the program (src/program.ts, main) on this process. The
 * package's bin is the same program bundled (dist/bin/logtool.cjs, scripts/bundle-cli.mjs).
 */
import { main } from './program.js';

main(process.argv.slice(2));
