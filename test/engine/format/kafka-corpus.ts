/**
 * Locates the shared Kafka-written fixture corpus (../shared/fixtures/kafka from the repo root, or
 * LOGTOOL_KAFKA_FIXTURES; read in place, never copied) and its cases.json. When the folder is
 * absent the suites that need it skip and say so, rather than passing silently.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const fixturesDir = path.resolve(repoRoot, process.env['LOGTOOL_KAFKA_FIXTURES'] ?? path.join('..', 'shared', 'fixtures', 'kafka'));
export const haveFixtures = existsSync(path.join(fixturesDir, 'cases.json'));

let noticeShown = false;
/** Prints (once per file) why fixture suites are skipped. */
export function fixtureNotice(): void {
  if (haveFixtures || noticeShown) return;
  noticeShown = true;
  console.warn(`\n*** SKIPPED: Kafka fixture corpus not found at ${fixturesDir}; fixture-based tests did not run. ***\n`);
}

export interface SelfDecodedWalk {
  bytes: number;
  batches: number;
  records: number;
  firstOffset: string;
  lastOffset: string;
  magics: Record<string, number>;
  codecs: Record<string, number>;
  logAppendTimeBatches: number;
  trailingBytes: number;
  partialLastBatch: boolean;
}

export interface FixtureCase {
  case: string;
  kind: string;
  size?: number;
  expect_from_test?: Record<string, unknown> | null;
  expect_from_repo_code?: Record<string, unknown>;
  warning?: string;
  selfDecodedHeaderWalk?: SelfDecodedWalk;
  partitions?: Record<string, { empty?: boolean; selfDecoded?: Record<string, SelfDecodedWalk> }>;
}

export function loadCases(): FixtureCase[] {
  if (!haveFixtures) return [];
  const doc = JSON.parse(readFileSync(path.join(fixturesDir, 'cases.json'), 'utf8')) as { cases: FixtureCase[] };
  return doc.cases;
}

export function fixturePath(caseName: string): string {
  return path.join(fixturesDir, caseName);
}
