/**
 * Runs the built CLI (dist/cli.js, see build.ts) as a child process, with colour off (NO_COLOR, no FORCE_COLOR). The async
 * form lets concurrent tests overlap their processes; the sync form suits sequential steps.
 */
import { execFile, spawnSync } from 'node:child_process';
import { cliPath } from './build.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

// FORCE_COLOR would override NO_COLOR (as chalk documents): drop it so output is plain whatever the shell has.
const baseEnv = (env: Record<string, string>) => ({ ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined, CI: '1', ...env });

/** Runs any program (the CLI via `cli`, a shell pipeline via `sh`); exit code instead of a throw. */
export function run(file: string, args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20, env: baseEnv(env) }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      if (err && code === -1) reject(err);
      else resolve({ code, stdout, stderr });
    });
  });
}

export const cli = (...args: string[]): Promise<CliResult> => run(process.execPath, [cliPath, ...args]);

/** A bash pipeline (pipefail); `"$NODE" "$CLI"` runs the built CLI. */
export const sh = (script: string): Promise<CliResult> => run('bash', ['-o', 'pipefail', '-c', script], { NODE: process.execPath, CLI: cliPath });

export function cliSync(...args: string[]): CliResult {
  const r = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', env: baseEnv({}) });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
