/**
 * `logtool dump-log --files a.log,b.index …`: the lines kafka-dump-log.sh prints (Kafka's
 * DumpLogSegments), so operators' scripts keep working: batch lines, `| offset: …` record lines
 * with --deep-iteration, key/payload with --print-data-log, index dumps with Kafka's checks, and
 * Kafka's stderr reports (mismatches, non-consecutive offsets, trailing bytes).
 */
import path from 'node:path';
import { Command, Option } from 'commander';
import { realIO } from '../engine/io.js';
import { LogtoolError } from '../engine/errors.js';
import { EntryScanner, type LogEntry } from '../engine/file-records.js';
import { decodeEntryRecords } from '../engine/format/entry-records.js';
import { compressionName } from '../engine/format/compression.js';
import { hasDeleteHorizon, isControl, isTransactional, type LogRecord } from '../engine/format/record-batch.js';
import { entryCrcValid } from '../engine/log-reader.js';
import { OffsetIndex } from '../engine/index/offset-index.js';
import { TimeIndex } from '../engine/index/time-index.js';
import { LogSegment, parseBaseOffset } from '../engine/segment.js';
import { Output } from '../render/output.js';
import { parseInteger } from './shared.js';

const INT_MAX = 2147483647;

interface DumpLogOpts {
  files: string;
  printDataLog?: boolean;
  deepIteration?: boolean;
  verifyIndexOnly?: boolean;
  indexSanityCheck?: boolean;
  maxMessageSize: number;
  maxBytes: number;
  skipRecordMetadata?: boolean;
  keyDecoderClass?: string;
  valueDecoderClass?: string;
}

const timestampTypeName = (e: LogEntry): string => {
  if (e.header) return e.header.attributes & 0x08 ? 'LogAppendTime' : 'CreateTime';
  if (e.magic === 0) return 'NoTimestampType';
  return e.buf[e.bufPos + 17]! & 0x08 ? 'LogAppendTime' : 'CreateTime';
};

/** Kafka's DefaultRecordBatch.incrementSequence: wraps past Integer.MAX_VALUE to 0. */
function incrementSequence(sequence: number, increment: number): number {
  if (sequence > INT_MAX - increment) return increment - (INT_MAX - sequence) - 1;
  return sequence + increment;
}

function batchLine(e: LogEntry, position: number): string {
  const h = e.header;
  let head: string;
  if (h) {
    const lastSeq = h.baseSequence === -1 ? -1 : incrementSequence(h.baseSequence, h.lastOffsetDelta);
    const horizon = hasDeleteHorizon(h) ? `OptionalLong[${h.baseTimestamp}]` : 'OptionalLong.empty';
    head =
      `baseOffset: ${e.baseOffset} lastOffset: ${e.lastOffset} count: ${h.recordsCount} baseSequence: ${h.baseSequence} lastSequence: ${lastSeq} ` +
      `producerId: ${h.producerId} producerEpoch: ${h.producerEpoch} partitionLeaderEpoch: ${h.partitionLeaderEpoch} ` +
      `isTransactional: ${isTransactional(h)} isControl: ${isControl(h)} deleteHorizonMs: ${horizon}`;
  } else {
    head = `offset: ${e.lastOffset}`;
  }
  const crc = h ? h.crc : e.buf.readUInt32BE(e.bufPos + 12);
  return `${head} position: ${position} ${timestampTypeName(e)}: ${e.maxTimestamp} size: ${e.size} magic: ${e.magic} compresscodec: ${compressionName(e.compression)} crc: ${crc} isvalid: ${entryCrcValid(e)}`;
}

function controlSuffix(r: LogRecord): string {
  const key = r.key;
  if (!key || key.length < 4) return ' controlType: UNKNOWN(-1)';
  const type = key.readInt16BE(2);
  if ((type === 0 || type === 1) && r.value && r.value.length >= 6) {
    return ` endTxnMarker: ${type === 0 ? 'ABORT' : 'COMMIT'} coordinatorEpoch: ${r.value.readInt32BE(2)}`;
  }
  const names = ['ABORT', 'COMMIT', 'LEADER_CHANGE', 'SNAPSHOT_HEADER', 'SNAPSHOT_FOOTER', 'KRAFT_VERSION', 'KRAFT_VOTERS'];
  return ` controlType: ${names[type] ?? 'UNKNOWN'}(${type})`;
}

function recordLine(e: LogEntry, r: LogRecord, opts: DumpLogOpts): string {
  let line = '';
  if (!opts.skipRecordMetadata) {
    line += `| offset: ${r.offset} ${timestampTypeName(e)}: ${r.timestamp} keySize: ${r.key ? r.key.length : -1} valueSize: ${r.value ? r.value.length : -1}`;
    const h = e.header;
    if (h) {
      const seq = h.baseSequence === -1 ? -1 : incrementSequence(h.baseSequence, r.offset - h.baseOffset);
      line += ` sequence: ${seq} headerKeys: [${r.headers.map((x) => x.key).join(',')}]`;
      if (isControl(h)) line += controlSuffix(r);
    } else {
      const legacy = (r as LogRecord & { legacyCrc?: number; legacyValid?: boolean });
      line += ` isValid: ${legacy.legacyValid ?? entryCrcValid(e)} crc: ${legacy.legacyCrc ?? e.buf.readUInt32BE(e.bufPos + 12)}`;
    }
  }
  if (opts.printDataLog && !(e.header && isControl(e.header))) {
    let prefix = opts.skipRecordMetadata ? '| ' : ' ';
    if (r.key) {
      line += `${prefix}key: ${r.key.toString('utf8')}`;
      prefix = ' ';
    }
    if (r.value) line += `${prefix}payload: ${r.value.toString('utf8')}`;
  }
  return line;
}

async function dumpLogFile(file: string, opts: DumpLogOpts, out: Output, nonConsecutive: Map<string, [number, number][]>): Promise<boolean> {
  const base = parseBaseOffset(path.basename(file));
  await out.line(`Log starting offset: ${base ?? 0}`);
  const size = realIO.stat(file)?.size ?? 0;
  const end = Math.min(size, opts.maxBytes);
  const scanner = new EntryScanner({ io: realIO, path: file, endPosition: end });
  let validBytes = 0;
  let lastOffset = -1;
  const deep = opts.deepIteration || opts.printDataLog;
  let problems = false;
  for (const e of scanner.entries()) {
    if (out.closed) return problems;
    await out.line(batchLine(e, validBytes));
    if (!entryCrcValid(e)) problems = true;
    if (deep) {
      let records: LogRecord[];
      try {
        records = decodeEntryRecords(e, { file });
      } catch (err) {
        problems = true;
        process.stderr.write(`${err instanceof LogtoolError ? err.describe() : (err as Error).message}\n`);
        validBytes += e.size;
        continue;
      }
      for (const r of records) {
        if (r.offset !== lastOffset + 1) {
          const list = nonConsecutive.get(path.resolve(file)) ?? [];
          list.push([lastOffset, r.offset]);
          nonConsecutive.set(path.resolve(file), list);
        }
        lastOffset = r.offset;
        await out.line(recordLine(e, r, opts));
      }
    }
    validBytes += e.size;
  }
  const trailing = size - validBytes;
  if (trailing > 0 && opts.maxBytes === INT_MAX) {
    await out.line(`Found ${trailing} invalid bytes at the end of ${path.basename(file)}`);
    problems = true;
  }
  return problems;
}

function openSegmentFor(file: string): LogSegment | undefined {
  const base = parseBaseOffset(path.basename(file));
  if (base === undefined) return undefined;
  const dir = path.dirname(file);
  const logPath = path.join(dir, `${path.basename(file).split('.')[0]}.log`);
  if (!realIO.stat(logPath)) return undefined;
  return new LogSegment({ io: realIO, dir, baseOffset: base, indexIntervalBytes: 4096, maxIndexBytes: 0, writable: false });
}

export function dumpLogCommand(): Command {
  const cmd = new Command('dump-log')
    .description("print segment, index and time-index files exactly as Kafka's kafka-dump-log.sh does")
    .requiredOption('--files <files>', 'comma-separated .log, .index, .timeindex files')
    .option('--print-data-log', 'print keys and payloads (implies --deep-iteration)')
    .option('--deep-iteration', 'print one line per record')
    .option('--verify-index-only', 'check index entries against the log without printing them')
    .option('--index-sanity-check', "run only Kafka's index sanity check")
    .option('--max-message-size <n>', 'accepted for compatibility (entries are read whole)', parseInteger('--max-message-size', 1), 5242880)
    .option('--max-bytes <n>', 'read at most this many bytes of a .log', parseInteger('--max-bytes', 1), INT_MAX)
    .option('--skip-record-metadata', 'omit per-record metadata')
    .addOption(new Option('--key-decoder-class <class>', 'only the string decoder is supported').default(undefined))
    .addOption(new Option('--value-decoder-class <class>', 'only the string decoder is supported').default(undefined))
    .addHelpText(
      'after',
      `
Examples:
  logtool dump-log --files /var/lib/kafka/orders-0/00000000000000000000.log --deep-iteration --print-data-log
  logtool dump-log --files 00000000000000000000.index,00000000000000000000.timeindex --verify-index-only`,
    );
  cmd.action(async (opts: DumpLogOpts) => {
    for (const c of [opts.keyDecoderClass, opts.valueDecoderClass]) {
      if (c !== undefined && !/StringDecoder$/.test(c)) throw new LogtoolError('usage', `decoder ${c} is not supported; keys and payloads are printed as UTF-8 strings (StringDecoder)`);
    }
    const out = new Output();
    const mismatches = new Map<string, [number, number][]>();
    const nonConsecutive = new Map<string, [number, number][]>();
    const timeErrors: string[] = [];
    let problems = false;
    try {
      for (const file of opts.files.split(',').filter((f) => f.length > 0)) {
        if (out.closed) break;
        const st = realIO.stat(file);
        if (!st) throw new LogtoolError('not-found', 'no such file', { file });
        await out.line(`Dumping ${file}`);
        const suffix = path.extname(file);
        if (suffix === '.log') {
          problems = (await dumpLogFile(file, opts, out, nonConsecutive)) || problems;
        } else if (suffix === '.index' || suffix === '.timeindex') {
          const base = parseBaseOffset(path.basename(file));
          if (base === undefined) throw new LogtoolError('usage', 'index file name does not start with a base offset', { file });
          const common = { io: realIO, path: file, baseOffset: base, maxIndexBytes: 0, writable: false };
          const seg = openSegmentFor(file);
          try {
            if (suffix === '.index') {
              const idx = new OffsetIndex(common);
              try {
                if (idx.entries === 0) {
                  await out.line(`${file} is empty.`);
                  continue;
                }
                if (opts.indexSanityCheck) {
                  if (st.size % 8 !== 0 || idx.lastOffset < base) {
                    problems = true;
                    process.stderr.write(`Corrupt index found, index file (${file}) has non-zero size but the last offset is ${idx.lastOffset} which is less than the base offset ${base}.\n`);
                  } else await out.line(`${file} passed sanity check.`);
                  continue;
                }
                for (const e of idx.all()) {
                  if (seg) {
                    const b = seg.scanner({ startPosition: Math.min(e.position, seg.size) }).entries().next();
                    const found = b.done ? -1 : b.value.lastOffset;
                    if (found !== e.offset) {
                      const list = mismatches.get(path.resolve(file)) ?? [];
                      list.push([e.offset, found]);
                      mismatches.set(path.resolve(file), list);
                    }
                  }
                  if (!opts.verifyIndexOnly) await out.line(`offset: ${e.offset} position: ${e.position}`);
                }
              } finally {
                idx.close();
              }
            } else {
              const idx = new TimeIndex(common);
              try {
                if (opts.indexSanityCheck) {
                  await out.line(`${file} passed sanity check.`);
                  continue;
                }
                let prev = -1;
                for (const e of idx.all()) {
                  if (seg) {
                    const t = seg.translateOffset(e.offset);
                    if (!t) timeErrors.push(`The following indexed offsets are not found in the log.\nIndexed offset: ${e.offset}, found log offset: -1`);
                    else if (t.entry.lastOffset !== e.offset) timeErrors.push(`The following indexed offsets are not found in the log.\nIndexed offset: ${e.offset}, found log offset: ${t.entry.lastOffset}`);
                    else {
                      let max = -1;
                      try {
                        for (const r of decodeEntryRecords(t.entry, { file: seg.logPath })) max = Math.max(max, r.timestamp);
                      } catch {
                        max = t.entry.maxTimestamp;
                      }
                      if (max !== e.timestamp) timeErrors.push(`Found timestamp mismatch in :${path.resolve(file)}\n  Index timestamp: ${e.timestamp}, log timestamp: ${max}`);
                      if (prev >= e.timestamp) timeErrors.push(`Found out of order timestamp in :${path.resolve(file)}\n  Index timestamp: ${e.timestamp}, Previously indexed timestamp: ${prev}`);
                    }
                  }
                  if (!opts.verifyIndexOnly) await out.line(`timestamp: ${e.timestamp} offset: ${e.offset}`);
                  prev = e.timestamp;
                }
              } finally {
                idx.close();
              }
            }
          } finally {
            seg?.closeQuietly();
          }
        } else {
          process.stderr.write(`Ignoring unknown file ${file}\n`);
        }
      }
    } finally {
      await out.flush();
    }
    for (const [file, list] of mismatches) {
      problems = true;
      process.stderr.write(`Mismatches in :${file}\n`);
      for (const [i, l] of list.sort((a, b) => b[0] - a[0])) process.stderr.write(`  Index offset: ${i}, log offset: ${l}\n`);
    }
    for (const t of timeErrors) {
      problems = true;
      process.stderr.write(`${t}\n`);
    }
    for (const [file, list] of nonConsecutive) {
      process.stderr.write(`Non-consecutive offsets in ${file}\n`);
      for (const [a, b] of list) process.stderr.write(`  ${a} is followed by ${b}\n`);
    }
    if (problems) process.exitCode = 3;
  });
  return cmd;
}
