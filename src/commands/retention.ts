/**
 * `logtool retention <dir>`: applies Kafka's retention now (engine/cleaner/retention.ts): segments
 * wholly below the log start offset, then by retention.bytes (oldest first), then by retention.ms
 * against each segment's largest record timestamp (file mtime only when a segment has none).
 * Deleted segments are renamed `.deleted` and removed at once (Kafka waits file.delete.delay.ms);
 * the log always keeps a segment. Reports what was (or, with --dry-run, would be) deleted.
 *
 * Exit codes: 0 done (also when nothing was due), 1 failure, 2 usage.
 */
import path from 'node:path';
import { Command } from 'commander';
import { Log, type LogConfig } from '../api/log.js';
import { type RetentionReport, parseTopicPartition, cleanupPolicy } from '../inspect/log.js';
import { closeAfter } from './close-after.js';
import { Output, colours, warn } from '../render/output.js';
import { startProgress } from '../render/progress.js';
import { openLog, parseInteger, parseTime, type WarningCounter } from './shared.js';
import { formatBytes, renderPartitionStateChange } from './recover.js';
import { formatTimestamp } from '../render/timestamp.js';
import { addLogDirOptions, isLogDirPath, rejectSelection, runOverLogDir, type LogDirOptions, type PartitionResult, type PartitionTarget } from './logdir-runner.js';
import { addConfigOption, partitionConfig, type ConfigSource } from './topic-configs.js';

interface RetentionOpts extends LogDirOptions {
  config?: Partial<LogConfig>;
  retentionMs?: number;
  retentionBytes?: number;
  dryRun?: boolean;
  json?: boolean;
  now?: number;
  keepRemoved?: string;
  progress?: boolean;
}

type RetentionOutcome = { report: RetentionReport; source: ConfigSource; warnings: number } | { skipped: string };

/**
 * Retention on one partition with its topic configs (topic-configs.ts): in a broker's log directory
 * a partition whose config is unknown is skipped, and nothing is remembered in logtool.properties
 * there. `--retention-ms/--retention-bytes` count as explicit configs but are never remembered.
 */
async function retentionOn(dir: string, topic: string, opts: RetentionOpts): Promise<RetentionOutcome> {
  const pc = partitionConfig(dir, topic, opts.config ?? {}, { retentionMs: opts.retentionMs, retentionBytes: opts.retentionBytes });
  if ('skip' in pc) return { skipped: pc.skip };
  const config = pc.broker ? pc.config : (opts.config ?? {});
  const counter: WarningCounter = { count: 0 };
  const log = opts.dryRun ? await Log.openStable(dir, { config }) : openLog(dir, { create: false, config, rememberConfig: !pc.broker }, counter);
  const report = await closeAfter(log, () => log.applyRetention({ retentionMs: opts.retentionMs, retentionBytes: opts.retentionBytes, nowMs: opts.now, dryRun: opts.dryRun, keepRemovedDir: opts.keepRemoved, deleteDelayMs: 0 }));
  return { report, source: pc.source, warnings: counter.count };
}

async function retentionPartition(t: PartitionTarget, opts: RetentionOpts): Promise<PartitionResult> {
  const r = await retentionOn(t.dir, t.topic, opts);
  if ('skipped' in r) return { outcome: 'skipped', fields: { skipped: true }, cells: [], note: r.skipped };
  const { report } = r;
  return {
    outcome: r.warnings > 0 ? 'problem' : 'ok',
    fields: { ...report, configSource: r.source },
    cells: [r.source, report.cleanupPolicy, `${report.segmentsBefore} → ${report.segmentsAfter}`, report.deleted.length, report.bytesDeleted, `${report.logStartOffsetBefore} → ${report.logStartOffsetAfter}`],
    ...(r.warnings > 0 ? { note: 'warnings when opened (see stderr)' } : {}),
  };
}

export function retentionCommand(): Command {
  return addConfigOption(addLogDirOptions(new Command('retention')))
    .description("apply Kafka's retention to a partition directory now: delete segments past retention.ms / retention.bytes")
    .argument('<dir>', 'partition directory named <topic>-<partition>, or a log directory (every partition, or those selected)')
    .option('--retention-ms <ms>', 'delete segments whose newest record is older than this (default: the log\'s retention.ms; -1 = off); not remembered', parseInteger('--retention-ms', -1))
    .option('--retention-bytes <n>', 'delete the oldest segments while the log is larger than this (default: the log\'s retention.bytes; -1 = off); not remembered', parseInteger('--retention-bytes', -1))
    .option('--dry-run', 'report what would be deleted; change nothing')
    .option('--json', 'print the report as one JSON object')
    .option('--now <time>', 'evaluate retention.ms as of this time (epoch ms or ISO-8601; default now)', parseTime('--now'))
    .option('--keep-removed <dir>', 'keep every deleted segment file under <dir>/<partition>/<time>/ instead of deleting it')
    .option('--no-progress', 'no progress spinner on a terminal')
    .addHelpText(
      'after',
      `
Kafka's order: segments wholly below the log start offset (see delete-records) go first, then, if
cleanup.policy contains delete, the oldest segments while the log exceeds retention.bytes, then
segments whose largest record timestamp is more than retention.ms old. Only a prefix of the log is
ever deleted, and a log whose every segment goes gets a new empty segment at its end offset first.

In a broker's log directory (it holds meta.properties) the topic's configs are the broker's, not
logtool's defaults: a partition uses --config key=value (or --retention-ms/--retention-bytes), its
remembered logtool.properties, or Kafka's built-in configs of __consumer_offsets and
__transaction_state (cleanup.policy=compact); any other partition is skipped with a notice.

Examples:
  logtool retention logdata/events-0 --dry-run
  logtool retention logdata/events-0 --retention-ms 86400000 --json | jq '.deleted[].file'
  logtool retention logdata/events-0 --retention-bytes 1073741824 --keep-removed /tmp/old-segments
  logtool retention logdata/events-0 --retention-ms 3600000 --now 2026-01-01T00:00:00Z
  logtool retention /var/lib/kafka/data --topic orders --config retention.ms=604800000 --dry-run`,
    )
    .action(async (dir: string, opts: RetentionOpts) => {
      if (isLogDirPath(dir)) return runOverLogDir(opts.dryRun ? 'retention --dry-run' : 'retention', dir, opts, ['config', 'cleanup.policy', 'segments', 'deleted', 'bytes deleted', 'log start'], (t) => retentionPartition(t, opts), opts.dryRun ? 'read' : 'write');
      rejectSelection(dir, opts);
      const out = new Output();
      const progress = startProgress(`applying retention to ${dir}`, opts.progress !== false && !opts.json);
      let r: RetentionOutcome;
      try {
        r = await retentionOn(dir, parseTopicPartition(dir)?.topic ?? '', opts);
      } finally {
        progress.stop();
      }
      if ('skipped' in r) {
        warn(`${dir}: ${r.skipped}`);
        if (opts.json) await out.json({ dir, skipped: true, notice: r.skipped });
      } else if (opts.json) await out.json(r.report);
      else for (const l of renderRetentionReport(r.report, 'retention')) await out.line(l);
      await out.flush();
      if (!('skipped' in r) && r.warnings > 0) process.exitCode = 3;
    });
}

export function renderRetentionReport(r: RetentionReport, what: 'retention' | 'delete-records'): string[] {
  const c = colours();
  const rel = (f: string) => (f.startsWith(r.dir) ? path.relative(r.dir, f) : f);
  const lines: string[] = [];
  lines.push(`${r.dryRun ? `Dry run of ${what} for` : what === 'retention' ? 'Applied retention to' : 'Deleted records of'} ${r.dir}`);
  if (what === 'retention') {
    const ms = r.retentionMs < 0 ? 'off' : `${r.retentionMs} ms`;
    const bytes = r.retentionBytes < 0 ? 'off' : formatBytes(r.retentionBytes);
    const policy = cleanupPolicy(r.cleanupPolicy).delete ? '' : ' (cleanup.policy has no "delete": only the log-start-offset rule applies)';
    lines.push(`  cleanup.policy ${r.cleanupPolicy}, retention.ms ${ms}, retention.bytes ${bytes}${policy}; evaluated at ${new Date(r.nowMs).toISOString()}`);
  }
  if (r.deleted.length === 0) lines.push('  no segment is due for deletion');
  for (const d of r.deleted) {
    const why =
      d.reason === 'retention.ms'
        ? `largest timestamp ${formatTimestamp(d.largestTimestamp)}${d.timestampSource === 'mtime' ? ' (file mtime: no record timestamps)' : ''} older than retention.ms`
        : d.reason === 'retention.bytes'
          ? 'log larger than retention.bytes'
          : `wholly below the log start offset ${r.logStartOffsetAfter}`;
    lines.push(`  ${r.dryRun ? c.yellow('would delete') : c.yellow('deleted')} ${rel(d.file)} (offsets ${d.baseOffset}..${d.upperBound - 1}, ${formatBytes(d.sizeBytes)}): ${why}`);
    for (const f of d.files) if (f.keptAt) lines.push(`    ${rel(f.file)} kept at ${f.keptAt}`);
  }
  lines.push(...renderPartitionStateChange(r.partitionState, r.dryRun, rel));
  if (r.rolled) lines.push(`  every segment ${r.dryRun ? 'would go' : 'went'}: an empty segment ${r.dryRun ? 'would be' : 'was'} rolled at offset ${r.logEndOffset} first`);
  lines.push(`  ${formatBytes(r.bytesDeleted)} in ${r.deleted.length} segment(s); segments ${r.segmentsBefore} → ${r.segmentsAfter}; log start offset ${r.logStartOffsetBefore} → ${r.logStartOffsetAfter}`);
  if (r.dryRun) lines.push(c.yellow('Dry run: nothing was changed.'));
  return lines;
}
