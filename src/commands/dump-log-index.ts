/**
 * `dump-log` for `.index` and `.timeindex` files, as DumpLogSegments.dumpIndex and dumpTimeIndex
 * print and check them (OffsetIndex / TimeIndex entries against the segment's `.log`), and the
 * reports Kafka prints on stderr at the end (mismatches, TimeIndexDumpErrors.printErrors).
 */
import path from 'node:path';
import { realIO, LogtoolError, LogSegment } from '../api/format.js';
import { entryRecords as decodedRecords, HEADER_PROBE_BYTES, LOG_OVERHEAD, MIN_ENTRY_SIZE, readInt64, parseBaseOffset } from '../inspect/format.js';
import { readSmallFile } from '../inspect/log.js';
import type { Output } from '../render/output.js';
import type { DumpLogOpts } from './dump-log-lines.js';
import { ScalaStringMap } from '../inspect/internal-topics.js';

/** Kafka's TimeIndexDumpErrors: per absolute file path (Scala mutable.Maps, iterated in their order). */
export interface TimeIndexErrors {
  mismatch: ScalaStringMap<[number, number][]>;
  outOfOrder: ScalaStringMap<[number, number][]>;
  notFound: ScalaStringMap<[number, number][]>;
}

export const newTimeIndexErrors = (): TimeIndexErrors => ({ mismatch: new ScalaStringMap(), outOfOrder: new ScalaStringMap(), notFound: new ScalaStringMap() });

/** TimeIndexDumpErrors.record…: the map is put to only when the file's list is new. */
function pushTo(map: ScalaStringMap<[number, number][]>, file: string, pair: [number, number]): void {
  let list = map.get(file);
  if (!list) map.set(file, (list = []));
  list.push(pair);
}

/** Index files address positions with int32s; a larger file is not an index to load whole. */
const MAX_INDEX_FILE_BYTES = 0x7fffffff;

/**
 * An index file's entries as Kafka's AbstractIndex opens it for DumpLogSegments: the whole file
 * (entries = length / entrySize, zero padding included); the dump itself stops at the first entry
 * after the first whose offset is the base offset.
 */
export function readIndexFile(file: string, entrySize: number): { buf: Buffer; entries: number } {
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

export async function dumpOffsetIndex(file: string, opts: DumpLogOpts, out: Output, mismatches: ScalaStringMap<[number, number][]>): Promise<boolean> {
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
          // Scala: prepended to the file's List (each put to the map), printed newest first.
          const pairs = mismatches.get(path.resolve(file)) ?? [];
          pairs.push([e.offset, found]);
          mismatches.set(path.resolve(file), pairs);
        }
      }
      if (!opts.verifyIndexOnly) await out.line(`offset: ${e.offset} position: ${e.position}`);
    }
  } finally {
    if (fd !== undefined) realIO.close(fd);
  }
  return fd === undefined;
}

export async function dumpTimeIndex(file: string, opts: DumpLogOpts, out: Output, errors: TimeIndexErrors): Promise<boolean> {
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

/** Kafka's end-of-run stderr reports for index files; true when there was any. */
export function printIndexReports(mismatches: ScalaStringMap<[number, number][]>, timeErrors: TimeIndexErrors): boolean {
  let problems = false;
  for (const [file, list] of mismatches) {
    problems = true;
    process.stderr.write(`Mismatches in :${file}\n`);
    for (let k = list.length - 1; k >= 0; k--) process.stderr.write(`  Index offset: ${list[k]![0]}, log offset: ${list[k]![1]}\n`);
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
  return problems;
}
