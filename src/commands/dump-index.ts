/**
 * `logtool dump-index <path>`: entries of `.index` / `.timeindex` files as kafka-dump-log.sh prints
 * them, or JSON; --verify checks every entry against the `.log`.
 */
import path from 'node:path';
import { Command } from 'commander';
import { realIO, LogtoolError, LogSegment, segmentFileName, OffsetIndex, TimeIndex } from '../api/format.js';
import { INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, parseBaseOffset } from '../inspect/format.js';
import { Output, warn } from '../render/output.js';
import { verifySegmentIndexes, type IndexMismatch } from '../inspect/indexes.js';

interface DumpOpts {
  json?: boolean;
  verify?: boolean;
}

/** Resolves the argument to a list of (directory, base offset, which files). */
function targets(arg: string): { dir: string; base: number; kinds: ('index' | 'timeindex')[] }[] {
  const st = realIO.stat(arg);
  if (st?.isDirectory) {
    const bases = new Set<number>();
    for (const n of realIO.readdir(arg)) {
      const b = parseBaseOffset(n);
      if (b !== undefined && (n === segmentFileName(b, INDEX_SUFFIX) || n === segmentFileName(b, TIME_INDEX_SUFFIX) || n === segmentFileName(b, LOG_SUFFIX))) bases.add(b);
    }
    return [...bases].sort((a, b) => a - b).map((base) => ({ dir: arg, base, kinds: ['index', 'timeindex'] }));
  }
  const dir = path.dirname(arg);
  const name = path.basename(arg);
  const base = parseBaseOffset(name.includes('.') ? name : `${name}.`);
  if (base === undefined) throw new LogtoolError('usage', 'expected an .index or .timeindex file, a segment base name (…/00000000000000000000) or a partition directory', { file: arg });
  if (name.endsWith(INDEX_SUFFIX)) return [{ dir, base, kinds: ['index'] }];
  if (name.endsWith(TIME_INDEX_SUFFIX)) return [{ dir, base, kinds: ['timeindex'] }];
  if (/^\d+$/.test(name) || name.endsWith(LOG_SUFFIX)) return [{ dir, base, kinds: ['index', 'timeindex'] }];
  throw new LogtoolError('usage', 'not an index file (.index or .timeindex)', { file: arg });
}

export function dumpIndexCommand(): Command {
  const cmd = new Command('dump-index')
    .description('print the entries of offset and time indexes; --verify checks them against the .log')
    .argument('<path>', '.index or .timeindex file, segment base name, or partition directory')
    .option('--json', 'one JSON object per entry (and per mismatch with --verify)')
    .option('--verify', 'check every entry against the .log (exit 3 on any mismatch)')
    .addHelpText(
      'after',
      `
Examples:
  logtool dump-index logdata/demo-0/00000000000000000000.index
  logtool dump-index logdata/demo-0 --verify
  logtool dump-index /var/lib/kafka/orders-3/00000000000000001200 --json`,
    );
  cmd.action(async (arg: string, opts: DumpOpts) => {
    if (!realIO.stat(arg) && !realIO.stat(`${arg}${INDEX_SUFFIX}`)) throw new LogtoolError('not-found', 'no such file or directory', { file: arg });
    const out = new Output();
    let mismatches = 0;
    try {
      for (const t of targets(arg)) {
        for (const kind of t.kinds) {
          const file = path.join(t.dir, segmentFileName(t.base, kind === 'index' ? INDEX_SUFFIX : TIME_INDEX_SUFFIX));
          if (!realIO.stat(file)) {
            if (t.kinds.length === 1) throw new LogtoolError('not-found', 'no such index file', { file });
            continue;
          }
          const common = { io: realIO, path: file, baseOffset: t.base, maxIndexBytes: 0, writable: false };
          if (!opts.json) await out.line(`Dumping ${file}`);
          if (kind === 'index') {
            const idx = new OffsetIndex(common);
            try {
              if (idx.entries === 0 && !opts.json) await out.line(`${file} is empty.`);
              for (const e of idx.all()) {
                if (out.closed) break;
                if (opts.json) await out.json({ file, offset: e.offset, position: e.position });
                else await out.line(`offset: ${e.offset} position: ${e.position}`);
              }
            } finally {
              idx.close();
            }
          } else {
            const idx = new TimeIndex(common);
            try {
              if (idx.entries === 0 && !opts.json) await out.line(`${file} is empty.`);
              for (const e of idx.all()) {
                if (out.closed) break;
                if (opts.json) await out.json({ file, timestamp: e.timestamp, offset: e.offset });
                else await out.line(`timestamp: ${e.timestamp} offset: ${e.offset}`);
              }
            } finally {
              idx.close();
            }
          }
        }
        if (opts.verify) {
          const logPath = path.join(t.dir, segmentFileName(t.base, LOG_SUFFIX));
          if (!realIO.stat(logPath)) {
            mismatches++;
            warn(`${logPath}: missing, so the indexes of segment ${t.base} cannot be verified`);
            continue;
          }
          const seg = new LogSegment({ io: realIO, dir: t.dir, baseOffset: t.base, indexIntervalBytes: 4096, maxIndexBytes: 0, writable: false });
          let found: IndexMismatch[];
          try {
            found = verifySegmentIndexes(seg, t.kinds);
          } finally {
            seg.closeQuietly();
          }
          mismatches += found.length;
          for (const m of found) {
            if (opts.json) await out.json({ mismatch: true, ...m });
            else warn(`${m.file} entry ${m.entry}: ${m.message}`);
          }
        }
      }
      if (opts.verify && !opts.json && mismatches === 0) await out.line('All index entries verified.');
    } finally {
      await out.flush();
    }
    if (mismatches > 0) process.exitCode = 3;
  });
  return cmd;
}
