/**
 * Subcommands beyond the core four. Each lives in its own file; adding one means one import and
 * one entry here, so parallel work does not collide in cli.ts.
 */
import type { Command } from 'commander';
import { benchCommand } from './bench.js';
import { recoverCommand } from './recover.js';
import { rebuildIndexCommand } from './rebuild-index.js';
import { compactCommand } from './compact.js';
import { retentionCommand } from './retention.js';
import { deleteRecordsCommand } from './delete-records.js';
import { consumeCommand, positionsCommand } from './consume.js';
import { verifyCommand } from './verify.js';
import { lsCommand } from './ls.js';
import { transactionsCommand } from './transactions.js';
import { groupsCommand } from './groups.js';

export function extraCommands(): Command[] {
  return [recoverCommand(), rebuildIndexCommand(), benchCommand(), compactCommand(), retentionCommand(), deleteRecordsCommand(), consumeCommand(), positionsCommand(), verifyCommand(), lsCommand(), groupsCommand(), transactionsCommand()];
}
