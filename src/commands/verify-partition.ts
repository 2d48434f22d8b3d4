/**
 * One partition of `logtool verify` over a log directory (the read-only check of
 * engine/recovery/log-verifier.ts): its report as the NDJSON line, a problem when anything is
 * wrong. Apart from verify.ts so that a worker thread (partition-jobs.ts) runs it without the CLI.
 */
import { verifyLog, type VerifyProblem } from '../api/verify.js';
import { openLog, type WarningCounter } from './shared.js';
import type { PartitionJob, PartitionResult } from './logdir-runner.js';

export type VerifyPartitionOpts = PartitionJob['opts'];

/** Where in its file a problem is: a byte, an index entry or a line (leader-epoch-checkpoint). */
export const problemWhere = (p: VerifyProblem): string => (p.position !== undefined ? ` at byte ${p.position}` : p.entry !== undefined ? ` entry ${p.entry}` : p.line !== undefined ? ` line ${p.line}` : '');

export async function verifyPartition(dir: string, opts: VerifyPartitionOpts): Promise<PartitionResult> {
  const counter: WarningCounter = { count: 0 };
  const log = openLog(dir, { readOnly: true }, counter);
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
