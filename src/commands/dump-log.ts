/**
 * `logtool dump-log --files a.log,b.index …`: the lines kafka-dump-log.sh prints (Kafka's
 * DumpLogSegments), so operators' scripts keep working: batch lines, `| offset: …` record lines
 * with --deep-iteration, key/payload with --print-data-log, index dumps with Kafka's checks, producer
 * snapshots (`.snapshot`) as dumpProducerIdSnapshot prints them, and
 * Kafka's stderr reports (mismatches, non-consecutive offsets, trailing bytes).
 */
import path from 'node:path';
import { Command, Option } from 'commander';
import { realIO } from '../engine/io.js';
import { LogtoolError } from '../engine/errors.js';
import { describeScanEnd, entryBytes, EntryScanner, type LogEntry } from '../engine/segment/file-records.js';
import { entryRecords as decodedRecords } from '../engine/format/entry-records.js';
import { decodeLegacyEntryWithMetadata, type LegacyRecordWithMetadata } from '../engine/format/legacy.js';
import { compressionName } from '../engine/format/compression.js';
import { hasDeleteHorizon, HEADER_PROBE_BYTES, isControl, isTransactional, LOG_OVERHEAD, MIN_ENTRY_SIZE, readInt64, type LogRecord } from '../engine/format/record-batch.js';
import { entryCrcValid } from '../engine/log/log-reader.js';
import { readSmallFile } from '../engine/checkpoint.js';
import { LogSegment, parseBaseOffset } from '../engine/segment/segment.js';
import { Output } from '../render/output.js';
import { parseInteger } from './shared.js';
import { describeKraftControl } from '../engine/format/kraft-control.js';
import { readProducerSnapshot, type ProducerSnapshotEntry } from '../engine/partition-state/producer-snapshot.js';
import { addDumpLogDecoderOptions, decodedJsonLine, decoderFor, dumpLogDecoderKind, requireDecoderForJson, type DecoderFlags } from './internal-decode.js';
import type { DecodedInternal, InternalRecord } from '../engine/format/internal/index.js';

const INT_MAX = 2147483647;

interface DumpLogOpts extends DecoderFlags {
  files: string;
  json?: boolean;
  /** The internal-topic decoder chosen by --offsets-decoder & co.; a record it cannot decode is a problem (exit 3). */
  decode?: (r: InternalRecord) => DecodedInternal;
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
  const kraft = describeKraftControl(type, r.value);
  if (kraft) return ` ${kraft}`;
  const names = ['ABORT', 'COMMIT', 'LEADER_CHANGE', 'SNAPSHOT_HEADER', 'SNAPSHOT_FOOTER', 'KRAFT_VERSION', 'KRAFT_VOTERS'];
  return ` controlType: ${names[type] ?? 'UNKNOWN'}(${type})`;
}

/**
 * Records of an entry as Kafka's deep iteration yields them: legacy records carry their own CRC
 * and validity (for a compressed wrapper, each inner message's own), v2 records do not.
 */
function entryRecords(e: LogEntry, file: string): Iterable<LogRecord | LegacyRecordWithMetadata> {
  if (e.header) return decodedRecords(e, { file });
  const { buf, pos } = entryBytes(e);
  return decodeLegacyEntryWithMetadata(buf, pos, e.size, { file, filePosition: e.position });
}

function recordLine(e: LogEntry, r: LogRecord | LegacyRecordWithMetadata, opts: DumpLogOpts, decoded?: DecodedInternal): string {
  let line = '';
  if (!opts.skipRecordMetadata) {
    // Kafka prints the shallow batch's timestamp type (batch.timestampType()) on every record line.
    line += `| offset: ${r.offset} ${timestampTypeName(e)}: ${r.timestamp} keySize: ${r.key ? r.key.length : -1} valueSize: ${r.value ? r.value.length : -1}`;
    const h = e.header;
    if (h) {
      const seq = h.baseSequence === -1 ? -1 : incrementSequence(h.baseSequence, r.offset - h.baseOffset);
      line += ` sequence: ${seq} headerKeys: [${r.headers.map((x) => x.key).join(',')}]`;
      if (isControl(h)) line += controlSuffix(r);
    } else if ('crcValid' in r) {
      line += ` isValid: ${r.crcValid} crc: ${r.crc}`;
    }
  }
  if (opts.printDataLog && !(e.header && isControl(e.header))) {
    let prefix = opts.skipRecordMetadata ? '| ' : ' ';
    // Kafka's MessageParser: the string decoder, or the internal topic's (OffsetsMessageParser & co.).
    const parsed = decoded ?? { key: r.key?.toString('utf8'), payload: r.value?.toString('utf8') };
    if (parsed.key !== undefined) {
      line += `${prefix}key: ${parsed.key}`;
      prefix = ' ';
    }
    if (parsed.payload !== undefined) line += `${prefix}payload: ${parsed.payload}`;
  }
  return line;
}

async function dumpLogFile(file: string, opts: DumpLogOpts, out: Output, nonConsecutive: Map<string, Map<number, number>>): Promise<boolean> {
  const name = path.basename(file);
  if (opts.json) {
    // --json: decoded records only (no header, batch or Kafka text lines).
  } else if (name.endsWith('.checkpoint')) {
    // KRaft snapshots (<end offset>-<epoch>.checkpoint) hold record batches too (Kafka's Snapshots).
    const m = /^(\d{20})-(\d{10})\.checkpoint$/.exec(name);
    if (name === 'bootstrap.checkpoint') await out.line('KRaft bootstrap snapshot');
    else if (m) await out.line(`Snapshot end offset: ${Number(m[1])}, epoch: ${Number(m[2])}`);
  } else {
    await out.line(`Log starting offset: ${parseBaseOffset(name) ?? 0}`);
  }
  const size = realIO.stat(file)?.size ?? 0;
  const end = Math.min(size, opts.maxBytes);
  const scanner = new EntryScanner({ io: realIO, path: file, endPosition: end });
  let validBytes = 0;
  let lastOffset = -1;
  const deep = opts.deepIteration || opts.printDataLog;
  let problems = false;
  for (const e of scanner.entries()) {
    if (out.closed) return problems;
    if (!opts.json) await out.line(batchLine(e, validBytes));
    if (!entryCrcValid(e)) problems = true;
    if (deep) {
      // Records are printed as they are decoded (as Kafka's deep iteration does), so a batch of
      // millions of records is never held; a record that cannot be decoded ends that batch.
      try {
        for (const r of entryRecords(e, file)) {
          if (r.offset !== lastOffset + 1) {
            const pairs = nonConsecutive.get(path.resolve(file)) ?? new Map<number, number>();
            pairs.set(lastOffset, r.offset);
            nonConsecutive.set(path.resolve(file), pairs);
          }
          lastOffset = r.offset;
          if ('crcValid' in r && !r.crcValid) problems = true;
          const decoded = opts.decode && !(e.header && isControl(e.header)) ? opts.decode(r) : undefined;
          if (decoded?.problem) problems = true;
          if (!opts.json) await out.line(recordLine(e, r, opts, decoded));
          else if (decoded) await out.line(decodedJsonLine(r, decoded));
          if (out.closed) return problems;
        }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EPIPE') throw err;
        problems = true;
        process.stderr.write(`${err instanceof LogtoolError ? err.describe() : (err as Error).message}\n`);
      }
    }
    validBytes += e.size;
  }
  if (scanner.end.kind === 'corrupt') {
    problems = true;
    const sizeField = entrySizeFieldAt(file, scanner.end.position);
    if (sizeField !== undefined && sizeField < MIN_ENTRY_SIZE) {
      // Kafka's FileLogInputStream throws here (CorruptRecordException) instead of counting trailing bytes.
      process.stderr.write(`Found record size ${sizeField} smaller than minimum record overhead (${MIN_ENTRY_SIZE}) in file ${file}.\n`);
      return problems;
    }
    process.stderr.write(`${describeScanEnd(file, scanner.end)}\n`);
  }
  const trailing = size - validBytes;
  if (trailing > 0 && opts.maxBytes === INT_MAX) {
    const found = `Found ${trailing} invalid bytes at the end of ${path.basename(file)}`;
    if (opts.json) process.stderr.write(`${found}\n`);
    else await out.line(found);
    problems = true;
  }
  return problems;
}

/** The int32 size field of the entry at `position`, if the file holds it. */
function entrySizeFieldAt(file: string, position: number): number | undefined {
  const fd = realIO.open(file, 'r');
  try {
    const b = Buffer.alloc(4);
    return realIO.read(fd, b, 0, 4, position + 8) === 4 ? b.readInt32BE(0) : undefined;
  } finally {
    realIO.close(fd);
  }
}

/** Kafka's TimeIndexDumpErrors: per absolute file path, in the order met. */
interface TimeIndexErrors {
  mismatch: Map<string, [number, number][]>;
  outOfOrder: Map<string, [number, number][]>;
  notFound: Map<string, [number, number][]>;
}

function pushTo(map: Map<string, [number, number][]>, file: string, pair: [number, number]): void {
  const list = map.get(file) ?? [];
  list.push(pair);
  map.set(file, list);
}

/** Index files address positions with int32s; a larger file is not an index to load whole. */
const MAX_INDEX_FILE_BYTES = 0x7fffffff;

/**
 * An index file's entries as Kafka's AbstractIndex opens it for DumpLogSegments: the whole file
 * (entries = length / entrySize, zero padding included); the dump itself stops at the first entry
 * after the first whose offset is the base offset.
 */
function readIndexFile(file: string, entrySize: number): { buf: Buffer; entries: number } {
  const buf = readSmallFile(realIO, file, MAX_INDEX_FILE_BYTES);
  if (!buf) throw new LogtoolError('not-found', 'no such file', { file });
  return { buf, entries: Math.floor(buf.length / entrySize) };
}

/**
 * Last offset of the first batch in the log slice [position, position + maxMessageSize), as
 * `fileRecords.slice(position, maxMessageSize).batches().iterator().next().lastOffset()` reads it:
 * the header fields only (a legacy entry's offset; a v2 batch's baseOffset + lastOffsetDelta),
 * whether or not the position is a real batch boundary. −1 where Kafka finds no batch (it throws).
 */
function firstBatchLastOffset(fd: number, logSize: number, position: number, maxMessageSize: number): number {
  const end = Math.min(logSize, position + maxMessageSize);
  if (position < 0 || position >= end - HEADER_PROBE_BYTES) return -1;
  const h = Buffer.alloc(27);
  const n = realIO.read(fd, h, 0, 27, position);
  if (n < HEADER_PROBE_BYTES) return -1;
  const size = h.readInt32BE(8);
  if (size < MIN_ENTRY_SIZE || position > end - LOG_OVERHEAD - size) return -1;
  const offset = readInt64(h, 0);
  if (h.readInt8(16) < 2) return offset;
  return n < 27 ? -1 : offset + h.readInt32BE(23);
}

async function dumpOffsetIndex(file: string, opts: DumpLogOpts, out: Output, mismatches: Map<string, Map<number, number>>): Promise<boolean> {
  const base = parseBaseOffset(path.basename(file));
  if (base === undefined) throw new LogtoolError('usage', 'index file name does not start with a base offset', { file });
  const { buf, entries } = readIndexFile(file, 8);
  const entry = (i: number) => ({ offset: base + buf.readInt32BE(i * 8), position: buf.readInt32BE(i * 8 + 4) });
  if (entries === 0) {
    await out.line(`${file} is empty.`);
    return false;
  }
  if (opts.indexSanityCheck) {
    const last = entry(entries - 1).offset;
    let problem: string | undefined;
    if (last < base) problem = `Corrupt index found, index file (${path.resolve(file)}) has non-zero size but the last offset is ${last} which is less than the base offset ${base}`;
    else if (buf.length % 8 !== 0) problem = `Index file ${path.resolve(file)} is corrupt, found ${buf.length} bytes which is neither positive nor a multiple of 8`;
    if (problem) {
      process.stderr.write(`${problem}\n`);
      return true;
    }
    await out.line(`${file} passed sanity check.`);
    return false;
  }
  const logPath = companionLog(file);
  const fd = realIO.stat(logPath) ? realIO.open(logPath, 'r') : undefined;
  if (fd === undefined) process.stderr.write(`${logPath} is missing; index entries are printed without checking them\n`);
  try {
    const logSize = fd === undefined ? 0 : realIO.fstat(fd).size;
    for (let i = 0; i < entries; i++) {
      if (out.closed) break;
      const e = entry(i);
      // Sparse file: after a crash there may be many zero entries; Kafka stops at the first.
      if (e.offset === base && i > 0) break;
      if (fd !== undefined) {
        const found = firstBatchLastOffset(fd, logSize, e.position, opts.maxMessageSize);
        if (found !== e.offset) {
          const byOffset = mismatches.get(path.resolve(file)) ?? new Map<number, number>();
          byOffset.set(e.offset, found);
          mismatches.set(path.resolve(file), byOffset);
        }
      }
      if (!opts.verifyIndexOnly) await out.line(`offset: ${e.offset} position: ${e.position}`);
    }
  } finally {
    if (fd !== undefined) realIO.close(fd);
  }
  return fd === undefined;
}

async function dumpTimeIndex(file: string, opts: DumpLogOpts, out: Output, errors: TimeIndexErrors): Promise<boolean> {
  const base = parseBaseOffset(path.basename(file));
  if (base === undefined) throw new LogtoolError('usage', 'index file name does not start with a base offset', { file });
  const { buf, entries } = readIndexFile(file, 12);
  const entry = (i: number) => ({ timestamp: readInt64(buf, i * 12), offset: base + buf.readInt32BE(i * 12 + 8) });
  if (opts.indexSanityCheck) {
    let problem: string | undefined;
    if (entries > 0) {
      const first = entry(0);
      const last = entry(entries - 1);
      if (last.timestamp < first.timestamp) {
        problem = `Corrupt time index found, time index file (${path.resolve(file)}) has non-zero size but the last timestamp is ${last.timestamp} which is less than the first timestamp ${first.timestamp}`;
      } else if (last.offset < base) {
        problem = `Corrupt time index found, time index file (${path.resolve(file)}) has non-zero size but the last offset is ${last.offset} which is less than the first offset ${base}`;
      }
    }
    if (!problem && buf.length % 12 !== 0) problem = `Time index file ${path.resolve(file)} is corrupt, found ${buf.length} bytes which is neither positive nor a multiple of 12`;
    if (problem) {
      process.stderr.write(`${problem}\n`);
      return true;
    }
    await out.line(`${file} passed sanity check.`);
    return false;
  }
  const seg = openSegmentFor(file);
  if (!seg) process.stderr.write(`${companionLog(file)} is missing; time index entries are printed without checking them\n`);
  const abs = path.resolve(file);
  try {
    let prev = -1;
    for (let i = 0; i < entries; i++) {
      if (out.closed) break;
      const e = entry(i);
      if (e.offset === base && i > 0) break;
      if (seg) {
        // Kafka: offset-index lookup, then the first batch from there whose last offset is ≥ the entry's.
        const t = seg.translateOffset(e.offset);
        if (!t) pushTo(errors.notFound, abs, [e.offset, -1]);
        else if (t.entry.lastOffset !== e.offset) pushTo(errors.notFound, abs, [e.offset, t.entry.lastOffset]);
        else {
          let max = -1;
          try {
            for (const r of decodedRecords(t.entry, { file: seg.logPath })) max = Math.max(max, Number(r.timestamp));
          } catch {
            max = t.entry.maxTimestamp;
          }
          if (max !== e.timestamp) pushTo(errors.mismatch, abs, [e.timestamp, max]);
          if (prev >= e.timestamp) pushTo(errors.outOfOrder, abs, [e.timestamp, prev]);
        }
      }
      if (!opts.verifyIndexOnly) await out.line(`timestamp: ${e.timestamp} offset: ${e.offset}`);
      prev = e.timestamp;
    }
  } finally {
    seg?.closeQuietly();
  }
  return !seg;
}

/** The `.log` of the segment an index file belongs to (same directory, same base name). */
/** Kafka's DefaultRecordBatch.decrementSequence: wraps below 0 to Integer.MAX_VALUE. */
function decrementSequence(sequence: number, decrement: number): number {
  if (sequence < decrement) return INT_MAX - (decrement - sequence) + 1;
  return sequence - decrement;
}

/** One line of DumpLogSegments.dumpProducerIdSnapshot (trailing space included when there is no batch). */
export function producerSnapshotLine(e: ProducerSnapshotEntry): string {
  const txn = e.currentTxnFirstOffset >= 0n ? `OptionalLong[${e.currentTxnFirstOffset}]` : 'OptionalLong.empty';
  let line = `producerId: ${e.producerId} producerEpoch: ${e.epoch} coordinatorEpoch: ${e.coordinatorEpoch} currentTxnFirstOffset: ${txn} lastTimestamp: ${e.timestamp} `;
  if (e.lastOffset >= 0n)
    line += `firstSequence: ${decrementSequence(e.lastSequence, e.offsetDelta)} lastSequence: ${e.lastSequence} lastOffset: ${e.lastOffset} offsetDelta: ${e.offsetDelta} timestamp: ${e.timestamp}`;
  return line;
}

/** A `.snapshot` file: one line per producer; a corrupt file is reported on stderr (as Kafka does) and is a problem. */
async function dumpProducerSnapshot(file: string, out: Output): Promise<boolean> {
  let entries: ProducerSnapshotEntry[];
  try {
    entries = readProducerSnapshot(realIO, file);
  } catch (err) {
    if (!(err instanceof LogtoolError) || err.kind !== 'corrupt') throw err;
    process.stderr.write(`${err.describe()}\n`);
    return true;
  }
  for (const e of entries) {
    if (out.closed) break;
    await out.line(producerSnapshotLine(e));
  }
  return false;
}

function companionLog(file: string): string {
  return path.join(path.dirname(file), `${path.basename(file).split('.')[0]}.log`);
}

function openSegmentFor(file: string): LogSegment | undefined {
  const base = parseBaseOffset(path.basename(file));
  if (base === undefined) return undefined;
  const dir = path.dirname(file);
  if (!realIO.stat(companionLog(file))) return undefined;
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
    .option('--max-message-size <n>', 'size of the log slice read at each .index entry when checking it', parseInteger('--max-message-size', 1), 5242880)
    .option('--max-bytes <n>', 'read at most this many bytes of a .log', parseInteger('--max-bytes', 1), INT_MAX)
    .option('--skip-record-metadata', 'omit per-record metadata')
    .option('--json', 'with a decoder: one JSON object per decoded record, {"offset","timestamp",…} (no other lines)')
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
    requireDecoderForJson(opts.json, decoderKind);
    if (decoderKind) {
      opts.decode = decoderFor(decoderKind);
      opts.printDataLog = true;
    }
    for (const c of [opts.keyDecoderClass, opts.valueDecoderClass]) {
      if (c !== undefined && !/StringDecoder$/.test(c)) throw new LogtoolError('usage', `decoder ${c} is not supported; keys and payloads are printed as UTF-8 strings (StringDecoder)`);
    }
    // As in Kafka, naming a decoder implies printing the data.
    if (opts.keyDecoderClass !== undefined || opts.valueDecoderClass !== undefined) opts.printDataLog = true;
    const out = new Output();
    // Kafka keeps these in TreeMaps: one line per key, index offsets descending, gaps ascending.
    const mismatches = new Map<string, Map<number, number>>();
    const nonConsecutive = new Map<string, Map<number, number>>();
    const timeErrors: TimeIndexErrors = { mismatch: new Map(), outOfOrder: new Map(), notFound: new Map() };
    let problems = false;
    try {
      for (const file of opts.files.split(',').filter((f) => f.length > 0)) {
        if (out.closed) break;
        const st = realIO.stat(file);
        if (!st) throw new LogtoolError('not-found', 'no such file', { file });
        const suffix = path.extname(file);
        if (opts.json && suffix !== '.log' && suffix !== '.checkpoint') {
          process.stderr.write(`Ignoring ${file}: --json prints the decoded records of .log and .checkpoint files\n`);
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
          problems = (await dumpProducerSnapshot(file, out)) || problems;
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
      for (const [i, l] of [...list].sort((a, b) => b[0] - a[0])) process.stderr.write(`  Index offset: ${i}, log offset: ${l}\n`);
    }
    // TimeIndexDumpErrors.printErrors: mismatches, then out-of-order timestamps, then offsets not found.
    for (const [file, list] of timeErrors.mismatch) {
      problems = true;
      process.stderr.write(`Found timestamp mismatch in :${file}\n`);
      for (const [i, l] of list) process.stderr.write(`  Index timestamp: ${i}, log timestamp: ${l}\n`);
    }
    for (const [file, list] of timeErrors.outOfOrder) {
      problems = true;
      process.stderr.write(`Found out of order timestamp in :${file}\n`);
      for (const [i, p] of list) process.stderr.write(`  Index timestamp: ${i}, Previously indexed timestamp: ${p}\n`);
    }
    for (const list of timeErrors.notFound.values()) {
      problems = true;
      process.stderr.write('The following indexed offsets are not found in the log.\n');
      for (const [i, l] of list) process.stderr.write(`Indexed offset: ${i}, found log offset: ${l}\n`);
    }
    for (const [file, list] of nonConsecutive) {
      process.stderr.write(`Non-consecutive offsets in ${file}\n`);
      for (const [a, b] of [...list].sort((x, y) => x[0] - y[0])) process.stderr.write(`  ${a} is followed by ${b}\n`);
    }
    if (problems) process.exitCode = 3;
  });
  return cmd;
}
