/**
 * Whole broker log directories (Kafka's `log.dirs` entries) from the fixture corpus, copied into a
 * temp dir so commands may run on them, and a recursive file stamp to prove a run changed nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PREALLOCATED_INDEX_BYTES, PREALLOCATED_TIME_INDEX_BYTES, ZERO_INDEX_BLOB, ZERO_TIME_INDEX_BLOB, fixturePath, makeTempDir, type SegmentCase } from './fixtures.js';
import { cliSync } from './cli.js';

function makeWritable(p: string): void {
  const st = fs.statSync(p);
  fs.chmodSync(p, st.isDirectory() ? 0o755 : 0o644);
  if (st.isDirectory()) for (const n of fs.readdirSync(p)) makeWritable(path.join(p, n));
}

/**
 * `<tmp>/logdir`: a copy of the case's broker log directory. With `completeIndexes`, the index
 * files the corpus could not hold are put back: the preallocated all-zero ones as zeros of their
 * length (as Kafka left them), the others rebuilt from their `.log` by `logtool rebuild-index` on
 * that one segment (their content is unknown), so every partition is whole.
 */
export function copyBrokerLogDir(c: SegmentCase, opts: { completeIndexes?: boolean } = {}): string {
  const dir = path.join(makeTempDir('logtool-logdir-'), 'logdir');
  fs.cpSync(fixturePath(c.case), dir, { recursive: true });
  makeWritable(dir);
  if (!opts.completeIndexes) return dir;
  const rebuild = new Set<string>();
  for (const a of c.absentFiles) {
    const file = path.join(dir, a.path);
    const length = a.blob === ZERO_INDEX_BLOB ? PREALLOCATED_INDEX_BYTES : a.blob === ZERO_TIME_INDEX_BLOB ? PREALLOCATED_TIME_INDEX_BYTES : undefined;
    if (length === undefined) {
      rebuild.add(file.replace(/\.(index|timeindex)$/, '.log'));
      continue;
    }
    const fd = fs.openSync(file, 'w');
    fs.ftruncateSync(fd, length);
    fs.closeSync(fd);
  }
  for (const log of rebuild) {
    const r = cliSync('rebuild-index', log);
    if (r.code !== 0) throw new Error(`rebuild-index ${log}: ${r.stderr}`);
  }
  return dir;
}

/**
 * A large log directory made quickly: copies of the partition directory `first` (`<topic>-0`)
 * beside it as `<topic>-1` … `<topic>-(n-1)`. Returns every partition directory, `first` included.
 */
export function copiesOfPartition(first: string, n: number): string[] {
  const files = fs.readdirSync(first);
  const topic = path.basename(first).replace(/-0$/, '');
  const dirs = [first];
  for (let i = 1; i < n; i++) {
    const dir = path.join(path.dirname(first), `${topic}-${i}`);
    fs.mkdirSync(dir);
    for (const f of files) fs.copyFileSync(path.join(first, f), path.join(dir, f));
    dirs.push(dir);
  }
  return dirs;
}

/** relative path → size:mtime of every file under `dir`. */
export function treeStamps(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = `${fs.statSync(p).size}:${fs.statSync(p).mtimeMs}`;
    }
  };
  walk(dir);
  return out;
}

/** The partition directories a case's broker log directory holds (KRaft's metadata log is none). */
export function partitionNames(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^[a-zA-Z0-9._-]+-(0|[1-9]\d{0,8})$/.test(e.name) && e.name !== '__cluster_metadata-0')
    .map((e) => e.name)
    .sort();
}

/** The fields tests read from a partition's NDJSON line (the runner's, then the command's). */
export interface PartitionLine {
  dir: string;
  topic: string;
  partition: number;
  outcome: string;
  note?: string;
  error?: { kind: string; message: string; file: string | null };
  problems?: unknown[];
  status?: string;
  configSource?: string;
  cleanupPolicy?: string;
  deleted?: { file: string }[];
  recordsRemoved?: number;
  logEndOffset?: number;
}

export interface NdjsonRun<L> {
  lines: L[];
  summary: { summary: true; partitions: number; ok: number; problems: number; failed: number; skipped: number; exitCode: number; broker: boolean };
}

/** Splits a log-directory run's `--json` output into its partition lines and the summary line. */
export function parseRun<L>(stdout: string): NdjsonRun<L> {
  const all = stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const summary = all.pop() as unknown as NdjsonRun<L>['summary'];
  if (summary?.summary !== true) throw new Error(`no summary line last: ${stdout.slice(-300)}`);
  return { lines: all as L[], summary };
}
