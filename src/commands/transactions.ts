/**
 * `logtool transactions list|find-hanging <dir|logdir>`: the open and aborted transactions of a
 * partition (or of every partition of a log directory), offline — what Kafka's
 * `kafka-transactions.sh list / find-hanging` tell of a running cluster (TransactionsCommand),
 * computed from the producer state the batches give (partition-state/producer-state.ts).
 * Read-only: no lock, nothing written.
 *
 * A hanging transaction is an open one whose last batch is older than the transaction timeout the
 * coordinator would have enforced (`transaction.max.timeout.ms`, default 15 minutes): its producer
 * is gone, it pins the last stable offset, read_committed consumers stall and the cleaner stops.
 */
import path from 'node:path';
import { Command } from 'commander';
import { realIO } from '../api/format.js';
import { Output, warn } from '../render/output.js';
import { renderTable } from '../render/table.js';
import { formatTimestamp } from '../render/timestamp.js';
import { collectAborted, committedView } from '../inspect/log.js';
import { listLogDir, isBrokerLogDir } from '../inspect/logdir.js';
import type { Log } from '../api/log.js';
import { openLog, parseInteger, parseTime, type WarningCounter } from './shared.js';
import { abortCommand } from './transactions-abort.js';

/** Kafka's transaction.max.timeout.ms default. */
export const DEFAULT_MAX_TRANSACTION_TIMEOUT_MS = 900_000;

export interface OpenTransactionReport {
  producerId: number;
  producerEpoch: number;
  firstOffset: number;
  lastOffset: number;
  lastTimestamp: number;
  ageMs: number;
}

export interface PartitionTransactions {
  partition: string;
  logStartOffset: number;
  logEndOffset: number;
  lastStableOffset: number;
  /** A broker's checkpointed high watermark, when the partition is in a broker's log directory. */
  highWatermark?: number;
  openTransactions: OpenTransactionReport[];
  abortedTransactions: { producerId: number; firstOffset: number; lastOffset: number; lastStableOffset: number }[];
}

/** The transactions of one open log at `nowMs`. */
export function partitionTransactions(log: Log, nowMs: number): PartitionTransactions {
  const view = committedView(log, log.logStartOffset);
  return {
    partition: log.dir,
    logStartOffset: log.logStartOffset,
    logEndOffset: log.nextOffset,
    lastStableOffset: view.lastStableOffset,
    ...(view.highWatermark !== undefined ? { highWatermark: view.highWatermark } : {}),
    openTransactions: view.state.openTransactions().map((t) => ({ ...t, ageMs: nowMs - t.lastTimestamp })),
    // Marker order, as .txnindex keeps them: below the recovery point from it, above from the markers.
    abortedTransactions: collectAborted(log, view.state, log.logStartOffset, Infinity).sort((a, b) => a.lastOffset - b.lastOffset),
  };
}

/**
 * The partition directories `dir` names: itself, or — a broker's log directory, or a folder of
 * partition directories without segments of its own — every partition in it.
 */
export function partitionDirs(dir: string): string[] {
  const hasSegments = () => realIO.readdir(dir).some((n) => n.endsWith('.log'));
  if (!isBrokerLogDir(dir) && (realIO.stat(dir)?.isDirectory !== true || hasSegments())) return [dir];
  const parts = listLogDir(dir).filter((e) => e.kind === 'partition');
  if (parts.length === 0 && !isBrokerLogDir(dir)) return [dir];
  return parts.map((e) => path.join(dir, e.name));
}

interface ListOpts {
  json?: boolean;
  now?: number;
  maxTransactionTimeoutMs: number;
}

async function listAction(dir: string, opts: ListOpts, hangingOnly: boolean): Promise<void> {
  const nowMs = opts.now ?? Date.now();
  const out = new Output();
  const counter: WarningCounter = { count: 0 };
  const rows: (string | number)[][] = [];
  const summaries: string[] = [];
  let hanging = 0;
  try {
    for (const p of partitionDirs(dir)) {
      const log = openLog(p, { readOnly: true }, counter);
      let t: PartitionTransactions;
      try {
        t = partitionTransactions(log, nowMs);
      } finally {
        await log.close();
      }
      if (hangingOnly) t.openTransactions = t.openTransactions.filter((o) => o.ageMs > opts.maxTransactionTimeoutMs);
      hanging += t.openTransactions.length;
      if (hangingOnly && t.openTransactions.length === 0) continue;
      if (opts.json) {
        await out.json(t);
        continue;
      }
      for (const o of t.openTransactions)
        rows.push([t.partition, o.producerId, o.producerEpoch, o.firstOffset, o.lastOffset, o.lastTimestamp < 0 ? '-' : formatTimestamp(o.lastTimestamp), o.ageMs]);
      summaries.push(
        `${t.partition}: last stable offset ${t.lastStableOffset}, log end offset ${t.logEndOffset}${t.highWatermark !== undefined ? `, high watermark ${t.highWatermark}` : ''}, ` +
          `${t.openTransactions.length} ${hangingOnly ? 'hanging' : 'open'}, ${t.abortedTransactions.length} aborted transaction(s)`,
      );
    }
    if (!opts.json) {
      if (rows.length > 0) await out.line(renderTable(['partition', 'producer id', 'epoch', 'first offset', 'last offset', 'last timestamp', 'age ms'], rows, out.isTTY));
      for (const s of summaries) await out.line(s);
      if (hangingOnly && hanging === 0) await out.line(`no transaction open longer than ${opts.maxTransactionTimeoutMs} ms`);
    }
  } finally {
    await out.flush();
  }
  if (hangingOnly && hanging > 0) {
    warn(`${hanging} hanging transaction(s): end them with \`logtool transactions abort <dir> --producer-id P\` once no broker or producer owns them`);
    process.exitCode = 3;
  }
  if (counter.count > 0) process.exitCode = 3;
}

function listCommand(name: 'list' | 'find-hanging'): Command {
  const hangingOnly = name === 'find-hanging';
  return new Command(name)
    .description(hangingOnly ? 'open transactions older than --max-transaction-timeout-ms (exit 3 if any)' : 'open and aborted transactions and the last stable offset, per partition')
    .argument('<dir>', 'partition directory, or a log directory (every partition in it)')
    .option('--json', 'one JSON object per partition: {"partition","logStartOffset","logEndOffset","lastStableOffset","openTransactions","abortedTransactions"}')
    .option('--now <time>', 'the time ages are measured at (epoch ms or ISO-8601; default: now)', parseTime('--now'))
    .option('--max-transaction-timeout-ms <ms>', "Kafka's transaction.max.timeout.ms: older open transactions hang", parseInteger('--max-transaction-timeout-ms', 0), DEFAULT_MAX_TRANSACTION_TIMEOUT_MS)
    .addHelpText(
      'after',
      `
An open transaction's age is --now minus the timestamp of its producer's last batch (ageMs). Read-only:
no lock is taken and nothing is written.

Examples:
  logtool transactions ${name} /var/lib/kafka/data/payments-3
  logtool transactions ${name} /var/lib/kafka/data --json --now 2026-12-01T12:00:00Z`,
    )
    .action((dir: string, opts: ListOpts) => listAction(dir, opts, hangingOnly));
}

export function transactionsCommand(): Command {
  return new Command('transactions')
    .description("a partition's transactions: list, find-hanging, abort")
    .addCommand(listCommand('list'))
    .addCommand(listCommand('find-hanging'))
    .addCommand(abortCommand());
}
