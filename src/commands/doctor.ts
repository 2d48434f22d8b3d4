/**
 * `logtool doctor <logdir…>`: every read-only check logtool has (doctor-checks.ts) over every
 * partition of the given log directories (Kafka's log.dirs layout, logdir/entries.ts) or partition
 * directories, in one report: findings by severity, each with the command that would fix it, and
 * the disk usage per topic. Takes no lock and changes nothing. Exit 3 when any finding is a
 * warning or an error, 0 when there are none or only notes.
 */
import path from 'node:path';
import { Command } from 'commander';
import { escapeString } from '../render/escape.js';
import { Output, colours } from '../render/output.js';
import { formatBytes, startProgress } from '../render/progress.js';
import { parseTopicPartition } from '../inspect/log.js';
import { logDirTarget, type LogDirEntry } from '../inspect/logdir.js';
import { checkLogDirEntries, checkPartition, readLogDirState, type Finding, type Severity } from './doctor-checks.js';

const ORDER: Severity[] = ['error', 'warning', 'note'];

interface DoctorReport {
  ok: boolean;
  partitions: number;
  counts: Record<Severity, number>;
  findings: Finding[];
  topics: { topic: string; partitions: number; sizeBytes: number }[];
}

/** The partitions to check: a partition directory alone, or every partition of a log directory. */
function targets(given: string): { logDir: string; entries: LogDirEntry[]; partitions: LogDirEntry[] } {
  const t = logDirTarget(given);
  // KRaft's metadata log is a log in the same format: checked like a partition.
  return { ...t, partitions: [...t.partitions, ...t.entries.filter((e) => e.kind === 'metadata')] };
}

async function examine(dirs: string[], progressEnabled: boolean): Promise<DoctorReport> {
  const all = dirs.map(targets);
  const total = all.reduce((n, t) => n + t.partitions.length, 0);
  const progress = startProgress('doctor', progressEnabled, { unit: 'partitions' });
  const findings: Finding[] = [];
  const topics = new Map<string, { partitions: number; sizeBytes: number }>();
  let done = 0;
  try {
    for (const t of all) {
      findings.push(...checkLogDirEntries(t.logDir, t.entries));
      const state = readLogDirState(t.logDir);
      for (const e of t.partitions) {
        const dir = path.join(t.logDir, e.name);
        progress.update(`doctor ${e.name}`);
        const tp = e.topicPartition ?? parseTopicPartition(e.name)!;
        const r = await checkPartition(dir, tp.topic, tp.partition, state);
        findings.push(...r.findings);
        const topic = topics.get(r.summary.topic) ?? { partitions: 0, sizeBytes: 0 };
        topic.partitions++;
        topic.sizeBytes += r.summary.sizeBytes;
        topics.set(r.summary.topic, topic);
        progress.count(++done, total);
      }
    }
  } finally {
    progress.stop();
  }
  findings.sort((a, b) => ORDER.indexOf(a.severity) - ORDER.indexOf(b.severity));
  const counts = { error: 0, warning: 0, note: 0 };
  for (const f of findings) counts[f.severity]++;
  return {
    ok: counts.error + counts.warning === 0,
    partitions: total,
    counts,
    findings,
    topics: [...topics].map(([topic, t]) => ({ topic, ...t })).sort((a, b) => b.sizeBytes - a.sizeBytes),
  };
}

async function printText(out: Output, r: DoctorReport): Promise<void> {
  const c = colours();
  const paint: Record<Severity, (s: string) => string> = { error: c.red, warning: c.yellow, note: c.cyan };
  for (const f of r.findings) {
    const where = f.file ? `${f.file}${f.position !== undefined ? ` at byte ${f.position}` : ''}` : f.where;
    await out.line(`${paint[f.severity](f.severity.padEnd(7))} ${escapeString(where)}: ${f.message}`);
    if (f.fix) await out.line(`        fix: ${f.fix}`);
  }
  for (const t of r.topics) await out.line(`topic ${escapeString(t.topic)}: ${t.partitions} partition(s), ${formatBytes(t.sizeBytes)}`);
  await out.line(`${r.partitions} partition(s) checked: ${r.counts.error} error(s), ${r.counts.warning} warning(s), ${r.counts.note} note(s)${r.ok ? ' — healthy.' : '.'}`);
}

export function doctorCommand(): Command {
  return new Command('doctor')
    .description('check log directories read-only with every check logtool has, and say how to fix what it finds')
    .argument('<logdir...>', "log directories (a broker's log.dirs entries) or partition directories")
    .option('--json', 'the report as one JSON object: findings (severity, where, file, position, message, fix), counts, topics')
    .option('--no-progress', 'no progress line on a terminal')
    .addHelpText(
      'after',
      `
Checks: CRCs, offsets and indexes of every segment (as verify), the recovery-point and log-start
checkpoints against the partitions, leader-epoch checkpoints, producer snapshots, whether Kafka would
recover a partition at startup, -delete/-future/-stray directories, and segments past retention when
the topic's retention is known (logtool.properties). Takes no lock and changes nothing.

Exit codes: 0 healthy (no findings, or notes only), 3 a warning or an error, 1 failure, 2 usage.

Examples:
  logtool doctor /var/lib/kafka/data
  logtool doctor /var/lib/kafka/data-1 /var/lib/kafka/data-2 --json | jq '.findings[] | select(.severity == "error")'`,
    )
    .action(async (dirs: string[], opts: { json?: boolean; progress?: boolean }) => {
      const out = new Output();
      const report = await examine(dirs, opts.progress !== false);
      try {
        if (opts.json) await out.json(report);
        else await printText(out, report);
      } finally {
        await out.flush();
      }
      if (!report.ok) process.exitCode = 3;
    });
}
