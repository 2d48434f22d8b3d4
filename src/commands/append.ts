/**
 * `logtool append <dir>`: one record from flags, or NDJSON / raw lines from stdin or --input,
 * appended as they arrive in batches of at most --batch-records. With --json, one line per batch
 * once it is acknowledged under the flush mode.
 */
import { isatty } from 'node:tty';
import { Command, Option } from 'commander';
import type { Log } from '../api/log.js';
import { LogTransaction } from '../inspect/transactions.js';
import { LogtoolError, realIO, type RecordHeader, type RecordInput, type Timestamp } from '../api/format.js';
import { parseCompression, compressionNames } from '../inspect/format.js';
import { Output } from '../render/output.js';
import { startProgress, type Progress } from '../render/progress.js';
import { checkAppendTarget, removeUnusedNewDir, stdinHasData } from './append-target.js';
import { parseNdjsonLine } from './append-ndjson.js';
import { appendLines, splitLines } from './append-lines.js';
import { stdinChunks } from './stdin-chunks.js';
import { BatchAppender } from './append-batches.js';
import {
  addFlushOptions,
  addTopicConfigOptions,
  configFromOptions,
  flushConfigFromOptions,
  jsonToBytes,
  openLog,
  parseEncoding,
  parseInteger,
  parseTimestamp,
  int64Timestamp,
  type Encoding,
} from './shared.js';
import { isLogDirPath, partitionDirIn } from './logdir-paths.js';


interface AppendOpts {
  key?: string;
  value?: string;
  header: string[];
  timestamp?: Timestamp;
  input?: string;
  lines?: boolean;
  encoding: string;
  batchRecords: number;
  json?: boolean;
  compression?: string;
  ackBeforeSync?: boolean;
  stats?: boolean;
  topic?: string;
  partition?: number;
  progress?: boolean;
  transaction?: boolean;
  [k: string]: unknown;
}

export function appendCommand(): Command {
  const cmd = new Command('append')
    .description('append records to a partition directory (created if missing; its parent must exist)')
    .argument('<dir>', 'partition directory named <topic>-<partition>, or a log directory with --topic and --partition')
    .option('--topic <name>', "log directory: the partition's topic (Kafka's rule: [a-zA-Z0-9._-], at most 249 characters)")
    .option('--partition <n>', 'log directory: the partition number; <dir>/<topic>-<n> is created if missing', parseInteger('--partition', 0))
    .option('-k, --key <key>', 'record key (omit for a null key)')
    .option('-v, --value <value>', 'record value')
    .option('-H, --header <k=v>', 'record header, repeatable', (v: string, acc: string[]) => acc.concat(v), [] as string[])
    .option('--timestamp <time>', 'record timestamp: epoch ms (any int64, kept exact) or ISO-8601 (default now)', parseTimestamp('--timestamp'))
    .option('-i, --input <file>', 'read NDJSON records (the shape `read --json` prints) from a file instead of stdin')
    .option('--lines', 'take each raw input line as a value (null key)')
    .option('--encoding <enc>', 'how keys, values and header values are encoded in the input: utf8, base64, hex', 'utf8')
    .option('--batch-records <n>', 'at most this many records per batch', parseInteger('--batch-records', 1), 1000)
    .addOption(new Option('--compression <codec>', 'batch compression').choices([...compressionNames]))
    .option('--no-progress', 'no progress line on a terminal while reading a large input')
    .option('--transaction', 'append the whole input as one transaction: read_committed readers see all of it or none (see README, "Transactions")')
    .option('--stats', 'print the written / committed / flushed positions and flush counters to stderr before closing')
    .option('--json', 'print {"baseOffset","lastOffset","count","status"} per batch once it is acknowledged (status: flushed, committed or written, by --flush; see docs/durability.md)');
  addFlushOptions(cmd);
  cmd.option('--no-flush-when-queue-empty', 'sync: close a group only by --max-wait-ms / --max-group-bytes / --max-group-records, not as soon as no more appends are queued');
  addTopicConfigOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Examples:
  logtool append logdata/demo-0 --key user1 --value hello --header source=cli
  printf 'a\\nb\\nc\\n' | logtool append logdata/demo-0 --lines --json
  logtool read logdata/demo-0 --json | logtool append logdata/copy-0
  logtool append logdata/demo-0 --input records.ndjson --flush async --segment-bytes 1048576
  logtool append logdata --topic orders --partition 3 --value hello    # logdata/orders-3`,
  );
  cmd.action(async (given: string, opts: AppendOpts) => {
    const named = opts.topic !== undefined || opts.partition !== undefined;
    if (!named && realIO.stat(given)?.isDirectory && isLogDirPath(given)) throw new LogtoolError('usage', 'is a log directory: name the partition with --topic and --partition', { file: given });
    const dir = named ? partitionDirIn(given, opts.topic, opts.partition) : given;
    const encoding = parseEncoding(opts.encoding);
    const out = new Output();
    const compression = opts.compression ? parseCompression(opts.compression) : undefined;
    const single = opts.value !== undefined || opts.key !== undefined || opts.header.length > 0;
    if (single && (opts.input || opts.lines)) throw new LogtoolError('usage', '--value/--key/--header append one record; do not combine them with --input or --lines');
    if (!single && !opts.input && isatty(0)) {
      throw new LogtoolError('usage', 'nothing to append: give --value, or pipe NDJSON or --lines into stdin, or use --input FILE');
    }
    const target = checkAppendTarget(dir);
    const log = openLog(dir, {
      config: { ...configFromOptions(opts), ...flushConfigFromOptions(opts), ...(opts.flushWhenQueueEmpty === false ? { flushWhenQueueEmpty: false } : {}) },
    });
    let failed: LogtoolError | undefined;
    let progress: Progress | undefined;
    let txn: LogTransaction | undefined;
    try {
      txn = opts.transaction ? await beginTransaction(log) : undefined;
      const appender = new BatchAppender(log, out, { json: Boolean(opts.json), compression, ackBeforeSync: opts.ackBeforeSync, batchRecords: opts.batchRecords, txn });
      if (single) {
        if (opts.value === undefined) throw new LogtoolError('usage', '--value is required (use --value "" for an empty value)');
        await appender.add({
          key: opts.key === undefined ? null : decodeArg(opts.key, encoding, '--key'),
          value: decodeArg(opts.value, encoding, '--value'),
          headers: opts.header.map((h) => parseHeaderArg(h, encoding)),
          timestamp: opts.timestamp,
        });
        if (await stdinHasData()) process.stderr.write('note: appended the one record given by --value; the data on stdin was not read (without --value/--key/--header, append reads stdin)\n');
      } else {
        // Plain lines (no transaction, compression or int64 timestamp): value ranges of each input chunk, no record objects.
        const lineTimestamp = opts.timestamp === undefined || (typeof opts.timestamp === 'number' && Number.isSafeInteger(opts.timestamp)) ? opts.timestamp : null;
        const plainLines = opts.lines && !txn && !compression && lineTimestamp !== null;
        const source = opts.input ?? 'stdin';
        progress = startProgress(`appending ${source} to ${dir}`, opts.progress !== false);
        // splitLines copies what it carries over, and each chunk's records are encoded before the next is read.
        const chunks = opts.input ? fileChunks(opts.input) : stdinChunks(realIO);
        const stream = countingChunks(chunks, progress, inputBytes(opts.input));
        if (plainLines) await appendLines(stream, source, appender, lineTimestamp);
        else await splitLines(stream, source, (buf, start, end, lineNo) => {
          // --lines: the line's bytes as they came (a view of the input; the batch copies it before the range goes).
          if (opts.lines) return appender.add({ key: null, value: buf.subarray(start, end), timestamp: opts.timestamp });
          return addNdjson(appender, buf, start, end, encoding, source, lineNo);
        }, () => appender.flush());
      }
      await appender.flush();
      await appender.drain();
      failed = appender.failure;
      if (txn && failed) await txn.abort();
      else await txn?.commit();
      if (opts.stats) printStats(log);
    } catch (e) {
      throw txn ? await abortedBy(txn, e) : e;
    } finally {
      progress?.stop();
      await log.close();
      // A run that appended nothing leaves no directory behind (a bad first line, empty input).
      if (!target.existed && log.nextOffset === 0) removeUnusedNewDir(dir, target);
      await out.flush();
    }
    if (failed) throw failed;
  });
  return cmd;
}

/** Starts `--transaction`'s transaction, saying which interrupted ones it ended first. */
async function beginTransaction(log: Log): Promise<LogTransaction> {
  const txn = await LogTransaction.begin(log);
  for (const a of txn.endedDangling)
    process.stderr.write(`note: ended the interrupted transaction of producer ${a.producerId} (from offset ${a.firstOffset}) with an ABORT marker at offset ${a.markerOffset}\n`);
  return txn;
}

/** The error that stopped a `--transaction` run, once its transaction is aborted. */
async function abortedBy(txn: LogTransaction, e: unknown): Promise<unknown> {
  try {
    await txn.abort();
  } catch {
    return e; // the first failure is the one reported; the next writer ends the transaction
  }
  if (!(e instanceof LogtoolError)) return e;
  return new LogtoolError(e.kind, `${e.message.replace(/; the \d+ line\(s\) before it were appended, the rest of the input was not$/, '')}; the transaction was aborted: read_committed readers see none of this input`, { file: e.file, position: e.position });
}

/** One line on stderr: the three positions (offset, segment@byte) and the flush counters. */
function printStats(log: Log): void {
  const p = log.positions();
  const at = (x: { offset: number; segment: number; position: number }) => `${x.offset} (segment ${x.segment} @ ${x.position})`;
  const s = log.flushStats;
  process.stderr.write(
    `positions: written ${at(p.written)}, committed ${at(p.committed)}, flushed ${at(p.flushed)}, recovery point ${p.recoveryPoint}; ` +
      `fsyncs ${s.fsyncs}, group commits ${s.groups} (largest ${s.largestGroup}), commits ${s.commits}, timed out ${s.timedOut}\n`,
  );
}

/**
 * One NDJSON input line appended (blank lines skipped); like BatchAppender.add, a promise only
 * when the caller must wait. A bad line first appends the lines before it, then fails naming where
 * the input stopped. A line in `read --json`'s shape is taken from its bytes (append-ndjson.ts);
 * any other goes through JSON.parse.
 */
function addNdjson(appender: BatchAppender, buf: Buffer, start: number, end: number, encoding: Encoding, source: string, lineNo: number): Promise<void> | undefined {
  const taken = parseNdjsonLine(buf, encoding, start, end);
  if (taken !== undefined) return appender.add(taken);
  const line = buf.toString('utf8', start, end);
  if (!(line.charCodeAt(0) > 0x20) && line.trim() === '') return undefined;
  let record: RecordInput;
  try {
    record = parseNdjson(line, encoding, `${source} line ${lineNo}`);
  } catch (e) {
    return stoppedAt(appender, e, lineNo);
  }
  return appender.add(record);
}

/** The lines before a bad one are appended (as they would have been had it come in a later chunk); the error says where the input stopped. */
async function stoppedAt(appender: BatchAppender, e: unknown, lineNo: number): Promise<never> {
  await appender.flush();
  await appender.drain();
  if (e instanceof LogtoolError) {
    throw new LogtoolError(e.kind, `${e.message}; the ${lineNo - 1} line(s) before it were appended, the rest of the input was not`, { file: e.file, position: e.position });
  }
  throw e;
}

function decodeArg(text: string, enc: Encoding, name: string): Buffer {
  return jsonToBytes(text, enc, name) as Buffer;
}

function parseHeaderArg(text: string, enc: Encoding): RecordHeader {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new LogtoolError('usage', `--header must be key=value, not "${text}"`);
  return { key: text.slice(0, eq), value: decodeArg(text.slice(eq + 1), enc, '--header value') };
}

export function parseNdjson(line: string, enc: Encoding, where: string): RecordInput {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (e) {
    throw new LogtoolError('usage', `${where}: not valid JSON (${(e as Error).message})`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new LogtoolError('usage', `${where}: expected a JSON object with "value"`);
  const o = v as Record<string, unknown>;
  if (!('value' in o)) throw new LogtoolError('usage', `${where}: missing "value" (use null for a tombstone)`);
  let timestamp: Timestamp | undefined;
  if (o.timestamp !== undefined && o.timestamp !== null) {
    // Any int64: a number, or a string of digits (what `read --json` prints beyond ±2^53). A number
    // JSON.parse rounded is taken exactly from the line's text.
    const raw = typeof o.timestamp === 'number' && Number.isInteger(o.timestamp) && !Number.isSafeInteger(o.timestamp) ? exactNumberText(line, 'timestamp') : undefined;
    const digits = raw ?? (typeof o.timestamp === 'string' ? o.timestamp : typeof o.timestamp === 'number' && Number.isSafeInteger(o.timestamp) ? String(o.timestamp) : undefined);
    if (digits === undefined || !/^-?\d+$/.test(digits)) throw new LogtoolError('usage', `${where}: "timestamp" must be epoch milliseconds (an int64, as a number or a string of digits)`);
    timestamp = int64Timestamp(digits, where);
  }
  let headers: RecordHeader[] = [];
  if (o.headers !== undefined && o.headers !== null) {
    if (!Array.isArray(o.headers)) throw new LogtoolError('usage', `${where}: "headers" must be an array of {"key","value"}`);
    headers = o.headers.map((h: unknown, i: number) => {
      const hh = h as Record<string, unknown>;
      if (typeof hh !== 'object' || hh === null || typeof hh.key !== 'string') throw new LogtoolError('usage', `${where}: header ${i} needs a string "key"`);
      return { key: hh.key, value: jsonToBytes(hh.value, enc, `${where} header ${i}`) };
    });
  }
  return { key: jsonToBytes(o.key, enc, `${where} key`), value: jsonToBytes(o.value, enc, `${where} value`), headers, timestamp };
}

/** The literal digits of top-level member `name` in a JSON object's text (JSON.parse rounds beyond ±2^53); undefined unless found exactly once. */
function exactNumberText(line: string, name: string): string | undefined {
  const found = [...line.matchAll(new RegExp(`"${name}"\\s*:\\s*(-?\\d+)\\s*[,}]`, 'g'))];
  return found.length === 1 ? found[0]![1] : undefined;
}

/** Input file chunk size: what one read call asks for. */
const INPUT_CHUNK_BYTES = 64 * 1024;

/** An input file in chunks, read through the file-I/O layer like every other file. */
async function* fileChunks(file: string): AsyncGenerator<Buffer> {
  const fd = realIO.open(file, 'r');
  try {
    for (let position = 0; ; ) {
      const buf = Buffer.allocUnsafe(INPUT_CHUNK_BYTES);
      const n = realIO.read(fd, buf, 0, buf.length, position);
      if (n <= 0) return;
      position += n;
      yield buf.subarray(0, n);
    }
  } finally {
    realIO.close(fd);
  }
}

/** The input's size when it is a regular file (the progress total), else undefined. */
function inputBytes(file: string | undefined): number | undefined {
  try {
    const st = file ? realIO.stat(file) : realIO.fstat(0);
    return st?.isFile ? st.size : undefined;
  } catch {
    return undefined;
  }
}

/** Passes chunks through, counting their bytes on the progress line. */
async function* countingChunks(stream: AsyncIterable<Buffer | string>, progress: Progress, totalBytes: number | undefined): AsyncGenerator<Buffer | string> {
  let bytes = 0;
  for await (const chunk of stream) {
    bytes += chunk.length;
    progress.count(bytes, totalBytes);
    yield chunk;
  }
}
