/**
 * Whole processes for the bench's CLI scenarios (start-up, pipes, peak memory): a child `node`
 * timed from spawn until it exits and its stdout ends, its stdin fed from a file through a pipe,
 * its stdout drained from a pipe, and its peak RSS read from the child itself (peak-rss.ts,
 * preloaded with --import) since Node reports no child's rusage.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nowMs } from './types.js';

/**
 * The CLI a user runs: the package's bin (dist/bin/logtool.cjs, the bundle `npm run build` makes),
 * or the compiled dist/cli.js where only tsc ran.
 */
const binPath = fileURLToPath(new URL('../bin/logtool.cjs', import.meta.url));
export const cliPath = fs.existsSync(binPath) ? binPath : fileURLToPath(new URL('../cli.js', import.meta.url));
const peakRssPreload = fileURLToPath(new URL('./peak-rss.js', import.meta.url));
export const PEAK_RSS_FILE_ENV = 'LOGTOOL_BENCH_PEAK_RSS_FILE';
let rssFiles = 0;

export interface ProcessRun {
  /** Wall time from spawn until exit with stdout drained. */
  ms: number;
  /** Bytes the process wrote on stdout. */
  stdoutBytes: number;
  /** Peak resident set in MiB, when asked for (peakRssIn). */
  peakRssMB?: number;
}

export interface ProcessOptions {
  /** A file whose bytes are written into the child's stdin, a pipe; stdin is empty otherwise. */
  inputFile?: string;
  /**
   * Preload peak-rss.js and return the child's peak RSS, passed through a file in this directory
   * (the scenario's scratch directory, removed with it: nothing left in the OS temp dir).
   */
  peakRssIn?: string;
}

/** Runs `node <args>`; rejects naming the command and its stderr when it exits non-zero. */
export function runNode(args: readonly string[], opts: ProcessOptions = {}): Promise<ProcessRun> {
  const rssFile = opts.peakRssIn === undefined ? undefined : path.join(opts.peakRssIn, `peak-rss-${process.pid}-${++rssFiles}`);
  const nodeArgs = rssFile ? ['--import', peakRssPreload, ...args] : [...args];
  const env = { ...process.env, NO_COLOR: '1', CI: '1', ...(rssFile ? { [PEAK_RSS_FILE_ENV]: rssFile } : {}) };
  return new Promise<ProcessRun>((resolve, reject) => {
    const t0 = nowMs();
    const child = spawn(process.execPath, nodeArgs, { stdio: [opts.inputFile ? 'pipe' : 'ignore', 'pipe', 'pipe'], env });
    let stdoutBytes = 0;
    let stderr = '';
    child.stdout!.on('data', (b: Buffer) => (stdoutBytes += b.length));
    child.stderr!.on('data', (b: Buffer) => {
      if (stderr.length < 4096) stderr += b.toString('utf8');
    });
    if (opts.inputFile && child.stdin) {
      const input = fs.createReadStream(opts.inputFile, { highWaterMark: 64 * 1024 });
      input.on('error', reject);
      child.stdin.on('error', () => {}); // a child that stops reading early reports through its exit code
      input.pipe(child.stdin);
    }
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const ms = nowMs() - t0;
      let peakRssMB: number | undefined;
      if (rssFile) {
        try {
          peakRssMB = Number(fs.readFileSync(rssFile, 'utf8')) / 1024;
        } catch {
          peakRssMB = undefined;
        }
        fs.rmSync(rssFile, { force: true });
      }
      if (code !== 0) reject(new Error(`node ${args.map((a) => path.basename(a)).join(' ')} exited ${signal ?? code}: ${stderr.trim().split('\n')[0] ?? ''}`));
      else resolve({ ms, stdoutBytes, ...(peakRssMB !== undefined ? { peakRssMB } : {}) });
    });
  });
}

/** The median of some numbers (0 for none). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
