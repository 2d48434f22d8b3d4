/**
 * `logtool rebuild-index <dir|segment>`: rebuilds `.index` and `.timeindex` from the `.log` in one
 * streaming pass by Kafka's recovery rule (index-rebuilder.ts, the code LogSegment.recover uses),
 * writing `<name>.tmp` files that are fsynced and renamed into place. --verify compares the
 * existing files with what a rebuild would write instead.
 *
 * Differences under --verify are classified: files Kafka accepts (for example a time index written
 * by an older broker's append path, or entries placed by the append path after a reopen) are
 * "different but valid" and do not fail the command; missing or invalid files do.
 *
 * The `.log` is never changed: if its data ends in an invalid batch, the indexes cover the valid
 * prefix (what Kafka's recovery would write after truncating) and the command exits 3, pointing at
 * `logtool recover`.
 *
 * Exit codes: 0 ok, 3 invalid data or (with --verify) missing/invalid indexes, 1 failure.
 */
import path from 'node:path';
import { Command } from 'commander';
import { realIO, LogtoolError, LogSegment, segmentFileName } from '../api/format.js';
import { DirectoryLock, requireWritableCheckpoints, resolveConfig, loadRememberedConfig } from '../inspect/log.js';
import { INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, parseBaseOffset, rebuildSegmentIndexes, verifySegmentIndexFiles, type IndexDifference, type IndexScanResult } from '../inspect/format.js';
import { verifySegmentIndexes } from '../inspect/indexes.js';
import { rebuildTxnIndexes } from '../inspect/log.js';
import { Output, colours, warn } from '../render/output.js';
import { startProgress } from '../render/progress.js';
import { formatBytes } from './recover.js';
import { addTopicConfigOptions, configFromOptions } from './shared.js';
import { addLogDirOptions, isLogDirPath, rejectSelection, runOverLogDir, type LogDirOptions, type PartitionResult, type PartitionTarget } from './logdir-runner.js';

interface RebuildOpts extends LogDirOptions {
  verify?: boolean;
  json?: boolean;
  progress?: boolean;
}

interface SegmentOutcome {
  segment: string;
  logBytes: number;
  batches: number;
  validBytes: number;
  offsetEntries: number;
  timeEntries: number;
  seconds: number;
  /** Where the valid data ends, if before the end of the file. */
  invalidTail?: { position: number; reason: string };
  /** --verify only. */
  verdict?: 'identical' | 'different-but-valid' | 'missing' | 'invalid';
  missing?: string[];
  differenceCount?: number;
  differences?: IndexDifference[];
  problems?: string[];
  /** Its `.txnindex` was rewritten from the markers (or, with --verify, differs from them). */
  txnIndexRebuilt?: true;
}

/** The partition directory and the segment base offsets the argument names. */
function resolveTargets(arg: string): { dir: string; bases: number[] } {
  const st = realIO.stat(arg);
  if (st?.isDirectory) {
    const bases: number[] = [];
    for (const n of realIO.readdir(arg)) {
      const b = parseBaseOffset(n);
      if (b !== undefined && n === segmentFileName(b, LOG_SUFFIX)) bases.push(b);
    }
    return { dir: path.resolve(arg), bases: bases.sort((a, b) => a - b) };
  }
  const name = path.basename(arg);
  const base = parseBaseOffset(name.includes('.') ? name : `${name}.`);
  if (base === undefined || !(/^\d+$/.test(name) || [LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX].some((s) => name === segmentFileName(base, s)))) {
    throw new LogtoolError('usage', 'expected a partition directory, a segment file (.log, .index, .timeindex) or a segment base name', { file: arg });
  }
  const dir = path.resolve(path.dirname(arg));
  if (!realIO.stat(path.join(dir, segmentFileName(base, LOG_SUFFIX)))) throw new LogtoolError('not-found', 'no such segment (.log missing)', { file: path.join(dir, segmentFileName(base, LOG_SUFFIX)) });
  return { dir, bases: [base] };
}

function outcomeOf(segment: string, scan: IndexScanResult, seconds: number): SegmentOutcome {
  const o: SegmentOutcome = {
    segment,
    logBytes: scan.fileBytes,
    batches: scan.batches,
    validBytes: scan.validBytes,
    offsetEntries: scan.offsetEntries,
    timeEntries: scan.timeEntries,
    seconds,
  };
  if (scan.end.kind !== 'end') o.invalidTail = { position: scan.end.position, reason: scan.end.reason };
  return o;
}

/** For files that differ from a rebuild: does Kafka's lookup invariant still hold for them? */
function classify(dir: string, base: number, indexIntervalBytes: number): string[] {
  const seg = new LogSegment({ io: realIO, dir, baseOffset: base, indexIntervalBytes, maxIndexBytes: 0, writable: false });
  try {
    return verifySegmentIndexes(seg).map((m) => `${path.basename(m.file)} entry ${m.entry}: ${m.message}`);
  } finally {
    seg.closeQuietly();
  }
}

/** Rebuilds (or with `verify` compares) the indexes of the segments `bases` of `dir`, in order. */
function processSegments(dir: string, bases: number[], verify: boolean, indexIntervalBytes: number, onBytes: (name: string, bytesDone: number) => void): { outcomes: SegmentOutcome[]; failed: boolean } {
  const outcomes: SegmentOutcome[] = [];
  let failed = false;
  let doneBefore = 0;
  for (const base of bases) {
    const name = segmentFileName(base, '');
    const onProgress = (done: number) => onBytes(name, doneBefore + done);
    const t0 = performance.now();
    const rebuildOpts = { indexIntervalBytes, onProgress };
    let outcome: SegmentOutcome;
    if (verify) {
      const v = verifySegmentIndexFiles(realIO, dir, base, rebuildOpts);
      outcome = outcomeOf(name, v.scan, (performance.now() - t0) / 1000);
      outcome.missing = v.missing.map((m) => path.basename(m));
      outcome.differenceCount = v.differenceCount;
      outcome.differences = v.differences.map((d) => ({ ...d, file: path.basename(d.file) }));
      if (v.missing.length > 0) outcome.verdict = 'missing';
      else if (v.differenceCount === 0) outcome.verdict = 'identical';
      else {
        outcome.problems = classify(dir, base, indexIntervalBytes);
        outcome.verdict = outcome.problems.length === 0 ? 'different-but-valid' : 'invalid';
      }
    } else {
      const r = rebuildSegmentIndexes(realIO, dir, base, rebuildOpts);
      outcome = outcomeOf(name, r.scan, (performance.now() - t0) / 1000);
    }
    doneBefore += outcome.logBytes;
    outcomes.push(outcome);
    if (outcome.invalidTail || outcome.verdict === 'missing' || outcome.verdict === 'invalid') failed = true;
  }
  // Kafka's recovery rewrites .txnindex too (LogSegment.recover): only where its bytes change.
  const txn = new Set(rebuildTxnIndexes(realIO, dir, bases, indexIntervalBytes, verify));
  for (const o of outcomes) if (txn.has(bases[outcomes.indexOf(o)]!)) o.txnIndexRebuilt = true;
  return { outcomes, failed };
}

/**
 * One partition of a log directory: every segment rebuilt (or verified) under the partition's
 * writer lock; invalid data or missing/invalid indexes are a problem. Timings are left out of the
 * NDJSON line so that the output is the same for every --threads.
 */
async function rebuildPartition(t: PartitionTarget, opts: RebuildOpts): Promise<PartitionResult> {
  const { bases } = resolveTargets(t.dir);
  const config = resolveConfig(loadRememberedConfig(realIO, t.dir), configFromOptions(opts));
  const lock = opts.verify ? undefined : DirectoryLock.acquire(t.dir, 'rebuild the indexes of');
  let r: { outcomes: SegmentOutcome[]; failed: boolean };
  try {
    r = processSegments(t.dir, bases, Boolean(opts.verify), config.indexIntervalBytes, () => {});
  } finally {
    lock?.release();
  }
  const segments = r.outcomes.map(({ seconds: _seconds, ...o }) => o);
  const bad = r.outcomes.find((o) => o.invalidTail || o.verdict === 'missing' || o.verdict === 'invalid');
  const verdicts = (v: SegmentOutcome['verdict']) => r.outcomes.filter((o) => o.verdict === v).length;
  return {
    outcome: r.failed ? 'problem' : 'ok',
    fields: { verify: Boolean(opts.verify), segments },
    cells: [segments.length, segments.reduce((n, o) => n + o.logBytes, 0), segments.reduce((n, o) => n + o.offsetEntries, 0), segments.reduce((n, o) => n + o.timeEntries, 0), opts.verify ? `${verdicts('identical')} identical, ${verdicts('different-but-valid')} valid` : 'rebuilt'],
    ...(bad ? { note: `${bad.segment}: ${bad.invalidTail ? `invalid data at byte ${bad.invalidTail.position} (${bad.invalidTail.reason}); run logtool recover` : bad.verdict === 'missing' ? `missing ${bad.missing!.join(', ')}` : 'invalid indexes'}` } : {}),
  };
}

export function rebuildIndexCommand(): Command {
  return addLogDirOptions(addTopicConfigOptions(new Command('rebuild-index')))
    .description("rebuild .index and .timeindex files from the .log by Kafka's recovery rule (or --verify them)")
    .argument('<dir|segment>', 'partition directory, one segment (.log/.index/.timeindex file or base name), or a log directory (every partition, or those selected)')
    .option('--verify', 'compare the existing index files with a rebuild; change nothing')
    .option('--json', 'print one JSON object with a result per segment')
    .option('--no-progress', 'no progress spinner on a terminal')
    .addHelpText(
      'after',
      `
Indexes are written to <name>.index.tmp / <name>.timeindex.tmp, fsynced and renamed into place, so a
crash leaves either the old or the new files. Memory stays bounded whatever the segment size.

Given a log directory, every partition is processed (--threads at a time) and summarised, one NDJSON
line each with --json and a last {"summary":true,…} line.

Exit codes: 0 ok, 3 invalid data in a .log or (with --verify) missing/invalid indexes, 1 failure.

Examples:
  logtool rebuild-index logdata/demo-0
  logtool rebuild-index logdata/demo-0/00000000000000000000.log
  logtool rebuild-index /var/lib/kafka/orders-3 --verify --json`,
    )
    .action(async (arg: string, opts: RebuildOpts) => {
      if (!realIO.stat(arg) && !realIO.stat(`${arg}${LOG_SUFFIX}`)) throw new LogtoolError('not-found', 'no such file or directory', { file: arg });
      if (realIO.stat(arg)?.isDirectory && isLogDirPath(arg)) return runOverLogDir(opts.verify ? 'rebuild-index --verify' : 'rebuild-index', arg, opts, ['segments', 'bytes', 'offset entries', 'time entries', 'indexes'], (t) => rebuildPartition(t, opts));
      rejectSelection(arg, opts);
      const { dir, bases } = resolveTargets(arg);
      const config = resolveConfig(loadRememberedConfig(realIO, dir), configFromOptions(opts));
      // Rewriting indexes under a live writer would race its appends; verifying only reads.
      const lock = opts.verify ? undefined : DirectoryLock.acquire(dir, 'rebuild the indexes of');
      try {
        if (!opts.verify) requireWritableCheckpoints(realIO, path.dirname(path.resolve(dir)));
      } catch (e) {
        lock?.release();
        throw e;
      }
      const out = new Output();
      const c = colours();
      const progress = startProgress(`${opts.verify ? 'verifying' : 'rebuilding'} indexes of ${dir}`, opts.progress !== false);
      const outcomes: SegmentOutcome[] = [];
      const started = performance.now();
      let failed = false;
      try {
        const totalBytes = bases.reduce((n, b) => n + (realIO.stat(path.join(dir, segmentFileName(b, LOG_SUFFIX)))?.size ?? 0), 0);
        let segment = '';
        const r = processSegments(dir, bases, Boolean(opts.verify), config.indexIntervalBytes, (name, bytes) => {
          if (name !== segment) progress.update(`${opts.verify ? 'verifying' : 'rebuilding'} ${(segment = name)}`);
          progress.count(bytes, totalBytes);
        });
        outcomes.push(...r.outcomes);
        failed = r.failed;
      } finally {
        progress.stop();
        lock?.release();
      }
      const seconds = (performance.now() - started) / 1000;
      const bytes = outcomes.reduce((n, o) => n + o.logBytes, 0);
      const mbPerSec = seconds > 0 ? bytes / 1e6 / seconds : 0;
      if (opts.json) {
        await out.json({ dir, verify: Boolean(opts.verify), segments: outcomes, totals: { segments: outcomes.length, bytes, seconds, mbPerSec, ok: !failed } });
      } else {
        for (const o of outcomes) {
          const head = `${o.segment}: ${o.batches} batches, ${formatBytes(o.logBytes)}, ${o.offsetEntries} offset / ${o.timeEntries} time entries`;
          if (!opts.verify) await out.line(`${head} — rebuilt`);
          else if (o.verdict === 'identical') await out.line(`${head} — ${c.green('identical')}`);
          else if (o.verdict === 'missing') await out.line(`${head} — ${c.yellow(`missing ${o.missing!.join(', ')}`)}`);
          else {
            await out.line(`${head} — ${o.verdict === 'invalid' ? c.yellow(`${o.differenceCount} differences, invalid`) : `${o.differenceCount} differences from a rebuild, valid for Kafka's lookups`}`);
            for (const d of o.differences ?? []) await out.line(`    ${d.file}${d.entry !== undefined ? ` entry ${d.entry}` : ''}: ${d.message}`);
            if ((o.differenceCount ?? 0) > (o.differences?.length ?? 0)) await out.line(`    … ${o.differenceCount! - o.differences!.length} more`);
            for (const p of o.problems ?? []) await out.line(`    ${c.yellow('invalid:')} ${p}`);
          }
          if (o.invalidTail) warn(`${path.join(dir, `${o.segment}${LOG_SUFFIX}`)} at byte ${o.invalidTail.position}: ${o.invalidTail.reason}; indexes cover the ${o.validBytes} valid bytes before it — run logtool recover to truncate`);
        }
        await out.line(`${outcomes.length} segment(s), ${formatBytes(bytes)} in ${seconds.toFixed(2)} s (${mbPerSec.toFixed(0)} MB/s)`);
      }
      await out.flush();
      process.exitCode = failed ? 3 : 0;
    });
}
