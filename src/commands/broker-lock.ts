/**
 * The CLI's side of coexisting with a Kafka broker (engine/logdir/broker-lock.ts): before a
 * writing command runs, it takes the shared lock on the `.lock` of the log directory it writes in
 * (for a partition directory, its parent) and holds it until the command ends. Read-only forms
 * (`--dry-run`, `--verify`) and read-only commands take nothing.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { realIO } from '../api/format.js';
import { BrokerLock } from '../api/logdir.js';
import { classifyEntry, isBrokerLogDir } from '../inspect/logdir.js';
import { LOG_SUFFIX } from '../inspect/format.js';

type Opts = Record<string, unknown>;

/** The commands that write, and when (by their options) they do. */
const WRITES: Record<string, (o: Opts) => boolean> = {
  append: () => true,
  recover: (o) => !o.dryRun,
  'rebuild-index': (o) => !o.verify,
  retention: (o) => !o.dryRun,
  'delete-records': (o) => !o.dryRun,
  compact: (o) => !o.dryRun,
  // `consume` commits its position into the partition directory unless told not to.
  consume: (o) => o.commit !== false,
  // `transactions abort` (its subcommand is the command that runs) appends a marker.
  abort: () => true,
};

/**
 * The log directory a command's target lies in: a segment file's partition's parent, a partition
 * directory's parent (Kafka's form `<topic>-<partition>`, not a broker's log directory), or the
 * target itself. undefined when that directory does not exist (nothing to lock yet).
 */
export function logDirOfTarget(target: string): string | undefined {
  let p = path.resolve(target);
  const st = realIO.stat(p);
  if (st?.isFile || (!st && realIO.stat(`${p}${LOG_SUFFIX}`)?.isFile)) p = path.dirname(p);
  const isPartition = classifyEntry(path.basename(p), true).kind === 'partition' && !isBrokerLogDir(p);
  const dir = isPartition ? path.dirname(p) : p;
  return realIO.stat(dir)?.isDirectory ? dir : undefined;
}

let held: BrokerLock | undefined;

/** preAction hook: takes the lock when the command about to run writes. */
export async function lockForCommand(cmd: Command): Promise<void> {
  const writes = WRITES[cmd.name()];
  const target = cmd.args[0];
  if (!writes || !writes(cmd.opts()) || target === undefined) return;
  const logDir = logDirOfTarget(target);
  if (logDir === undefined) return;
  held = await BrokerLock.acquire(logDir);
}

/** Releases what lockForCommand took (runCli calls it whatever happened; the process's end would too). */
export async function releaseCommandLock(): Promise<void> {
  const lock = held;
  held = undefined;
  try {
    await lock?.release();
  } catch {
    // closing the descriptor failed: the lock goes with the process; the command's own outcome stands
  }
}
