/**
 * `logtool dump-log --files a.log,b.index …`: the lines kafka-dump-log.sh prints (Kafka's
 * DumpLogSegments), so operators' scripts keep working: batch lines, `| offset: …` record lines
 * with --deep-iteration, key/payload with --print-data-log, index dumps with Kafka's checks, producer
 * snapshots (`.snapshot`) as dumpProducerIdSnapshot prints them, and
 * Kafka's stderr reports (mismatches, non-consecutive offsets, trailing bytes). This file holds the
 * command and the dispatch by suffix; each file kind is dumped by dump-log-<kind>.ts, the lines are
 * formatted in dump-log-lines.ts.
 */
import path from 'node:path';
import { Command, Option } from 'commander';
import { realIO, LogtoolError } from '../api/format.js';
import { Output } from '../render/output.js';
import { parseInteger } from './shared.js';
import { addDumpLogDecoderOptions, decoderFor, dumpLogDecoderKind, requireDecoderForJson } from './internal-decode.js';
import { INT_MAX, type DumpLogOpts } from './dump-log-lines.js';
import { internalControlDecoder, ScalaStringMap } from '../inspect/internal-topics.js';
import { dumpLogFile } from './dump-log-records.js';
import { dumpOffsetIndex, dumpTimeIndex, newTimeIndexErrors, printIndexReports } from './dump-log-index.js';
import { dumpProducerSnapshot } from './dump-log-snapshot.js';
import { dumpTxnIndex } from './dump-log-txnindex.js';

/** Files of record batches, which --json prints only through a decoder. */
const JSON_RECORD_SUFFIXES = ['.log', '.checkpoint'];

export function dumpLogCommand(): Command {
  const cmd = new Command('dump-log')
    .description("print segment, index and time-index files exactly as Kafka's kafka-dump-log.sh does")
    .requiredOption('--files <files>', 'comma-separated .log, .index, .timeindex, .snapshot, .txnindex, .checkpoint files')
    .option('--print-data-log', 'print keys and payloads (implies --deep-iteration)')
    .option('--deep-iteration', 'print one line per record')
    .option('--verify-index-only', 'check index entries against the log without printing them')
    .option('--index-sanity-check', "run only Kafka's index sanity check")
    .option('--max-message-size <n>', 'size of the log slice read at each .index entry when checking it', parseInteger('--max-message-size', 1), 5242880)
    .option('--max-bytes <n>', 'read at most this many bytes of a .log', parseInteger('--max-bytes', 1), INT_MAX)
    .option('--skip-record-metadata', 'omit per-record metadata')
    .option('--json', 'with a decoder: one JSON object per decoded record, {"offset","timestamp",…}; one per .snapshot producer or .txnindex entry (no other lines)')
    .addOption(new Option('--key-decoder-class <class>', 'only the string decoder is supported').default(undefined))
    .addOption(new Option('--value-decoder-class <class>', 'only the string decoder is supported').default(undefined))
    .addHelpText(
      'after',
      `
Examples:
  logtool dump-log --files /var/lib/kafka/orders-0/00000000000000000000.log --deep-iteration --print-data-log
  logtool dump-log --files 00000000000000000000.index,00000000000000000000.timeindex --verify-index-only`,
    );
  addDumpLogDecoderOptions(cmd);
  cmd.action(async (opts: DumpLogOpts) => {
    const decoderKind = dumpLogDecoderKind(opts);
    const files = opts.files.split(',').filter((f) => f.length > 0);
    // --json prints the entries of .snapshot and .txnindex files as they are; records need a decoder.
    requireDecoderForJson(opts.json && files.some((f) => JSON_RECORD_SUFFIXES.includes(path.extname(f))), decoderKind);
    if (decoderKind) {
      opts.decode = decoderFor(decoderKind);
      opts.decodeControl = internalControlDecoder(decoderKind);
      opts.printDataLog = true;
    }
    for (const c of [opts.keyDecoderClass, opts.valueDecoderClass]) {
      if (c !== undefined && !/StringDecoder$/.test(c)) throw new LogtoolError('usage', `decoder ${c} is not supported; keys and payloads are printed as UTF-8 strings (StringDecoder)`);
    }
    // As in Kafka, naming a decoder implies printing the data.
    if (opts.keyDecoderClass !== undefined || opts.valueDecoderClass !== undefined) opts.printDataLog = true;
    const out = new Output();
    // Per absolute file path, printed in the order of DumpLogSegments' Scala mutable.Maps; index
    // mismatches and gaps newest first (Scala's prepended Lists).
    const mismatches = new ScalaStringMap<[number, number][]>();
    const nonConsecutive = new ScalaStringMap<[number, number][]>();
    const timeErrors = newTimeIndexErrors();
    let problems = false;
    try {
      for (const file of files) {
        if (out.closed) break;
        const st = realIO.stat(file);
        if (!st) throw new LogtoolError('not-found', 'no such file', { file });
        const suffix = path.extname(file);
        if (opts.json && !JSON_RECORD_SUFFIXES.includes(suffix) && suffix !== '.snapshot' && suffix !== '.txnindex') {
          process.stderr.write(`Ignoring ${file}: --json prints the decoded records of .log and .checkpoint files and the entries of .snapshot and .txnindex files\n`);
          continue;
        }
        if (!opts.json) await out.line(`Dumping ${file}`);
        if (suffix === '.log' || suffix === '.checkpoint') {
          problems = (await dumpLogFile(file, opts, out, nonConsecutive)) || problems;
        } else if (suffix === '.index') {
          problems = (await dumpOffsetIndex(file, opts, out, mismatches)) || problems;
        } else if (suffix === '.timeindex') {
          problems = (await dumpTimeIndex(file, opts, out, timeErrors)) || problems;
        } else if (suffix === '.snapshot') {
          problems = (await dumpProducerSnapshot(file, out, opts.json)) || problems;
        } else if (suffix === '.txnindex') {
          problems = (await dumpTxnIndex(file, out, opts.json)) || problems;
        } else {
          process.stderr.write(`Ignoring unknown file ${file}\n`);
        }
      }
    } finally {
      await out.flush();
    }
    problems = printIndexReports(mismatches, timeErrors) || problems;
    for (const [file, list] of nonConsecutive) {
      process.stderr.write(`Non-consecutive offsets in ${file}\n`);
      for (let i = list.length - 1; i >= 0; i--) process.stderr.write(`  ${list[i]![0]} is followed by ${list[i]![1]}\n`);
    }
    if (problems) process.exitCode = 3;
  });
  return cmd;
}
