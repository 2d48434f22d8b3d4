/**
 * `dump-log` for files of record batches: a partition's `.log` segments and KRaft snapshots
 * (`<end offset>-<epoch>.checkpoint`, bootstrap.checkpoint), as DumpLogSegments.dumpLog prints
 * them: header line, batch lines, record lines under deep iteration, trailing bytes, and the
 * non-consecutive offsets it collects.
 */
import path from 'node:path';
import { realIO, LogtoolError, EntryScanner, type LogEntry, type LogRecord } from '../api/format.js';
import { describeScanEnd, entryBytes, entryRecords as decodedRecords, decodeLegacyEntryWithMetadata, type LegacyRecordWithMetadata, isControl, MIN_ENTRY_SIZE, parseBaseOffset } from '../inspect/format.js';
import { entryCrcValid } from '../inspect/log.js';
import type { Output } from '../render/output.js';
import type { ScalaStringMap } from '../inspect/internal-topics.js';
import { decodedJsonLine } from './internal-decode.js';
import { batchLine, INT_MAX, recordLine, type DumpLogOpts } from './dump-log-lines.js';

/**
 * Records of an entry as Kafka's deep iteration yields them: legacy records carry their own CRC
 * and validity (for a compressed wrapper, each inner message's own), v2 records do not.
 */
function entryRecords(e: LogEntry, file: string): Iterable<LogRecord | LegacyRecordWithMetadata> {
  if (e.header) return decodedRecords(e, { file });
  const { buf, pos } = entryBytes(e);
  return decodeLegacyEntryWithMetadata(buf, pos, e.size, { file, filePosition: e.position });
}

export async function dumpLogFile(file: string, opts: DumpLogOpts, out: Output, nonConsecutive: ScalaStringMap<[number, number][]>): Promise<boolean> {
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
          // DumpLogSegments (Scala): the first record sets lastOffset (a segment need not start at
          // 0); each later gap is prepended to the file's list (printed newest first, in reverse).
          if (lastOffset !== -1 && r.offset !== lastOffset + 1) {
            const pairs = nonConsecutive.get(path.resolve(file)) ?? [];
            pairs.push([lastOffset, r.offset]);
            nonConsecutive.set(path.resolve(file), pairs);
          }
          lastOffset = r.offset;
          if ('crcValid' in r && !r.crcValid) problems = true;
          // Control records have no key/payload in Kafka's text (recordLine); --json shows the decoder's.
          const decoded = e.header && isControl(e.header) ? opts.decodeControl?.(r) : opts.decode?.(r);
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
