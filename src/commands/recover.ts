/**
 * `logtool recover <dir>`: runs the loader explicitly (Kafka's LogLoader rules, see loader.ts) and
 * reports what it found and did: segments scanned, batches and bytes validated, indexes rebuilt,
 * bytes truncated and where, segments dropped, temporary files removed, swaps completed.
 *
 * Cut-off bytes and dropped segments go to `<dir>/lost+found/` unless --discard. --dry-run opens
 * every file read-only and reports what would be done. Without --dry-run the log is closed the
 * way a writer closes it (flushed, recovery point checkpointed), so the next open is fast.
 *
 * Exit codes: 0 already consistent, 3 repaired (or would be, with --dry-run), 1 failure, 2 usage.
 */
import path from 'node:path';
import { Command } from 'commander';
import { realIO, LogtoolError, InvalidDirectoryError } from '../api/format.js';
import { Log, type LoadReport } from '../api/log.js';
import { endDanglingTransactions, isLogtoolProducerId } from '../inspect/transactions.js';
import { partitionProducerState, DirectoryLock, requireWritableCheckpoints, requireTopicPartition, resolveConfig, loadRememberedConfig, loadLog, type LoadProgress, type PartitionStateChange } from '../inspect/log.js';
import { Output, colours } from '../render/output.js';
import { formatBytes, startProgress, type Progress } from '../render/progress.js';
import { addTopicConfigOptions, configFromOptions } from './shared.js';
import { addLogDirOptions, isLogDirPath, rejectSelection, runOverLogDir, type LogDirOptions, type PartitionResult, type PartitionTarget } from './logdir-runner.js';

interface RecoverOpts extends LogDirOptions {
  json?: boolean;
  dryRun?: boolean;
  discard?: boolean;
  full?: boolean;
  progress?: boolean;
}

/** Kept here for the commands that import it from recover. */
export { formatBytes };

function progressReporter(progress: Progress): (p: LoadProgress) => void {
  return (p) => {
    progress.update(`validating ${path.basename(p.file)}`);
    progress.count(p.bytesDone, p.bytesTotal);
  };
}

/** Runs the loader without changing anything (the writer lock is still taken: a live log has no stable tail). */
function dryRun(dir: string, opts: RecoverOpts, onProgress: (p: LoadProgress) => void): { report: LoadReport; warnings: string[] } {
  const resolved = path.resolve(dir);
  const st = realIO.stat(resolved);
  if (!st) throw new LogtoolError('not-found', 'no such directory', { file: dir });
  if (!st.isDirectory) throw new LogtoolError('usage', 'not a directory (give a partition directory such as mytopic-0)', { file: dir });
  const tp = requireTopicPartition(resolved);
  const lock = DirectoryLock.acquire(resolved, 'recover');
  const warnings: string[] = [];
  try {
    const config = resolveConfig(loadRememberedConfig(realIO, resolved), configFromOptions(opts));
    const loaded = loadLog({
      io: realIO,
      dir: resolved,
      tp,
      config,
      readOnly: false,
      dryRun: true,
      forceRecoverAll: opts.full,
      discardLost: opts.discard ?? false,
      onWarning: (w) => warnings.push(describeWarning(w)),
      onProgress,
    });
    for (const s of loaded.segments) s.closeQuietly();
    return { report: loaded.report, warnings };
  } finally {
    lock.release();
  }
}

/**
 * A recover that finds nothing to repair changes no byte (issue 9): the loader first runs as a dry
 * run, and only a log that needs repair is opened for writing — that open deletes and restores the
 * clean-shutdown marker and checkpoints the recovery point, which a consistent log must not see.
 */
async function recoverForReal(dir: string, opts: RecoverOpts, onProgress: (p: LoadProgress) => void): Promise<{ report: LoadReport; warnings: string[] }> {
  const planned = dryRun(dir, opts, onProgress);
  if (!planned.report.repaired && !hasDanglingTransaction(dir)) return { report: { ...planned.report, dryRun: false }, warnings: planned.warnings };
  const warnings: string[] = [];
  const log = Log.open(dir, {
    create: false,
    config: configFromOptions(opts),
    discardLost: opts.discard ?? false,
    onWarning: (w) => warnings.push(describeWarning(w)),
    recovery: { forceRecoverAll: opts.full, onProgress },
  });
  // An interrupted `append --transaction` is ended as its coordinator would: an ABORT marker.
  try {
    for (const a of await endDanglingTransactions(log))
      process.stderr.write(`note: ended the interrupted transaction of logtool producer ${a.producerId} (from offset ${a.firstOffset}) with an ABORT marker at offset ${a.markerOffset}\n`);
  } finally {
    // Closing flushes what recovery wrote and checkpoints the recovery point at the log end.
    await log.close();
  }
  return { report: log.loadReport, warnings };
}

/** True when a logtool producer's transaction is open (read-only look; a log needing repair shows what it can). */
function hasDanglingTransaction(dir: string): boolean {
  const log = Log.openStableSync(dir, { onWarning: () => undefined });
  try {
    return partitionProducerState(log).openTransactions().some((t) => isLogtoolProducerId(t.producerId));
  } finally {
    void log.close();
  }
}

/** Errors recover reports as they are (exit 2): they say what is wrong with the command line. */
const passesThrough = (e: LogtoolError): boolean => e.kind === 'usage' || e.kind === 'invalid-state' || e.kind === 'refused' || e instanceof InvalidDirectoryError;

function describeWarning(w: { file: string; position?: number; message: string }): string {
  return `${w.file}${w.position !== undefined ? ` at byte ${w.position}` : ''}: ${w.message}`;
}

/** Leader epochs truncated and producer snapshots removed when a command moved the log's ends. */
export function renderPartitionStateChange(p: PartitionStateChange | undefined, dryRun: boolean, rel: (f: string) => string): string[] {
  if (!p) return [];
  const lines: string[] = [];
  const epochs = (es: { epoch: number; startOffset: number }[]) => (es.length ? es.map((e) => `${e.epoch}@${e.startOffset}`).join(' ') : 'none');
  if (p.leaderEpochs) lines.push(`  ${dryRun ? 'would truncate' : 'truncated'}  ${rel(p.leaderEpochs.file)}: epochs ${epochs(p.leaderEpochs.before)} → ${epochs(p.leaderEpochs.after)}`);
  for (const f of p.snapshotsRemoved) lines.push(`  ${dryRun ? 'would remove' : 'removed'}  ${rel(f)} (producer snapshot beyond the log's ends)`);
  if (p.problem) lines.push(`  ${colours().yellow('note')}  ${p.problem}`);
  return lines;
}

/** The human report: one line per fact, file names relative to the partition directory. */
export function renderRecoverReport(r: LoadReport): string[] {
  const c = colours();
  const rel = (f: string) => path.relative(r.dir, f) || f;
  const would = (done: string, planned: string) => (r.dryRun ? planned : done);
  const lines: string[] = [];
  const state = r.cleanShutdown
    ? 'clean shutdown: sealed segments trusted, active segment tail checked'
    : r.markerFound
      ? (r.markerNote ?? 'clean-shutdown marker ignored')
      : `no clean-shutdown marker: recovering from the recovery point ${r.recoveryPoint}`;
  lines.push(`${r.dryRun ? 'Dry run of recovery for' : 'Recovered'} ${r.dir}`);
  lines.push(`  ${state}`);
  lines.push(`  segments scanned      ${r.segmentsScanned} of ${r.segments + r.segmentsDropped.filter((d) => d.file.endsWith('.log')).length}`);
  lines.push(`  batches validated     ${r.batchesValidated} (${formatBytes(r.bytesValidated)})`);
  lines.push(`  indexes rebuilt       ${r.indexesRebuilt.length}${r.indexProblems.length ? ` (${r.indexProblems.length} missing or corrupt)` : ''}`);
  for (const p of r.indexProblems) lines.push(`    ${rel(p.file)}${p.position !== undefined ? ` at byte ${p.position}` : ''}: ${p.reason}`);
  for (const t of r.truncated) {
    lines.push(`  ${c.yellow(would('truncated', 'would truncate'))}  ${rel(t.file)} at byte ${t.position}: ${t.bytes} bytes cut (${t.reason})`);
    lines.push(`    ${t.savedTo ? `${would('saved to', 'would be saved to')} ${rel(t.savedTo)}` : would('discarded', 'would be discarded')}`);
  }
  // One line per dropped segment (its .log, .index, .timeindex …), then where each file went.
  const bySegment = new Map<string, typeof r.segmentsDropped>();
  for (const d of r.segmentsDropped) {
    const key = path.basename(d.file).replace(/\.[a-z]+$/, '');
    bySegment.set(key, [...(bySegment.get(key) ?? []), d]);
  }
  for (const [segment, files] of bySegment) {
    const log = files.find((f) => f.file.endsWith('.log'));
    lines.push(`  ${c.yellow(would('dropped', 'would drop'))}  segment ${segment}${log ? ` (${log.bytes} bytes of data)` : ''}: ${files.map((f) => path.extname(f.file)).join(', ')}`);
    const saved = files.filter((f) => f.savedTo);
    if (saved.length === 0) lines.push(`    ${would('deleted', 'would be deleted')}`);
    else lines.push(`    ${would('moved to', 'would be moved to')} ${rel(path.dirname(saved[0]!.savedTo!))}/ (${saved.map((f) => path.basename(f.savedTo!)).join(', ')})`);
  }
  for (const f of r.tempFilesRemoved) lines.push(`  ${would('removed', 'would remove')}       ${f}`);
  for (const s of r.swapsCompleted) lines.push(`  ${would('swap completed', 'would complete swap')}  ${s}`);
  for (const p of r.checkpointProblems) lines.push(`  ${c.yellow('checkpoint ignored')}  ${p.file}: ${p.reason}`);
  lines.push(...renderPartitionStateChange(r.partitionState, r.dryRun, rel));
  lines.push(`  log start offset ${r.logStartOffset}, log end offset ${r.logEndOffset}, ${r.segments} segment(s)`);
  const notChecked = r.segmentsNotChecked;
  if (notChecked.length > 0) {
    const shown = notChecked.slice(0, 5).map(rel).join(', ');
    lines.push(`  not checked           ${notChecked.length} segment(s) trusted${r.cleanShutdown ? ' after a clean shutdown' : ' below the recovery point'}: ${shown}${notChecked.length > 5 ? ` and ${notChecked.length - 5} more` : ''}`);
  }
  if (!r.repaired && notChecked.length === 0) lines.push(c.green('The log was already consistent.'));
  else if (!r.repaired) lines.push(c.yellow(`Nothing to repair in the segments checked; ${notChecked.length} segment(s) were not checked: run with --full to validate them.`));
  else if (r.dryRun) lines.push(c.yellow(`The log needs repair: run without --dry-run${r.truncated.length + r.segmentsDropped.length > 0 ? ' (cut data goes to lost+found/ unless --discard)' : ''}.`));
  else lines.push(c.yellow(`The log was repaired${r.bytesTruncated + r.segmentsDropped.length > 0 ? `: ${formatBytes(r.bytesTruncated + r.segmentsDropped.reduce((n, d) => n + d.bytes, 0))} cut off` : ''}.`));
  return lines;
}

/** `consistent` only when every segment was checked; `not-fully-checked` points to --full. */
function recoverStatus(r: LoadReport): string {
  if (r.repaired) return r.dryRun ? 'needs-repair' : 'repaired';
  return r.segmentsNotChecked.length > 0 ? 'not-fully-checked' : 'consistent';
}

/** One partition of a log directory: its recover report as the NDJSON line; repaired (or would be) is a problem. */
async function recoverPartition(t: PartitionTarget, opts: RecoverOpts): Promise<PartitionResult> {
  const { report, warnings } = opts.dryRun ? dryRun(t.dir, opts, () => {}) : await recoverForReal(t.dir, opts, () => {});
  const status = recoverStatus(report);
  return {
    outcome: report.repaired ? 'problem' : 'ok',
    fields: { ...report, status, warnings },
    cells: [report.segmentsScanned, report.batchesValidated, report.bytesValidated, report.bytesTruncated, report.segmentsDropped.length, status],
    ...(report.repaired ? { note: report.dryRun ? 'needs repair' : 'repaired' } : {}),
  };
}

export function recoverCommand(): Command {
  return addLogDirOptions(addTopicConfigOptions(new Command('recover')))
    .description("run Kafka's log recovery on a partition directory and report what was repaired")
    .argument('<dir>', 'partition directory, or a log directory (every partition, or those selected)')
    .option('--json', 'print the report as one JSON object')
    .option('--dry-run', 'report what would be done; change nothing')
    .option('--discard', 'delete cut-off bytes and dropped segments instead of moving them to lost+found/')
    .option('--full', 'validate every segment, even after a clean shutdown or below the recovery point')
    .option('--no-progress', 'no progress spinner on a terminal')
    .addHelpText(
      'after',
      `
Without a clean-shutdown marker every segment from the recovery point on is validated batch by batch
(size, magic, CRC-32C, offsets) and its indexes rebuilt; the first invalid batch truncates its segment
and later segments are dropped, as Kafka does. What is cut off is kept in <dir>/lost+found/.

Segments trusted without validation (after a clean shutdown, or below the recovery point) are listed
as not checked; --full validates them too.

Given a log directory, every partition is recovered (--threads at a time) and summarised, one NDJSON
line each with --json and a last {"summary":true,…} line.

Exit codes: 0 nothing to repair (JSON status "consistent", or "not-fully-checked" when segments were
trusted), 3 repaired (or, with --dry-run, would be), 1 failure (for a log directory: of any partition).

Examples:
  logtool recover logdata/demo-0
  logtool recover logdata/demo-0 --dry-run
  logtool recover /var/lib/kafka/orders-3 --full --json | jq .truncated
  logtool recover logdata/demo-0 --discard`,
    )
    .action(async (dir: string, opts: RecoverOpts) => {
      if (isLogDirPath(dir)) return runOverLogDir(opts.dryRun ? 'recover --dry-run' : 'recover', dir, opts, ['scanned', 'batches', 'bytes', 'cut bytes', 'dropped', 'status'], (t) => recoverPartition(t, opts), opts.dryRun ? 'read' : 'write');
      rejectSelection(dir, opts);
      const progress = startProgress(`recovering ${dir}`, opts.progress !== false);
      const onProgress = progressReporter(progress);
      let result: { report: LoadReport; warnings: string[] };
      // A repair checkpoints the recovery point: a malformed checkpoint stops it before anything
      // changes, with the checkpoint's own error (exit 3), like every writable command.
      if (!opts.dryRun) requireWritableCheckpoints(realIO, path.dirname(path.resolve(dir)));
      try {
        result = opts.dryRun ? dryRun(dir, opts, onProgress) : await recoverForReal(dir, opts, onProgress);
      } catch (e) {
        progress.stop();
        // Any failure to recover is operational (exit 1); only a bad command line stays a usage error:
        // the command's own, a directory the engine cannot use, a refusal of the log's state.
        if (e instanceof LogtoolError && !passesThrough(e)) throw new LogtoolError('io', `recovery failed: ${e.message}`, { file: e.file, position: e.position }, { cause: e });
        throw e;
      }
      progress.stop();
      const { report, warnings } = result;
      const out = new Output();
      if (opts.json) {
        await out.json({ ...report, status: recoverStatus(report), warnings });
      } else {
        for (const l of renderRecoverReport(report)) await out.line(l);
      }
      await out.flush();
      process.exitCode = report.repaired ? 3 : 0;
    });
}
