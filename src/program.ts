/**
 * The logtool program: every command, and errors turned into one line on stderr and a documented
 * exit code (README, "Exit codes"); stack traces only with --debug. cli.ts runs it on the real
 * process; tests run it in-process (runCli with captured output), so that a command's own handler
 * runs with an injected file-I/O layer.
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

/** Writes an error as one line on stderr and returns the exit code it stands for. */
export function report(err: unknown, debug: boolean): number {
  const c = colours(process.stderr);
  if (err instanceof LogtoolError) {
    process.stderr.write(`${c.red('error:')} ${err.describe()}\n`);
    if (debug && err.stack) process.stderr.write(`${err.stack}\n`);
    return err.exitCode;
  }
  if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : ExitCode.usage;
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'EPIPE') return 0; // reader went away: end quietly
  process.stderr.write(`${c.red('error:')} internal error: ${e?.message ?? String(err)} (run with --debug for details; please report it)\n`);
  if (debug && e?.stack) process.stderr.write(`${e.stack}\n`);
  return ExitCode.operational;
}

export function buildProgram(): Command {
  const program = new Command('logtool')
    .description('Kafka-format append-only logs: append, read, verify, recover, compact, bench')
    .version('0.1.0')
    .option('--debug', 'print stack traces of errors')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) });
  const commands = [appendCommand(), readCommand(), dumpIndexCommand(), segmentsCommand(), dumpLogCommand(), ...extraCommands()];
  for (const cmd of commands) {
    cmd.exitOverride();
    cmd.option('--debug', 'print stack traces of errors');
    program.addCommand(cmd);
  }
  return program;
}

/** Where runCli sends output; by default the process's own streams. */
export interface CliStreams {
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}

type WriteFn = NodeJS.WriteStream['write'];

/** Sends a stream's writes to `sink` (chunks as text) until the returned function restores it. */
function capture(stream: NodeJS.WriteStream, sink: (text: string) => void): () => void {
  const original = stream.write;
  const errorListeners = stream.listeners('error');
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    sink(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const cb = rest.find((a) => typeof a === 'function') as ((err?: Error) => void) | undefined;
    if (cb) queueMicrotask(() => cb());
    return true;
  }) as WriteFn;
  return () => {
    stream.write = original;
    // Output objects listen for EPIPE on the stream; drop the ones this run added.
    for (const l of stream.listeners('error')) if (!errorListeners.includes(l)) stream.off('error', l as (...a: unknown[]) => void);
  };
}

/**
 * Runs one command line (argv without `node cli.js`) and returns its exit code. Never calls
 * process.exit; process.exitCode is left as it was (commands set it while they run).
 */
export async function runCli(argv: string[], streams: CliStreams = {}): Promise<number> {
  const debug = argv.includes('--debug');
  const restoreOut = streams.stdout ? capture(process.stdout, streams.stdout) : undefined;
  const restoreErr = streams.stderr ? capture(process.stderr, streams.stderr) : undefined;
  const exitCodeBefore = process.exitCode;
  process.exitCode = undefined;
  let code: number;
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    code = Number(process.exitCode ?? 0);
  } catch (err) {
    code = report(err, debug);
  } finally {
    restoreOut?.();
    restoreErr?.();
  }
  process.exitCode = exitCodeBefore;
  return code;
}
