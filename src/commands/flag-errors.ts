/**
 * The command-line boundary for the engine's option errors: the engine raises an
 * InvalidArgumentError naming its options as the API spells them (`segmentBytes`, `group`); a
 * command that took them from flags reports a usage error naming the flags instead (exit 2).
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from '../inspect/format.js';
import { LogtoolError } from '../api/format.js';

/**
 * `e` as a usage error naming the flag of each option it names, when `flagOf` knows them all;
 * any other error as it is. A camelCase option name in the message is replaced by its flag; a
 * message without one gets the flags in front (`--group: consumer group name must be …`).
 */
export function withFlagNames(e: unknown, flagOf: (option: string) => string | undefined): unknown {
  if (!(e instanceof InvalidArgumentError) || e.options.length === 0) return e;
  const flags = e.options.map(flagOf);
  if (flags.some((f) => f === undefined)) return e;
  let message = e.message;
  let named = false;
  e.options.forEach((o, i) => {
    // Only identifiers (`maxMemoryBytes`) are replaced: a plain word such as `group` is also prose.
    if (/[A-Z]/.test(o) && message.includes(o)) {
      message = message.split(o).join(flags[i]!);
      named = true;
    }
  });
  if (!named) message = `${flags.join(', ')}: ${message}`;
  return new LogtoolError('usage', message, { file: e.file, position: e.position }, { cause: e });
}

/** The flag the user gave on the command line for an option attribute (camelCase) of `cmd`, if any. */
export function givenFlags(cmd: Command): (option: string) => string | undefined {
  return (option) => {
    const opt = cmd.options.find((o) => o.attributeName() === option);
    return opt?.long && cmd.getOptionValueSource(option) === 'cli' ? opt.long : undefined;
  };
}
