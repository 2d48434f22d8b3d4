#!/usr/bin/env node
/**
 * logtool's command line: a thin layer over the engine. Errors become one line on stderr and a
 * documented exit code (README, "Exit codes"); stack traces only with --debug. The process is never
 * ended with process.exit(): exitCode is set and stdout drains.
 */
import { Command, CommanderError } from 'commander';
import { LogtoolError, ExitCode } from './engine/errors.js';
import { colours } from './render/output.js';
import { appendCommand } from './commands/append.js';
import { readCommand } from './commands/read.js';
import { dumpIndexCommand } from './commands/dump-index.js';
import { segmentsCommand } from './commands/segments.js';
import { dumpLogCommand } from './commands/dump-log.js';
import { extraCommands } from './commands/registry.js';

const debug = process.argv.includes('--debug');

function report(err: unknown): void {
  const c = colours(process.stderr);
  if (err instanceof LogtoolError) {
    process.stderr.write(`${c.red('error:')} ${err.describe()}\n`);
    if (debug && err.stack) process.stderr.write(`${err.stack}\n`);
    process.exitCode = err.exitCode;
    return;
  }
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : ExitCode.usage;
    return;
  }
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'EPIPE') return; // reader went away: end quietly
  process.stderr.write(`${c.red('error:')} internal error: ${e?.message ?? String(err)} (run with --debug for details; please report it)\n`);
  if (debug && e?.stack) process.stderr.write(`${e.stack}\n`);
  process.exitCode = ExitCode.operational;
}

export function buildProgram(): Command {
  const program = new Command('logtool')
    .description('Kafka-format append-only logs: append, read, verify, recover, compact, bench')
    .version('0.1.0')
    .option('--debug', 'print stack traces of errors')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  const commands = [appendCommand(), readCommand(), dumpIndexCommand(), segmentsCommand(), dumpLogCommand(), ...extraCommands()];
  for (const cmd of commands) {
    cmd.exitOverride();
    cmd.option('--debug', 'print stack traces of errors');
    program.addCommand(cmd);
  }
  return program;
}

process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') report(e);
});

buildProgram()
  .parseAsync(process.argv)
  .catch(report);
