/**
 * `logtool read <dir>`: records from an offset or a time, as text or NDJSON; or, with --batches,
 * one line of metadata per batch.
 */
import { setFlagsFromString } from 'node:v8';
import { Command } from 'commander';
import { LogtoolError, compressionName, type LogRecord } from '../api/format.js';
import { ControlType, exactMaxTimestamp, isControl, isTransactional, timestampTypeOf, decodeEntryRecords } from '../inspect/format.js';
import { Output, colours, warn } from '../render/output.js';
import { formatTimestamp, timestampJson } from '../render/timestamp.js';
import { escapeString, writeEscapedBytes } from '../render/escape.js';
import { jsonString, jsonText, writeBytesJson, type JsonSink } from '../render/json-line.js';
import { bytesToText, openLog, parseEncoding, parseInteger, parseTime, type WarningCounter } from './shared.js';
import { readRange, type RangeOpts } from './read-range.js';
import { FOLLOW_POLL_MS, followLog } from './read-follow.js';
import { type EntryWithSegment, entryControlMarker, ISOLATION_LEVELS, type IsolationLevel } from '../inspect/log.js';
import type { InternalTopicKind } from '../inspect/topic-names.js';

function parseIsolationLevel(v: string): IsolationLevel {
  if (!(ISOLATION_LEVELS as readonly string[]).includes(v)) throw new LogtoolError('usage', `--isolation-level must be ${ISOLATION_LEVELS.join(' or ')}, not "${v}"`);
  return v as IsolationLevel;
}
import { decodeOption, readDecoderKind } from './decode-options.js';

interface ReadOpts extends RangeOpts {
  fromOffset?: number;
  fromTime?: number;
  maxRecords?: number;
  json?: boolean;
  encoding: string;
  batches?: boolean;
  control?: boolean;
  isolationLevel: IsolationLevel;
  decode?: InternalTopicKind;
  raw?: boolean;
  follow?: boolean;
}

export function readCommand(): Command {
  const cmd = new Command('read')
    .description('print records (or batch metadata) of a partition directory')
    .argument('<dir>', 'partition directory')
    .option('--from-offset <n>', 'first offset to print', parseInteger('--from-offset', 0))
    .option('--from-time <time>', 'first record with timestamp ≥ this (epoch ms or ISO-8601)', parseTime('--from-time'))
    .option('--to-offset <n>', 'end of the range, exclusive: stop before this offset', parseInteger('--to-offset', 0))
    .option('--to-time <time>', 'end of the range: stop before the offset --from-time would start at for this time', parseTime('--to-time'))
    .option('--key <key>', 'only records whose key is exactly these UTF-8 bytes')
    .option('--key-base64 <b64>', 'only records whose key is exactly these bytes (base64)')
    .option('-n, --max-records <n>', 'stop after this many records (batches with --batches)', parseInteger('--max-records', 0))
    .option('--json', 'one JSON object per line: {"offset","timestamp","key","value","headers"}')
    .option('--encoding <enc>', 'keys, values and header values as utf8, base64 or hex', 'utf8')
    .option('--batches', 'print batch metadata instead of records')
    .option('--control', 'include control records (transaction markers; read_uncommitted only)')
    .option('--isolation-level <level>', 'read_uncommitted (every record) or read_committed (what a Kafka read_committed consumer sees)', parseIsolationLevel, 'read_uncommitted' as IsolationLevel)
    .addOption(decodeOption())
    .option('--raw', 'text output: print records of internal topics as bytes, not decoded')
    .option('-f, --follow', 'after the last record, keep printing records as a writer appends them, until Ctrl-C (SIGINT, exit 0)')
    .addHelpText(
      'after',
      `
Text output is one line per record: in keys, values and headers it writes \\n \\t \\r \\0 \\\\, and
\\xNN (one byte) for other control characters and for bytes that are not valid UTF-8. --json is exact:
bytes that are not valid UTF-8 print as {"base64": "..."}, which append reads back to the same bytes.

A range is [start, end): --from-offset/--from-time start it (the later wins), --to-offset/--to-time end
it (the earlier wins; a --to-time after every record ends nothing). --from-offset exactly at the log
end prints nothing (exit 0); beyond the log end or below the log start it is exit 2, naming the log's
[start, end). --max-records counts the records printed, after --key.

--isolation-level read_committed prints what a Kafka read_committed consumer sees: no records of
aborted transactions, no control records, nothing at or after the last stable offset (the first
offset of the earliest open transaction) or, in a broker's log directory, the high watermark of
replication-offset-checkpoint. --batches always lists every batch; --follow reads uncommitted.

--follow polls the directory (every ${FOLLOW_POLL_MS} ms) for records a writer appends, in this or another
process, and prints each once, in order; --to-offset, --to-time (resolved at the start), --max-records
and --key still apply. It ends on SIGINT (exit 0), at the range's end, or when the reader of its pipe
has gone (at the next record).

Examples:
  logtool read logdata/demo-0
  logtool read logdata/demo-0 --from-time 2026-01-01T00:00:00Z --max-records 10 --json
  logtool read logdata/demo-0 --from-offset 100 --to-offset 200 --key order-42
  logtool read logdata/demo-0 --from-offset 0 --follow --json
  logtool read /var/lib/kafka/orders-3 --batches
  logtool read a-0 --json | logtool append b-0
  logtool read /var/lib/kafka/__consumer_offsets-12 --decode offsets --json | jq 'select(.key.data.group == "G")'

Partitions of __consumer_offsets, __transaction_state and __cluster_metadata are decoded in text
output (as kafka-dump-log.sh's decoders print them) unless --raw is given; --json stays raw unless
--decode names the topic's format. Decoded output leaves transaction markers out (kafka-dump-log.sh prints
no data for them); a metadata log's KRaft control records show as <Label>\t<JSON>, as kafka-dump-log.sh prints them.`,
    );
  cmd.action(async (dir: string, opts: ReadOpts) => {
    const encoding = parseEncoding(opts.encoding);
    if (opts.isolationLevel === 'read_committed' && (opts.control || opts.batches || opts.follow))
      throw new LogtoolError('usage', `--isolation-level read_committed never returns control records, applies to records only and does not follow: it cannot be combined with ${opts.control ? '--control' : opts.batches ? '--batches' : '--follow'}`);
    const decodeKind = readDecoderKind(dir, opts);
    // The decoders (and their schemas) load only when a record of an internal topic is decoded.
    const decoding = decodeKind ? await import('./internal-decode.js') : undefined;
    const decode = decoding && decodeKind ? decoding.decoderFor(decodeKind) : undefined;
    // A metadata log's KRaft control records are decoded too. Records carry no batch flags here, but
    // Kafka writes metadata records without keys and control records with one, so the key tells them.
    const decodeControl = decoding && decodeKind ? decoding.internalControlDecoder(decodeKind) : undefined;
    const out = new Output();
    const counter: WarningCounter = { count: 0 };
    const log = openLog(dir, { readOnly: true }, counter);
    const c = colours();
    const stats = { nonUtf8: 0 };
    try {
      const range = readRange(log, opts);
      if (opts.follow && opts.batches) throw new LogtoolError('usage', '--follow prints records; it cannot be used with --batches');
      if (opts.batches) {
        for (const b of log.reader().batches({ fromOffset: opts.fromOffset, maxBatches: opts.maxRecords, reuseBuffer: true })) {
          if (out.closed) break;
          if (opts.json) await out.json(batchJson(b));
          else await out.line(batchText(b));
        }
      } else {
        let remaining = opts.maxRecords ?? Infinity;
        // With --key, --max-records counts matching records, so the engine's own limit cannot be used.
        const maxRecords = range.key ? undefined : opts.maxRecords;
        /** Prints one record unless --key filters it out; false once nothing more is to be printed. */
        // Synchronous: the loops await out.flush() only when a chunk is due, not a promise per record (issue 15).
        const onRecord = (r: LogRecord): boolean => {
          if (out.closed || remaining <= 0) return false;
          if (range.key && !(r.key !== null && r.key.equals(range.key))) return true;
          remaining--;
          const decoded = decode ? (decodeControl?.(r) ?? decode(r)) : undefined;
          if (decoded?.problem) counter.count++; // printed on its line; the exit code says 3
          if (decoded && decoding) out.push(opts.json ? decoding.decodedJsonLine(r, decoded) : decoding.decodedTextLine(r, decoded, c));
          else {
            if (opts.json) writeRecordJson(out, r, encoding, stats);
            else writeRecordText(out, r, encoding, stats, c);
            out.endLine();
          }
          return remaining > 0;
        };
        let more = true;
        let youngGenerationKept = false;
        const includeControl = (opts.control && !decode) || decodeControl !== undefined;
        // onRecord copies every byte it prints into Output's chunk, so the read may reuse its buffer.
        for (const r of log.read({ fromOffset: opts.fromOffset, fromTime: opts.fromTime, toOffset: range.toOffset, maxRecords, includeControl, isolationLevel: opts.isolationLevel, reuseBuffer: true })) {
          more = onRecord(r);
          if (out.flushDue) {
            youngGenerationKept ||= keepYoungGenerationSmall();
            await out.flush();
          }
          if (!more) break;
        }
        if (opts.follow && more && remaining > 0) {
          const follow = { nextOffset: Math.max(opts.fromOffset ?? 0, log.nextOffset), fromTime: opts.fromTime, toOffset: range.toOffset, includeControl };
          await followLog(dir, follow, () => openLog(dir, { readOnly: true }, counter), onRecord, out);
        }
      }
    } finally {
      await out.flush();
      await log.close();
    }
    if (stats.nonUtf8 > 0 && !opts.json) warn(`${stats.nonUtf8} keys/values were not valid UTF-8 and are shown with \\xNN escapes; use --encoding base64 or hex for exact bytes`);
    if (counter.count > 0) process.exitCode = 3;
  });
  return cmd;
}

/**
 * Keeps V8's young generation at its first size (1 MiB semi-spaces) instead of letting it grow to
 * 16 MiB ones as records survive scavenges (issue 15, memory-read-json): a read's records die
 * young, and the engine's 1 MiB read chunks, which their views keep alive, are freed only by the
 * scavenge that finds them dead, so a larger young generation holds more of them too. `read --json`
 * of 400 MB peaks at about 80 MB of RSS instead of 120; the semi-space size itself can only be set
 * at start-up, the growth factor is read at each growth. Set once the first output chunk is full,
 * not at start: V8 rejects a code cache made under other flags, so every chunk the read loads
 * before (all of them, for a one-record read) is still compiled from the bin's caches.
 */
function keepYoungGenerationSmall(): true {
  setFlagsFromString('--semi-space-growth-factor=1');
  return true;
}

/**
 * One record as one NDJSON line, {"offset","timestamp","key","value","headers"}, exactly as
 * JSON.stringify writes that object, written without the object (issue 15: per-record garbage).
 */
export function writeRecordJson(sink: JsonSink, r: LogRecord, enc: ReturnType<typeof parseEncoding>, stats: { nonUtf8: number }): void {
  const ts = timestampJson(r.timestamp);
  sink.write(`{"offset":${r.offset},"timestamp":${typeof ts === 'number' ? ts : `"${ts}"`},"key":`);
  writeBytesJson(sink, r.key, enc, stats);
  sink.write(',"value":');
  writeBytesJson(sink, r.value, enc, stats);
  sink.write(',"headers":[');
  for (let i = 0; i < r.headers.length; i++) {
    const h = r.headers[i]!;
    sink.write(`${i > 0 ? ',' : ''}{"key":${jsonString(h.key)},"value":`);
    writeBytesJson(sink, h.value, enc, stats);
    sink.write('}');
  }
  sink.write(']}');
}

/** writeRecordJson as a string. */
export function recordJsonLine(r: LogRecord, enc: ReturnType<typeof parseEncoding>, stats: { nonUtf8: number }): string {
  return jsonText((sink) => writeRecordJson(sink, r, enc, stats));
}

/** One record as one line of text (offset, timestamp, key, value, headers; tab-separated). */
export function recordText(r: LogRecord, enc: ReturnType<typeof parseEncoding>, stats: { nonUtf8: number }, c: ReturnType<typeof colours>): string {
  return jsonText((sink) => writeRecordText(sink, r, enc, stats, c));
}

/**
 * recordText written to a sink: without colours, a key or value that is valid UTF-8 with nothing
 * to escape goes as its bytes, never becoming a string (issue 15).
 */
export function writeRecordText(sink: JsonSink, r: LogRecord, enc: ReturnType<typeof parseEncoding>, stats: { nonUtf8: number }, c: ReturnType<typeof colours>): void {
  // Without colours, chalk's calls would return their text as it is.
  sink.write(c.level > 0 ? `${c.cyan(String(r.offset))}\t${c.dim(formatTimestamp(r.timestamp))}\t` : `${r.offset}\t${formatTimestamp(r.timestamp)}\t`);
  if (c.level > 0) sink.write(c.green(bytesToText(r.key, enc, stats)));
  else writeBytesText(sink, r.key, enc, stats);
  sink.write('\t');
  writeBytesText(sink, r.value, enc, stats);
  if (r.headers.length) sink.write(`\t${r.headers.map((h) => `${escapeString(h.key)}=${bytesToText(h.value, enc, stats)}`).join(',')}`);
}

/** bytesToText written to a sink: under utf8 the bytes and their escapes, with no string made of them. */
function writeBytesText(sink: JsonSink, buf: Buffer | null, enc: ReturnType<typeof parseEncoding>, stats: { nonUtf8: number }): void {
  if (buf === null || enc !== 'utf8') sink.write(bytesToText(buf, enc, stats));
  else if (!writeEscapedBytes(sink, buf)) stats.nonUtf8++;
}

export function batchJson(b: EntryWithSegment & { crcValid: boolean | undefined }) {
  const e = b.entry;
  const h = e.header;
  const control = h && isControl(h) ? describeControl(b) : undefined;
  const legacy = h ? undefined : legacyWrapperSpan(b);
  return {
    segment: b.segment.baseOffset,
    baseOffset: legacy ? legacy.baseOffset : e.baseOffset,
    lastOffset: e.lastOffset,
    count: h ? h.recordsCount : legacy ? legacy.count : 1,
    position: e.position,
    size: e.size,
    magic: e.magic,
    codec: compressionName(e.compression),
    timestampType: h ? timestampTypeOf(h) : e.magic === 1 ? ((e.buf[e.bufPos + 17]! & 0x08) ? 'LogAppendTime' : 'CreateTime') : 'NoTimestampType',
    maxTimestamp: timestampJson(exactMaxTimestamp(e)),
    producerId: h ? h.producerId : -1,
    producerEpoch: h ? h.producerEpoch : -1,
    baseSequence: h ? h.baseSequence : -1,
    partitionLeaderEpoch: h ? h.partitionLeaderEpoch : -1,
    transactional: h ? isTransactional(h) : false,
    control: h ? isControl(h) : false,
    ...(control ? { controlType: control.name } : {}),
    ...(control && control.coordinatorEpoch >= 0 ? { coordinatorEpoch: control.coordinatorEpoch } : {}),
    crcValid: b.crcValid,
  };
}

/**
 * A compressed legacy wrapper's header carries only its last inner offset; its first offset and
 * record count (Kafka's AbstractLegacyRecordBatch.baseOffset()) need the inner messages decoded.
 * Undefined for an uncompressed message (one record at the entry offset) or an undecodable one.
 */
function legacyWrapperSpan(b: EntryWithSegment): { baseOffset: number; count: number } | undefined {
  if (b.entry.compression === 0) return undefined;
  try {
    const records = decodeEntryRecords(b.entry, { file: b.segment.logPath });
    if (records.length === 0) return undefined;
    return { baseOffset: records[0]!.offset, count: records.length };
  } catch {
    return undefined;
  }
}

/** The control record's type name and, for an end-transaction marker, its coordinator epoch. */
function describeControl(b: EntryWithSegment): { name: string; coordinatorEpoch: number } | undefined {
  const h = b.entry.header!;
  if (h.recordsCount < 1 || (h.attributes & 7) !== 0) return undefined;
  const m = entryControlMarker(b.entry);
  return m && { name: ControlType[m.type] ?? 'UNKNOWN', coordinatorEpoch: m.coordinatorEpoch };
}

function batchText(b: EntryWithSegment & { crcValid: boolean | undefined }): string {
  const j = batchJson(b);
  return (
    `baseOffset: ${j.baseOffset} lastOffset: ${j.lastOffset} count: ${j.count} position: ${j.position} size: ${j.size} magic: ${j.magic} ` +
    `codec: ${j.codec} ${j.timestampType}: ${j.maxTimestamp} producerId: ${j.producerId} producerEpoch: ${j.producerEpoch} ` +
    `baseSequence: ${j.baseSequence} isTransactional: ${j.transactional} isControl: ${j.control}${j.controlType ? ` controlType: ${j.controlType}` : ''}${j.coordinatorEpoch !== undefined ? ` coordinatorEpoch: ${j.coordinatorEpoch}` : ''} crcValid: ${j.crcValid}`
  );
}

export { LogtoolError };
