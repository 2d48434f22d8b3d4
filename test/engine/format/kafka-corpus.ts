/**
 * The shared Kafka-written fixture corpus as the format tests see it (read in place, never
 * copied) and its cases.json. Where it is and what happens without it (fail under CI, a skip
 * notice elsewhere) is decided in one place: test/helpers/fixtures.ts (LOGTOOL_FIXTURES).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fixturesRoot, hasFixtures, repoRoot } from '../../helpers/fixtures.js';

export { repoRoot };
export const fixturesDir = fixturesRoot;
export const haveFixtures = hasFixtures;

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
