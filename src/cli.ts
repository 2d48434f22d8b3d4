#!/usr/bin/env node
/**
 * logtool's command line: runs the program (src/program.ts) on this process. The process is never
 * ended with process.exit(): exitCode is set and stdout drains.
 */
import { report, runCli, wantsJson } from './program.js';

process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') process.exitCode = report(e, process.argv.includes('--debug'), wantsJson(process.argv.slice(2)));
});

runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
