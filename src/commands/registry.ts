/**
 * Every command as a small spec: its name, arguments and one-line description (what the program's
 * --help lists) and `load`, which imports the command's module only when that command runs or its
 * own --help is asked for. Start-up then costs commander and this table, not every command's code,
 * codecs and native add-ons (issue 15). Adding a command is one entry here; test/commands/
 * help-lazy.test.ts checks that each entry says what the command's own definition says.
 */
import type { Command } from 'commander';

export interface CommandSpec {
  name: string;
  /** The arguments as commander writes them (`<dir>`, `[dir]`, `<logdir...>`), '' for none. */
  args: string;
  description: string;
  /** Builds the full command (options, help, action), importing its module. */
  load(): Promise<Command>;
}

export const commandSpecs: readonly CommandSpec[] = [
  { name: 'append', args: '<dir>', description: 'append records to a partition directory (created if missing; its parent must exist)', load: async () => (await import('./append.js')).appendCommand() },
  { name: 'read', args: '<dir>', description: 'print records (or batch metadata) of a partition directory', load: async () => (await import('./read.js')).readCommand() },
  {
    name: 'dump-index',
    args: '<path>',
    description: 'print the entries of offset and time indexes; --verify checks them against the .log',
    load: async () => (await import('./dump-index.js')).dumpIndexCommand(),
  },
  {
    name: 'segments',
    args: '<dir>',
    description: 'list the segments of a partition directory with their offsets, timestamps and sizes',
    load: async () => (await import('./segments.js')).segmentsCommand(),
  },
  {
    name: 'dump-log',
    args: '',
    description: "print segment, index and time-index files exactly as Kafka's kafka-dump-log.sh does",
    load: async () => (await import('./dump-log.js')).dumpLogCommand(),
  },
  {
    name: 'recover',
    args: '<dir>',
    description: "run Kafka's log recovery on a partition directory and report what was repaired",
    load: async () => (await import('./recover.js')).recoverCommand(),
  },
  {
    name: 'rebuild-index',
    args: '<dir|segment>',
    description: "rebuild .index and .timeindex files from the .log by Kafka's recovery rule (or --verify them)",
    load: async () => (await import('./rebuild-index.js')).rebuildIndexCommand(),
  },
  {
    name: 'bench',
    args: '[dir]',
    description: 'measure append, flush and read scenarios against raw baselines on this machine',
    load: async () => (await import('./bench.js')).benchCommand(),
  },
  {
    name: 'compact',
    args: '<dir>',
    description: "compact a partition directory by Kafka's cleaner rules: keep the latest record per key",
    load: async () => (await import('./compact.js')).compactCommand(),
  },
  {
    name: 'retention',
    args: '<dir>',
    description: "apply Kafka's retention to a partition directory now: delete segments past retention.ms / retention.bytes",
    load: async () => (await import('./retention.js')).retentionCommand(),
  },
  {
    name: 'delete-records',
    args: '<dir>',
    description: 'advance the log start offset (as kafka-delete-records does) and delete the segments below it',
    load: async () => (await import('./delete-records.js')).deleteRecordsCommand(),
  },
  {
    name: 'consume',
    args: '<dir>',
    description: "print the records after a consumer group's committed position, then commit the position after them",
    load: async () => (await import('./consume.js')).consumeCommand(),
  },
  {
    name: 'positions',
    args: '<dir>',
    description: 'list the consumer groups of a partition directory with their committed positions and lag',
    load: async () => (await import('./consume.js')).positionsCommand(),
  },
  {
    name: 'verify',
    args: '<dir>',
    description: 'check a partition directory without changing it: CRCs, offsets, indexes (and every record with --deep)',
    load: async () => (await import('./verify.js')).verifyCommand(),
  },
  {
    name: 'ls',
    args: '<logdir...>',
    description: 'list the partitions of log directories (read-only) and classify everything else in them',
    load: async () => (await import('./ls.js')).lsCommand(),
  },
  {
    name: 'groups',
    args: '<dir...>',
    description: "consumer groups' committed offsets, read offline from __consumer_offsets partitions",
    load: async () => (await import('./groups.js')).groupsCommand(),
  },
  {
    name: 'doctor',
    args: '<logdir...>',
    description: 'check log directories read-only with every check logtool has, and say how to fix what it finds',
    load: async () => (await import('./doctor.js')).doctorCommand(),
  },
  {
    name: 'transactions',
    args: '',
    description: "a partition's transactions: list, find-hanging, abort",
    load: async () => (await import('./transactions.js')).transactionsCommand(),
  },
];

/**
 * The spec of the command a command line runs (or asks `help` about): the first operand, as
 * commander takes it, after the program's own options (--debug, -V, -h take no value).
 */
export function specForArgv(argv: readonly string[]): CommandSpec | undefined {
  const end = argv.indexOf('--');
  const operands = (end === -1 ? argv : argv.slice(0, end)).filter((a) => !a.startsWith('-'));
  const name = operands[0] === 'help' ? operands[1] : operands[0];
  return commandSpecs.find((s) => s.name === name);
}
