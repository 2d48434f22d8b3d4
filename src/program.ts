/**
 * The logtool program: every command, and errors turned into one line on stderr (a JSON object
 * under --json) and a documented exit code (README, "Exit codes"); stack traces only with --debug.
 * main() runs it on the real process (cli.ts, and the bundled bin, scripts/bundle-cli.mjs); tests
 * run it in-process (runCli with captured output), so that a command's own handler runs with an
 * injected file-I/O layer.
 */
import { Command, CommanderError } from 'commander';
import { LogtoolError, ExitCode, InvalidArgumentError } from './engine/errors.js';
import { colourLevel } from './render/colour-level.js';
import { clearStderrLine } from './render/stderr-line.js';
import { commandSpecs, specForArgv, type CommandSpec } from './commands/registry.js';

/** What an error says, the same for the text line and the JSON object. */
export interface ErrorReport {
  kind: string;
  message: string;
  file: string | null;
  position: number | null;
  exitCode: number;
}

/** True when the command line asks for JSON (`--json` before any `--`): errors are then JSON too. */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

function describeError(err: unknown): ErrorReport {
  if (err instanceof LogtoolError) return { kind: err.kind, message: err.message, file: err.file ?? null, position: err.position ?? null, exitCode: err.exitCode };
  if (err instanceof CommanderError) {
    // commander's own messages start with "error: "; help shown for a missing command says "(outputHelp)".
    const message = err.code === 'commander.help' ? 'a command is required (run with --help for usage)' : err.message.replace(/^error: /, '');
    return { kind: 'usage', message, file: null, position: null, exitCode: ExitCode.usage };
  }
  const e = err as Error | undefined;
  return { kind: 'internal', message: e?.message ?? String(err), file: null, position: null, exitCode: ExitCode.operational };
}

/**
 * Writes an error on stderr and returns the exit code it stands for: one text line, or with
 * `json` one line `{"error":{"kind","message","file","position","exitCode"}}` (and "stack" with
 * --debug), so a script parsing the output never meets a plain line.
 */
export function report(err: unknown, debug: boolean, json = false): number {
  if (err instanceof CommanderError && err.exitCode === 0) return 0; // --help, --version
  if (!(err instanceof LogtoolError) && (err as NodeJS.ErrnoException)?.code === 'EPIPE') return 0; // reader went away: end quietly
  const r = describeError(err);
  clearStderrLine(); // a progress line still drawn on a terminal
  const stack = debug ? (err as Error | undefined)?.stack : undefined;
  if (json) {
    process.stderr.write(`${JSON.stringify({ error: { ...r, ...(stack && !(err instanceof CommanderError) ? { stack } : {}) } })}\n`);
    return r.exitCode;
  }
  if (err instanceof CommanderError) return r.exitCode; // commander already wrote its line
  // The one red word, without loading chalk: errors are written on every path, start-up included.
  const label = colourLevel(process.stderr) > 0 ? '\u001b[31merror:\u001b[39m' : 'error:';
  const text = err instanceof LogtoolError ? err.describe() : `internal error: ${r.message} (run with --debug for details; please report it)`;
  process.stderr.write(`${label} ${text}\n`);
  if (stack) process.stderr.write(`${stack}\n`);
  return r.exitCode;
}

/**
 * What the program's --help lists for a command whose module is not loaded: its name, arguments and
 * description, nothing that needs the command's code. It never runs: runCli loads the command a
 * command line names (specForArgv) before parsing.
 */
function commandStub(spec: CommandSpec): Command {
  const stub = new Command(spec.name).description(spec.description);
  if (spec.args) stub.arguments(spec.args);
  return stub.action(() => {
    throw new Error(`command ${spec.name} was not loaded`);
  });
}

/**
 * The program with every command: the `loaded` ones in full, the others as stubs for the command
 * list (commandStub). With `json` (the command line has --json), commander's own error lines and
 * the usage hint are left out: report() writes the error as one JSON object instead.
 */
export function buildProgram(options: { json?: boolean; loaded?: readonly Command[] } = {}): Command {
  const output = {
    writeOut: (s: string) => process.stdout.write(s),
    writeErr: (s: string) => process.stderr.write(s),
    ...(options.json ? { outputError: () => {} } : {}),
  };
  const hint = options.json ? false : '(run with --help for usage)';
  const program = new Command('logtool')
    .description('Kafka-format append-only logs: append, read, verify, recover, compact, bench')
    .version('0.1.0')
    .option('--debug', 'print stack traces of errors')
    .showHelpAfterError(hint)
    .exitOverride()
    .configureOutput(output);
  const commands = commandSpecs.map((spec) => options.loaded?.find((c) => c.name() === spec.name) ?? commandStub(spec));
  for (const cmd of commands) {
    cmd.exitOverride();
    cmd.option('--debug', 'print stack traces of errors');
    cmd.showHelpAfterError(hint);
    cmd.configureOutput(output);
    program.addCommand(cmd);
  }
  // commander's own help command answers `help <unknown>` with the program's help and no word that
  // the command is unknown; this one says so (exit 2) and otherwise behaves the same.
  program.helpCommand(false);
  const help = new Command('help')
    .description('display help for command')
    .argument('[command]', 'the command to describe')
    .helpOption(false)
    .exitOverride()
    .showHelpAfterError(hint)
    .configureOutput(output)
    .action((name: string | undefined) => {
      if (name === undefined) return program.outputHelp();
      const cmd = program.commands.find((c) => c.name() === name || c.aliases().includes(name));
      if (cmd) return cmd.outputHelp();
      program.error(`error: unknown command '${name}'`, { exitCode: ExitCode.usage, code: 'commander.unknownCommand' });
    });
  program.addCommand(help);
  program.addHelpText('after', TOP_LEVEL_HELP);
  // A writing command holds its log directory's broker lock for its whole run (commands/broker-lock.ts,
  // loaded only when a command runs).
  program.hook('preAction', async (_program, action) => {
    actionCommand = action;
    brokerLocks ??= await import('./commands/broker-lock.js');
    await brokerLocks.lockForCommand(action);
  });
  return program;
}

/** After the command list of `logtool --help`: the exit codes (README, "Exit codes") and a few examples. */
const TOP_LEVEL_HELP = `
Exit codes:
  0  success (verify: everything checks out; recover: the log was already consistent)
  1  operational error: I/O failure, missing directory, the log locked by another writer
  2  usage error: bad option, bad argument, bad input line
  3  data problem found: corruption, torn tail, index mismatch (recover: something was repaired)

Examples:
  logtool append logdata/demo-0 --key user1 --value hello
  logtool read logdata/demo-0 --from-offset 0 --max-records 10
  logtool read logdata/demo-0 --follow --json
  logtool verify /var/lib/kafka/orders-3 --deep
  logtool recover /var/lib/kafka/orders-3 --dry-run
  logtool help read`;

/** commands/broker-lock.ts, once a command that may write has started. */
let brokerLocks: typeof import('./commands/broker-lock.js') | undefined;

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

/** The command whose action runs: its flags name the options of the engine's InvalidArgumentErrors. */
let actionCommand: Command | undefined;

/** An engine error about options the command took from flags, as a usage error naming the flags (loaded only then). */
async function namingFlags(err: unknown): Promise<unknown> {
  if (!(err instanceof InvalidArgumentError) || !actionCommand) return err;
  const { withFlagNames, givenFlags } = await import('./commands/flag-errors.js');
  return withFlagNames(err, givenFlags(actionCommand));
}

/**
 * Runs one command line (argv without `node cli.js`) and returns its exit code. Never calls
 * process.exit; process.exitCode is left as it was (commands set it while they run).
 */
export async function runCli(argv: string[], streams: CliStreams = {}): Promise<number> {
  const debug = argv.includes('--debug');
  const json = wantsJson(argv);
  const restoreOut = streams.stdout ? capture(process.stdout, streams.stdout) : undefined;
  const restoreErr = streams.stderr ? capture(process.stderr, streams.stderr) : undefined;
  const exitCodeBefore = process.exitCode;
  process.exitCode = undefined;
  let code: number;
  try {
    const spec = specForArgv(argv);
    const loaded = spec ? [await spec.load()] : [];
    await buildProgram({ json, loaded }).parseAsync(argv, { from: 'user' });
    code = Number(process.exitCode ?? 0);
  } catch (err) {
    code = report(await namingFlags(err), debug, json);
  } finally {
    actionCommand = undefined;
    await brokerLocks?.releaseCommandLock();
    restoreOut?.();
    restoreErr?.();
  }
  process.exitCode = exitCodeBefore;
  return code;
}

/**
 * Runs one command line on this process. The process is never ended with process.exit():
 * exitCode is set and stdout drains; a reader that goes away (EPIPE) ends it quietly.
 */
export function main(argv: string[]): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') process.exitCode = report(e, argv.includes('--debug'), wantsJson(argv));
  });
  void runCli(argv).then((code) => {
    process.exitCode = code;
  });
}
