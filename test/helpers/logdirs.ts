/**
 * Whole broker log directories (Kafka's `log.dirs` entries) from the fixture corpus, copied into a
 * temp dir so commands may run on them, and a recursive file stamp to prove a run changed nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fixturePath, makeTempDir, recreateZeroIndex, type SegmentCase } from './fixtures.js';
import { defaultLogConfig } from '../../src/engine/config.js';
import { realIO } from '../../src/engine/io.js';
import { rebuildTxnIndexes } from '../../src/engine/partition-state/txn-index-rebuild.js';
import { rebuildSegmentIndexes } from '../../src/engine/recovery/index-rebuilder.js';
import { parseBaseOffset } from '../../src/engine/segment/segment-files.js';

function makeWritable(p: string): void {
  const st = fs.statSync(p);
  fs.chmodSync(p, st.isDirectory() ? 0o755 : 0o644);
  if (st.isDirectory()) for (const n of fs.readdirSync(p)) makeWritable(path.join(p, n));
}

/**
 * `<tmp>/logdir`: a copy of the case's broker log directory. With `completeIndexes`, the index
 * files the corpus could not hold are put back (completeAbsentIndexes), so every partition is whole.
 */
export function copyBrokerLogDir(c: SegmentCase, opts: { completeIndexes?: boolean } = {}): string {
  const dir = path.join(makeTempDir('logtool-logdir-'), 'logdir');
  fs.cpSync(fixturePath(c.case), dir, { recursive: true });
  makeWritable(dir);
  if (opts.completeIndexes) completeAbsentIndexes(c, dir);
  return dir;
}

/**
 * Puts back, in `dir` (a copy of the case's log directory, or part of one), the index files the
 * corpus could not hold: the preallocated all-zero ones as zeros of their length (as Kafka left
 * them), the others rebuilt from their `.log` (their content is unknown) by what
 * `logtool rebuild-index <segment>` runs, Kafka's recovery rule, in this process: one child process
 * per segment cost a second each on CI and proved nothing about the CLI. Absent files of partitions
 * not in `dir` are skipped.
 */
export function completeAbsentIndexes(c: SegmentCase, dir: string): void {
  const rebuild = new Map<string, Set<number>>();
  for (const a of c.absentFiles) {
    const file = path.join(dir, a.path);
    if (!fs.existsSync(path.dirname(file)) || fs.existsSync(file) || recreateZeroIndex(a, file)) continue;
    const base = parseBaseOffset(path.basename(file));
    if (!/\.(index|timeindex)$/.test(file) || base === undefined) throw new Error(`absent file of unknown content that is no index: ${a.path}`);
    const bases = rebuild.get(path.dirname(file)) ?? new Set<number>();
    rebuild.set(path.dirname(file), bases.add(base));
  }
  const { indexIntervalBytes } = defaultLogConfig; // a broker's log directory remembers no config
  for (const [partition, bases] of rebuild) {
    for (const base of bases) rebuildSegmentIndexes(realIO, partition, base, { indexIntervalBytes });
    rebuildTxnIndexes(realIO, partition, [...bases], indexIntervalBytes);
  }
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
