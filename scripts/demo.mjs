#!/usr/bin/env node
// The README's first command: appends a few records to ./logdata/demo-0 and reads them back,
// through the real CLI, so a fresh clone shows what logtool does in one step.
import { spawnSync } from 'node:child_process';

const cli = ['dist/cli.js'];
const dir = process.argv[2] ?? 'logdata/demo-0';
const run = (args, input) => {
  console.log(`$ logtool ${args.join(' ')}${input ? '   (stdin: 3 lines)' : ''}`);
  const r = spawnSync('node', [...cli, ...args], { stdio: [input ? 'pipe' : 'inherit', 'inherit', 'inherit'], input });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
run(['append', dir, '--key', 'user-1', '--value', 'hello from logtool', '--header', 'source=demo', '--json']);
run(['append', dir, '--lines', '--json'], 'first line\nsecond line\nthird line\n');
run(['read', dir]);
run(['segments', dir]);
run(['dump-index', dir, '--verify']);
