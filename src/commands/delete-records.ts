/**
 * `logtool delete-records <dir> --before-offset N`: what `kafka-delete-records` does to a partition.
 * The log start offset advances to N (never backwards, at most the log end offset) and is persisted
 * in `<log dir>/log-start-offset-checkpoint`; segments wholly below it are deleted at once (renamed
 * `.deleted`, then removed). Reads below the new log start offset fail with an error naming it.
 *
 * Exit codes: 0 done, 1 failure (N beyond the log end offset), 2 usage.
 */
import { Command } from 'commander';
import { Log } from '../api/log.js';
import { LogtoolError } from '../api/format.js';
import type { RetentionReport } from '../inspect/log.js';
import { closeAfter } from './close-after.js';
import { Output } from '../render/output.js';
import { openLog, parseInteger, type WarningCounter } from './shared.js';
import { renderRetentionReport } from './retention.js';
import { isLogDirPath, runOverLogDir } from './logdir-runner.js';

interface DeleteRecordsOpts {
  topic?: string;
  partition?: number;
  beforeOffset?: number;
  dryRun?: boolean;
  json?: boolean;
  keepRemoved?: string;
}

export function deleteRecordsCommand(): Command {
  return new Command('delete-records')
    .description('advance the log start offset (as kafka-delete-records does) and delete the segments below it')
    .argument('<dir>', 'partition directory named <topic>-<partition>, or a log directory with --topic and --partition')
    .option('--topic <name>', 'log directory: the topic of the one partition to change')
    .option('--partition <n>', 'log directory: the number of the one partition to change', parseInteger('--partition', 0))
    .option('--before-offset <n>', 'records before this offset are deleted: it becomes the log start offset', parseInteger('--before-offset', 0))
    .option('--dry-run', 'report what would change; change nothing')
    .option('--json', 'print the report as one JSON object')
    .option('--keep-removed <dir>', 'keep every deleted segment file under <dir>/<partition>/<time>/ instead of deleting it')
    .addHelpText(
      'after',
      `
Records in a segment that still holds offsets at or above the new log start offset stay in the file
but can no longer be read. The new log start offset is what kafka-delete-records reports as the
partition's low watermark; Kafka (and logtool) read it from log-start-offset-checkpoint.

Examples:
  logtool delete-records logdata/events-0 --before-offset 1500
  logtool delete-records logdata/events-0 --before-offset 1500 --dry-run --json`,
    )
    .action(async (dir: string, opts: DeleteRecordsOpts) => {
      if (opts.beforeOffset === undefined) throw new LogtoolError('usage', '--before-offset is required');
      if (isLogDirPath(dir)) {
        // Deleting records is never done to a whole directory at once: one partition, named.
        if (opts.topic === undefined || opts.partition === undefined) throw new LogtoolError('usage', 'in a log directory, delete-records needs --topic and --partition (it changes one partition)', { file: dir });
        return runOverLogDir(opts.dryRun ? 'delete-records --dry-run' : 'delete-records', dir, { topic: opts.topic, partition: opts.partition, threads: 1, json: opts.json, progress: false }, ['segments', 'deleted', 'log start'], async (t) => {
          const r = await deleteRecords(t.dir, opts);
          return {
            outcome: r.warnings > 0 ? 'problem' : 'ok',
            fields: { ...r.report },
            cells: [`${r.report.segmentsBefore} → ${r.report.segmentsAfter}`, r.report.deleted.length, `${r.report.logStartOffsetBefore} → ${r.report.logStartOffsetAfter}`],
          };
        });
      }
      if (opts.topic !== undefined || opts.partition !== undefined) throw new LogtoolError('usage', '--topic and --partition name a partition of a log directory, not of a partition directory', { file: dir });
      const out = new Output();
      const { report, warnings } = await deleteRecords(dir, opts);
      if (opts.json) await out.json(report);
      else for (const l of renderRetentionReport(report, 'delete-records')) await out.line(l);
      await out.flush();
      if (warnings > 0) process.exitCode = 3;
    });
}

async function deleteRecords(dir: string, opts: DeleteRecordsOpts): Promise<{ report: RetentionReport; warnings: number }> {
  const counter: WarningCounter = { count: 0 };
  const log = opts.dryRun ? await Log.openStable(dir) : openLog(dir, { create: false }, counter);
  const report = await closeAfter(log, () => log.deleteRecordsBefore(opts.beforeOffset!, { dryRun: opts.dryRun, keepRemovedDir: opts.keepRemoved, deleteDelayMs: 0 }));
  return { report, warnings: counter.count };
}
