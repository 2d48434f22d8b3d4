/**
 * Runs the built CLI (the package's bin, dist/bin/logtool.cjs, see build.ts) as a child process, with colour off (NO_COLOR, no FORCE_COLOR). The async
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
// A guard against hangs, not a timing: a 3-million-record read took over 60 s on a 2-core machine at
// load 24, so the limit matches vitest's own test limit (240 s).
export function run(file: string, args: string[], env: Record<string, string> = {}, timeoutMs = 230_000): Promise<CliResult> {
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

/**
 * One stderr line of a failed command in the text form report() writes (`error: <file> at byte <n>:
 * <message>`). Without --json (`json` false) the line must be that text line; with --json it must be
 * the object `{"error":{"kind","message","file","position","exitCode"}}`, returned in the same text
 * form. Undefined when the line is not an error in the form the command must use.
 */
export function errorLineText(line: string, json: boolean): string | undefined {
  if (!json) return line.startsWith('error: ') ? line : undefined;
  let e: { kind?: unknown; message?: unknown; file?: unknown; position?: unknown; exitCode?: unknown } | undefined;
  try {
    e = (JSON.parse(line) as { error?: typeof e }).error;
  } catch {
    return undefined;
  }
  if (!e || typeof e.message !== 'string' || typeof e.kind !== 'string' || typeof e.exitCode !== 'number') return undefined;
  const where = typeof e.file !== 'string' ? '' : typeof e.position === 'number' ? `${e.file} at byte ${e.position}: ` : `${e.file}: `;
  return `error: ${e.kind === 'internal' ? 'internal error: ' : ''}${where}${e.message}`;
}
