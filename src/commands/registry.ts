/**
 * Subcommands beyond the core four. Each lives in its own file; adding one means one import and
 * one entry here, so parallel work does not collide in cli.ts.
 */
import type { Command } from 'commander';

export function extraCommands(): Command[] {
  return [];
}
