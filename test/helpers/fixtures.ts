/**
 * Shared test helpers: where the Kafka fixture corpus lives (resolved from the repo root, never
 * from the working directory), typed access to its cases.json, and temp directories that are
 * removed after the test file.
 *
 * The corpus is read-only (../shared). Tests that need to change anything (recreate an absent
 * preallocated index, run recovery, corrupt bytes) copy a partition into a temp dir first.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The one variable that names the corpus (relative paths are from the repo root). */
export const FIXTURES_ENV = 'LOGTOOL_FIXTURES';
export const fixturesRoot = path.resolve(repoRoot, process.env[FIXTURES_ENV] ?? path.join('..', 'shared', 'fixtures', 'kafka'));
export const hasFixtures = fs.existsSync(path.join(fixturesRoot, 'cases.json'));

/**
 * Called at the top of every test file whose tests come from the corpus: without the corpus,
 * `it.each` over an empty list creates no test and the file would pass having proven nothing.
 * Under CI (the `CI` variable set) a missing corpus fails the file; elsewhere the file says that
 * it skipped. Returns hasFixtures.
 */
export function requireFixtures(testFileUrl: string): boolean {
  if (hasFixtures) return true;
  const file = path.relative(repoRoot, fileURLToPath(testFileUrl));
  const why = `Kafka fixture corpus not found at ${fixturesRoot} (set ${FIXTURES_ENV})`;
  if (process.env.CI) throw new Error(`${file}: ${why}; CI must not pass without the fixture-driven tests`);
  console.warn(`\n*** SKIPPED ${file}: ${why}; its fixture-driven tests did not run. ***\n`);
  return false;
}

export const PREALLOCATED_INDEX_BYTES = 10_485_760;
export const PREALLOCATED_TIME_INDEX_BYTES = 10_485_756;
/** git blob ids of 10485760 / 10485756 zero bytes (PROVENANCE.md). */
export const ZERO_INDEX_BLOB = '6c5d4031e03408e34ae476c5053ee497a91ac37b';
export const ZERO_TIME_INDEX_BLOB = '7593da4150aff16efa8b462a6c6b7325bf90fa16';

export interface SelfDecodedFile {
  bytes: number;
  batches: number;
  records: number;
  firstOffset: string | null;
  lastOffset: string | null;
  magics: Record<string, number>;
  codecs: Record<string, number>;
  transactionalBatches: number;
  controlBatches: number;
  logAppendTimeBatches: number;
  deleteHorizonBatches: number;
  producerIds: string[];
  crcOk: number;
  crcBad: number;
  trailingBytes: number;
  partialLastBatch: boolean;
  minTs: string | null;
  maxTs: string | null;
}

export interface PartitionFacts {
  empty?: boolean;
  segments?: string[];
  snapshots?: string[];
  leaderEpochs?: string[];
  topicId?: string;
  'recovery-point'?: string;
  replication?: string;
  cleaner?: string;
  'log-start'?: string;
  selfDecoded?: Record<string, SelfDecodedFile>;
}

export interface AbsentFile {
  path: string;
  blob: string;
  note: string;
}

export interface SegmentCase {
  case: string;
  kind: string;
  absentFiles: AbsentFile[];
  excludedFiles: unknown[];
  partitions: Record<string, PartitionFacts>;
  files: { path: string; size: number; sha256: string }[];
}

export interface BytesCase {
  case: string;
  kind: string;
  size: number;
  expect_from_test: Record<string, unknown> | null;
  selfDecodedHeaderWalk: SelfDecodedFile;
}

interface CasesFile {
  readme: string;
  cases: (SegmentCase | BytesCase)[];
}

let cached: CasesFile | undefined;

export function loadCases(): CasesFile {
  cached ??= JSON.parse(fs.readFileSync(path.join(fixturesRoot, 'cases.json'), 'utf8')) as CasesFile;
  return cached;
}

export function segmentCases(): SegmentCase[] {
  if (!hasFixtures) return [];
  return loadCases().cases.filter((c): c is SegmentCase => c.case.startsWith('segments/'));
}

export function bytesCases(): BytesCase[] {
  if (!hasFixtures) return [];
  return loadCases().cases.filter((c): c is BytesCase => !c.case.startsWith('segments/'));
}

export function fixturePath(...parts: string[]): string {
  return path.join(fixturesRoot, ...parts);
}

/** True when the case's log.dir holds the clean-shutdown marker. */
export function hasCleanShutdownMarker(c: SegmentCase): boolean {
  return fs.existsSync(fixturePath(c.case, '.kafka_cleanshutdown'));
}

/** Codec names over every file of a partition (from the collector's header walk). */
export function codecsOf(p: PartitionFacts): Set<string> {
  const out = new Set<string>();
  for (const f of Object.values(p.selfDecoded ?? {})) for (const k of Object.keys(f.codecs)) out.add(k);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Temp dirs

const tempDirs: string[] = [];

/** A fresh temp directory, removed by removeTempDirs() (call it from afterAll). */
export function makeTempDir(prefix = 'logtool-test-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(d);
  return d;
}

export function removeTempDirs(): void {
  for (const d of tempDirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

/** `<fresh tmp>/<name>`: a path for a partition directory (not created). Names must be topic-N. */
export function tempPartitionPath(name = 't-0'): string {
  return path.join(makeTempDir(), name);
}

/**
 * Copies one partition directory of a segments case into destParent/<partition>. With
 * `recreateZeroIndexes`, absent files whose git blob id is that of the all-zero preallocated
 * index / time index are recreated as zero-filled files of that length (in the copy only).
 */
export function copyPartition(c: SegmentCase, partition: string, destParent: string, opts: { recreateZeroIndexes?: boolean } = {}): string {
  const src = fixturePath(c.case, partition);
  const dest = path.join(destParent, partition);
  fs.mkdirSync(dest, { recursive: true });
  for (const name of fs.readdirSync(src)) {
    const s = path.join(src, name);
    if (fs.statSync(s).isFile()) fs.copyFileSync(s, path.join(dest, name));
  }
  if (opts.recreateZeroIndexes) for (const a of c.absentFiles) if (a.path.startsWith(`${partition}/`)) recreateZeroIndex(a, path.join(destParent, a.path));
  return dest;
}

/**
 * When the absent file is a preallocated all-zero index or time index (by its git blob id), writes
 * it at `file` as zeros of its length (sparse, as Kafka left it) and returns true; else false.
 */
export function recreateZeroIndex(a: AbsentFile, file: string): boolean {
  const length = a.blob === ZERO_INDEX_BLOB ? PREALLOCATED_INDEX_BYTES : a.blob === ZERO_TIME_INDEX_BLOB ? PREALLOCATED_TIME_INDEX_BYTES : undefined;
  if (length === undefined) return false;
  const fd = fs.openSync(file, 'w');
  fs.ftruncateSync(fd, length);
  fs.closeSync(fd);
  return true;
}

/**
 * A temp copy of one partition together with its case's log.dir-level files (checkpoints,
 * `.kafka_cleanshutdown`, meta.properties): `<tmp>/<partition>`. Reading from a copy keeps the
 * shared corpus safe even from a buggy "read-only" open.
 */
export function copyPartitionWithLogDir(c: SegmentCase, partition: string, opts: { recreateZeroIndexes?: boolean } = {}): string {
  const tmp = makeTempDir();
  const root = fixturePath(c.case);
  for (const name of fs.readdirSync(root)) {
    const s = path.join(root, name);
    if (fs.statSync(s).isFile()) fs.copyFileSync(s, path.join(tmp, name));
  }
  return copyPartition(c, partition, tmp, opts);
}

/** name → size:mtime of every file in dir (to prove an open changed nothing). */
export function fileStamps(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir)) {
    const st = fs.statSync(path.join(dir, name));
    if (st.isFile()) out[name] = `${st.size}:${st.mtimeMs}`;
  }
  return out;
}

export function hex(buf: Uint8Array): string {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('hex');
}

/**
 * Every file and directory under `dir`: relative path → sha256 of the bytes and mtime (files) or
 * 'dir', so that comparing two snapshots proves a command created, removed or rewrote nothing.
 */
export function treeSnapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        out[`${path.relative(dir, p)}/`] = 'dir';
        walk(p);
      } else out[path.relative(dir, p)] = `${createHash('sha256').update(fs.readFileSync(p)).digest('hex')}:${fs.statSync(p).mtimeMs}`;
    }
  };
  walk(dir);
  return out;
}
