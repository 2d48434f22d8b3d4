/**
 * `logtool compact <dir>`: Kafka's log cleaner on one partition directory (engine/cleaner/).
 * Keeps the latest record per key, never changes offsets, removes tombstones delete.retention.ms
 * after their first cleaning, and swaps the cleaned segments in by Kafka's crash-safe protocol.
 * Reports what was (or, with --dry-run, would be) removed: records, bytes, segments and files.
 *
 * With --if-needed it first applies Kafka's cleaner schedule (min.cleanable.dirty.ratio,
 * max.compaction.lag.ms; engine/cleaner/schedule.ts) and compacts only when that asks for it.
 *
 * Exit codes: 0 done (or nothing to do, or not needed with --if-needed), 3 the log cannot be
 * compacted as it is (records without a key, corrupt batches, codecs or formats not supported),
 * 1 failure, 2 usage.
 */
import path from 'node:path';
import { Command } from 'commander';
import { Log, type LogConfig } from '../api/log.js';
import { LogtoolError } from '../api/format.js';
import { withFlagNames } from './flag-errors.js';
import { type CleanProgress, type CleanReport, KeylessRecordsError, DEFAULT_CLEANER_MEMORY_BYTES } from '../inspect/cleaner.js';
import { type CompactionSchedule, cleanupPolicy, parseTopicPartition } from '../inspect/log.js';
import { Output, colours } from '../render/output.js';
import { startProgress } from '../render/progress.js';
import { addTopicConfigOptions, configFromOptions, openLog, parseInteger, parseTime, type WarningCounter } from './shared.js';
import { formatBytes } from './recover.js';
import { closeAfter } from './close-after.js';
import { warn } from '../render/output.js';
import { addLogDirOptions, isLogDirPath, rejectSelection, runOverLogDir, type LogDirOptions, type PartitionResult, type PartitionTarget } from './logdir-runner.js';
import { addConfigOption, effectiveConfig, partitionConfig, type ConfigSource } from './topic-configs.js';

interface CompactOpts extends LogDirOptions {
  config?: Partial<LogConfig>;
  dryRun?: boolean;
  json?: boolean;
  fromStart?: boolean;
  maxMemory: number;
  offsetMapBytes?: number;
  now?: number;
  keepRemoved?: string;
  progress?: boolean;
  ifNeeded?: boolean;
  [k: string]: unknown;
}

export function compactCommand(): Command {
  const cmd = new Command('compact')
    .description("compact a partition directory by Kafka's cleaner rules: keep the latest record per key")
    .argument('<dir>', 'partition directory named <topic>-<partition>, or a log directory (every partition, or those selected)')
    .option('--dry-run', 'report how many records and bytes would be removed; change nothing')
    .option('--json', 'print the report as one JSON object')
    .option('--from-start', 'ignore cleaner-offset-checkpoint: treat the whole log as dirty (re-clean from the log start offset)')
    .option('--max-memory <bytes>', "bound on the cleaner's memory: offset map plus I/O buffers (as Kafka's dedupe buffer)", parseInteger('--max-memory', 1), DEFAULT_CLEANER_MEMORY_BYTES)
    .option('--offset-map-bytes <bytes>', 'size the key→offset map explicitly (24 bytes per key slot); a small map means several passes', parseInteger('--offset-map-bytes', 48))
    .option('--now <time>', 'clean as of this time: delete horizons, min.compaction.lag.ms (epoch ms or ISO-8601; default now)', parseTime('--now'))
    .option('--keep-removed <dir>', 'keep every replaced segment file under <dir>/<partition>/<time>/ instead of deleting it')
    .option('--if-needed', "compact only when Kafka's cleaner would: dirty ratio above min.cleanable.dirty.ratio, or a dirty record older than max.compaction.lag.ms")
    .option('--no-progress', 'no progress spinner on a terminal');
  addTopicConfigOptions(cmd);
  addConfigOption(addLogDirOptions(cmd));
  cmd.addHelpText(
    'after',
    `
What stays: for each key the record with the highest offset; tombstones (null value) until
delete.retention.ms after the cleaning that first kept them; the active segment, segments younger
than min.compaction.lag.ms and open transactions are not cleaned. Offsets never change. Cleaned
segments are merged up to segment.bytes. Progress is recorded in cleaner-offset-checkpoint, so the
next run only maps what was appended since (use --from-start to re-clean everything).

Records without a key cannot be compacted: the command lists them and stops without changing
anything. Replaced segment files are deleted unless --keep-removed is given; the report lists them.

Given a log directory, the partitions whose cleanup.policy includes compact are compacted, the
others skipped with a notice, as Kafka's cleaner picks them. In a broker's log directory (it holds
meta.properties) a partition's configs are --config key=value and the config flags, its remembered
logtool.properties, or Kafka's built-in ones for __consumer_offsets and __transaction_state
(cleanup.policy=compact); a partition whose config is unknown is skipped, never defaulted.

Examples:
  logtool compact logdata/users-0 --dry-run
  logtool compact logdata/users-0 --delete-retention-ms 3600000 --json | jq .recordsRemoved
  logtool compact /var/lib/kafka/__consumer_offsets-12 --keep-removed /tmp/removed
  logtool compact logdata/users-0 --max-memory 33554432 --from-start
  logtool compact logdata/users-0 --if-needed --min-cleanable-dirty-ratio 0.3 --json | jq .needed
  logtool compact /var/lib/kafka/data --topic __consumer_offsets --if-needed --dry-run`,
  );
  cmd.action(async (dir: string, opts: CompactOpts) => {
    if (isLogDirPath(dir)) return runOverLogDir(opts.dryRun ? 'compact --dry-run' : 'compact', dir, opts, ['config', 'cleanup.policy', 'records removed', 'bytes removed', 'segments'], (t) => compactPartition(t, opts), opts.dryRun ? 'read' : 'write');
    rejectSelection(dir, opts);
    const out = new Output();
    const progress = startProgress(`compacting ${dir}`, opts.progress !== false && !opts.json);
    let r: CompactOutcome;
    try {
      r = await compactOn(dir, parseTopicPartition(dir)?.topic ?? '', opts, (p) => {
        progress.update(describeProgress(dir, p));
        progress.count(p.bytesDone, p.bytesTotal);
      });
    } catch (caught) {
      progress.stop();
      const e = withCleanerFlags(caught);
      if (opts.json && e instanceof LogtoolError) {
        await out.json({ ok: false, error: { kind: e.kind, message: e.message, file: e.file, position: e.position }, ...(e instanceof KeylessRecordsError ? { keylessRecords: e.count, firstOffsets: e.firstOffsets, files: e.files } : {}) });
        await out.flush();
      }
      throw e;
    }
    progress.stop();
    if ('skipped' in r) {
      warn(`${dir}: ${r.skipped}`);
      if (opts.json) await out.json({ ok: true, dir, skipped: true, notice: r.skipped });
      await out.flush();
      return;
    }
    const { report, schedule } = r;
    const decision = decisionOf(schedule, report);
    if (opts.json) await out.json({ ok: true, ...decision, ...(report ?? { dir: r.dir, dryRun: Boolean(opts.dryRun) }) });
    else {
      if (schedule) await out.line(`${schedule.needed ? 'Compaction needed' : 'Compaction not needed'} for ${r.dir}: ${schedule.reason}`);
      if (report) for (const l of renderCompactReport(report)) await out.line(l);
    }
    await out.flush();
    if (r.warnings > 0) process.exitCode = 3;
  });
  return cmd;
}

/** What --if-needed decided, for the JSON report. */
const decisionOf = (schedule: CompactionSchedule | undefined, report: CleanReport | undefined) =>
  schedule && { needed: schedule.needed, dirtyRatio: schedule.dirtyRatio, reason: schedule.reason, compacted: Boolean(report), schedule };

type CompactOutcome = { dir: string; report?: CleanReport; schedule?: CompactionSchedule; source: ConfigSource; cleanupPolicy: string; warnings: number } | { skipped: string };

/**
 * Compaction of one partition with its topic configs (topic-configs.ts). Over a log directory
 * (`onlyCompacted`) a partition whose cleanup.policy has no compact is skipped, as Kafka's cleaner
 * skips it; a single partition is compacted because it was asked for. Nothing is remembered in a
 * broker's partitions.
 */
async function compactOn(dir: string, topic: string, opts: CompactOpts, onProgress: (p: CleanProgress) => void, onlyCompacted = false): Promise<CompactOutcome> {
  const pc = partitionConfig(dir, topic, configFromOptions(opts), opts.config ?? {});
  if ('skip' in pc) return { skipped: pc.skip };
  const config = pc.config;
  // Decided before opening: a writable open and close would rewrite the active segment's indexes.
  const policy = effectiveConfig(dir, pc).cleanupPolicy;
  if (onlyCompacted && !cleanupPolicy(policy).compact) {
    return { skipped: `cleanup.policy ${policy}: Kafka's cleaner does not compact it (give --cleanup-policy compact to compact anyway)` };
  }
  const counter: WarningCounter = { count: 0 };
  const log = opts.dryRun ? await Log.openStable(dir, { config }) : openLog(dir, { config, create: false, rememberConfig: !pc.broker }, counter);
  let report: CleanReport | undefined;
  let schedule: CompactionSchedule | undefined;
  await closeAfter(log, async () => {
    if (opts.ifNeeded) schedule = log.compactionSchedule({ nowMs: opts.now, fromStart: opts.fromStart });
    if (!schedule || schedule.needed) report = await log.compact({
      dryRun: opts.dryRun,
      fromStart: opts.fromStart,
      maxMemoryBytes: opts.maxMemory,
      offsetMapBytes: opts.offsetMapBytes,
      nowMs: opts.now,
      keepRemovedDir: opts.keepRemoved,
      deleteDelayMs: 0, // from the CLI the replaced files go at once (Kafka: file.delete.delay.ms)
      onProgress,
    });
  });
  return { dir: log.dir, report, schedule, source: pc.source, cleanupPolicy: log.config.cleanupPolicy, warnings: counter.count };
}

async function compactPartition(t: PartitionTarget, opts: CompactOpts): Promise<PartitionResult> {
  let r: CompactOutcome;
  try {
    r = await compactOn(t.dir, t.topic, opts, () => {}, true);
  } catch (e) {
    throw withCleanerFlags(e);
  }
  if ('skipped' in r) return { outcome: 'skipped', fields: { skipped: true }, cells: [], note: r.skipped };
  const { report, schedule } = r;
  const decision = decisionOf(schedule, report);
  return {
    outcome: r.warnings > 0 ? 'problem' : 'ok',
    fields: { ...decision, ...(report ?? { dryRun: Boolean(opts.dryRun) }), configSource: r.source },
    cells: [r.source, r.cleanupPolicy, report?.recordsRemoved ?? 0, report?.bytesRemoved ?? 0, report ? `${report.segmentsBefore} → ${report.segmentsAfter}` : (schedule?.reason ?? '-')],
    ...(r.warnings > 0 ? { note: 'warnings when opened (see stderr)' } : {}),
  };
}

/** The cleaner options the command takes from flags. */
const FLAG_OF_OPTION: Readonly<Record<string, string>> = { maxMemoryBytes: '--max-memory', offsetMapBytes: '--offset-map-bytes' };

/** An engine error about cleaner options, as a usage error naming the flags the user gave. */
const withCleanerFlags = (e: unknown): unknown => withFlagNames(e, (o) => FLAG_OF_OPTION[o]);

function describeProgress(dir: string, p: CleanProgress): string {
  const what = p.phase === 'scan' ? 'checking' : p.phase === 'map' ? 'mapping keys of' : 'cleaning';
  return `${what} ${dir}${p.pass > 0 ? ` (pass ${p.pass})` : ''}`;
}

export function renderCompactReport(r: CleanReport): string[] {
  const c = colours();
  const rel = (f: string) => (path.isAbsolute(f) && f.startsWith(r.dir) ? path.relative(r.dir, f) : f);
  const lines: string[] = [];
  const verb = r.dryRun ? 'Dry run of compaction for' : 'Compacted';
  lines.push(`${verb} ${r.dir}`);
  if (!cleanupPolicy(r.cleanupPolicy).compact) {
    lines.push(c.yellow(`  note: cleanup.policy is "${r.cleanupPolicy}"; Kafka would not compact this log by itself (compacting because you asked)`));
  }
  if (r.nothingToClean) {
    lines.push(`  ${r.nothingToClean}`);
    lines.push(c.green('Nothing to do.'));
    return lines;
  }
  const would = (done: string, planned: string) => (r.dryRun ? planned : done);
  lines.push(`  cleaned range         offsets ${r.firstDirtyOffset} (first dirty) up to ${r.firstUncleanableOffset} (first uncleanable), ${r.passes} pass(es)`);
  lines.push(`  records ${would('removed', 'to remove')}       ${r.recordsRemoved} (${r.recordsRetained} kept in the cleaned range${r.tombstonesRemoved ? `, ${r.tombstonesRemoved} tombstone(s) past their delete horizon` : ''})`);
  lines.push(`  bytes ${would('removed', 'to remove')}         ${formatBytes(r.bytesRemoved)} (${formatBytes(r.bytesBefore)} → ${formatBytes(r.bytesAfter)})`);
  lines.push(`  batches               ${r.batchesCopied} copied as they were, ${r.batchesRewritten} rewritten, ${r.batchesEmptied} kept empty, ${r.batchesRemoved} removed`);
  if (r.deleteHorizonsSet) lines.push(`  delete horizons set   ${r.deleteHorizonsSet} batch(es) with tombstones or markers (removable after ${new Date(r.nowMs).toISOString()} + delete.retention.ms)`);
  lines.push(`  segments              ${r.segmentsBefore} → ${r.segmentsAfter}`);
  for (const g of r.groups) {
    if (g.unchanged) continue;
    const from = g.replaced.map((b) => String(b)).join(', ');
    lines.push(`    ${would('replaced', 'would replace')} segment(s) ${from} (${formatBytes(g.bytesBefore)}) → ${rel(g.file)} (${formatBytes(g.bytesAfter)})`);
  }
  if (!r.dryRun) {
    const kept = r.removedFiles.filter((f) => f.keptAt);
    lines.push(`  files removed         ${r.removedFiles.length}${kept.length ? `, copies kept under ${path.dirname(kept[0]!.keptAt!)}` : ' (deleted)'}`);
    for (const f of r.removedFiles) lines.push(`    ${rel(f.file)}${f.keptAt ? ` → ${f.keptAt}` : ''}`);
    lines.push(`  cleaner-offset-checkpoint ${r.cleanedThrough}`);
  }
  lines.push(`  offset map            ${r.offsetMap.slots} slots (${formatBytes(r.offsetMap.memoryBytes)}), peak ${r.offsetMap.peakEntries} keys; memory bound ${formatBytes(r.memory.boundBytes)}`);
  lines.push(r.dryRun ? c.yellow('Dry run: nothing was changed.') : c.green(`Done in ${r.durationMs} ms.`));
  return lines;
}
