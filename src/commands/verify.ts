/**
 * `logtool verify <dir>`: the read-only check of a partition directory (engine/log-verifier.ts),
 * for operators and CI. Exit 0 when everything checks out, 3 when anything is wrong.
 */
import { Command } from 'commander';
import { verifyLog, type VerifyProblem } from '../api/verify.js';
import { Output, colours } from '../render/output.js';
import { startProgress } from '../render/progress.js';
import { openLog, parseInteger, type WarningCounter } from './shared.js';
import { addLogDirOptions, isLogDirPath, rejectSelection, runOverLogDir, type LogDirOptions, type PartitionResult, type PartitionTarget } from './logdir-runner.js';

interface VerifyOpts extends LogDirOptions {
  deep?: boolean;
  indexes?: boolean;
  json?: boolean;
  maxProblems: number;
  progress?: boolean;
}

/** Where in its file a problem is: a byte, an index entry or a line (leader-epoch-checkpoint). */
const problemWhere = (p: VerifyProblem): string => (p.position !== undefined ? ` at byte ${p.position}` : p.entry !== undefined ? ` entry ${p.entry}` : p.line !== undefined ? ` line ${p.line}` : '');

/** One partition of a log directory: its verify report as the NDJSON line, a problem when anything is wrong. */
async function verifyPartition(t: PartitionTarget, opts: VerifyOpts): Promise<PartitionResult> {
  const counter: WarningCounter = { count: 0 };
  const log = openLog(t.dir, { readOnly: true }, counter);
  try {
    const r = verifyLog(log, { deep: opts.deep, skipIndexes: opts.indexes === false, maxProblems: opts.maxProblems });
    const problems = r.problems.length;
    const first = r.problems[0];
    const note = first && `${problems} problem(s), first ${first.file}${problemWhere(first)}: ${first.message}`;
    return {
      outcome: problems > 0 || counter.count > 0 ? 'problem' : 'ok',
      fields: { ...r, ok: problems === 0 },
      cells: [r.segments, r.batches, r.bytes, r.logStartOffset, r.logEndOffset, problems],
      ...(note ? { note } : counter.count > 0 ? { note: 'warnings when opened (see stderr)' } : {}),
    };
  } finally {
    await log.close();
  }
}

export function verifyCommand(): Command {
  return addLogDirOptions(new Command('verify'))
    .description('check a partition directory without changing it: CRCs, offsets, indexes (and every record with --deep)')
    .argument('<dir>', 'partition directory, or a log directory (every partition, or those selected)')
    .option('--deep', 'decode every record (decompression and record-level validation), not only batches')
    .option('--no-indexes', 'skip checking .index and .timeindex entries against the .log')
    .option('--json', 'print the report as one JSON object')
    .option('--max-problems <n>', 'stop after this many problems', parseInteger('--max-problems', 1), 1000)
    .option('--no-progress', 'no progress spinner on a terminal')
    .addHelpText(
      'after',
      `
Takes no lock and changes nothing, so it can run beside a writer or a broker. Problems are listed
with file and byte position (or index entry); \`recover\` repairs what it can.

Given a log directory, every partition is verified (--threads at a time) and summarised, one NDJSON
line each with --json and a last {"summary":true,…} line.

Exit codes: 0 everything checks out, 3 problems found, 1 failure (missing directory, I/O; for a log
directory: any partition failed).

Examples:
  logtool verify logdata/demo-0
  logtool verify /var/lib/kafka/data --topic orders --json | jq -c 'select(.outcome != "ok")'
  logtool verify /var/lib/kafka/orders-3 --deep --json | jq '.problems'`,
    )
    .action(async (dir: string, opts: VerifyOpts) => {
      if (isLogDirPath(dir)) return runOverLogDir('verify', dir, opts, ['segments', 'batches', 'bytes', 'log start', 'log end', 'problems'], (t) => verifyPartition(t, opts));
      rejectSelection(dir, opts);
      const out = new Output();
      // Opening may already warn about a torn tail; the report below lists every problem anyway.
      const log = openLog(dir, { readOnly: true });
      const progress = startProgress(`verifying ${dir}`, opts.progress !== false);
      let problems = 0;
      try {
        const r = verifyLog(log, {
          deep: opts.deep,
          skipIndexes: opts.indexes === false,
          maxProblems: opts.maxProblems,
          onProgress: (done, total) => progress.count(done, total),
        });
        progress.stop();
        problems = r.problems.length;
        if (opts.json) await out.json({ ...r, ok: problems === 0 });
        else {
          const c = colours();
          await out.line(`Verified ${r.dir}`);
          await out.line(`  segments ${r.segments}, batches ${r.batches}, bytes ${r.bytes}${opts.deep ? `, records ${r.records}` : ''}${opts.indexes === false ? '' : `, index entries ${r.indexEntries}`}`);
          await out.line(`  log start offset ${r.logStartOffset}, log end offset ${r.logEndOffset}`);
          for (const p of r.problems) {
            await out.line(`  ${c.red('problem:')} ${p.file}${problemWhere(p)}: ${p.message}`);
          }
          await out.line(problems === 0 ? 'Everything checks out.' : `${problems} problem(s) found${r.problems.length >= opts.maxProblems ? ' (stopped at --max-problems)' : ''}.`);
        }
      } finally {
        progress.stop();
        await out.flush();
        await log.close();
      }
      if (problems > 0) process.exitCode = 3;
    });
}
