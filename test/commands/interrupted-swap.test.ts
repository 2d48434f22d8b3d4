/**
 * Interrupted swaps tested from a reader's side at every step of the swap protocol (issue 9,
 * item 5). A real compaction is stopped right after each of its steps in turn (StepHook of
 * cleaner/swap.ts; the process state is dropped with Log.abandon, as a kill would), and the
 * read-only commands run on what it left, through the built CLI: `read`, `verify`, `segments`,
 * `consume` and `positions`. Each must show exactly what the loader keeps — the records, segments
 * and log end offset a writable open of a copy of that directory returns afterwards — and change
 * no file (consume writes only its own checkpoint), or refuse with exit 3. Never a partial set
 * shown as complete with exit 0.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { CONSUMER_OFFSETS_CHECKPOINT, CONSUMER_OFFSETS_LOCK } from '../../src/engine/queue/consumer-positions.js';
import { cliInProcess } from '../helpers/fault-io.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { buildLog, compactStoppingAt as compactAt, copyDir, fingerprint, type BatchSpec } from '../engine/cleaner/helpers.js';

afterAll(removeTempDirs);

const NOW = 1_700_000_000_000;
const CONFIG = { segmentBytes: 400, deleteRetentionMs: 86_400_000 };

const compactStoppingAt = (dir: string, stopAt: number) => compactAt(dir, stopAt, CONFIG, NOW);

/** What the loader keeps: a writable open of a copy (the copy is changed, the original is not). */
async function loaderView(dir: string, copy: string) {
  copyDir(dir, copy);
  const log = Log.open(copy, { config: CONFIG });
  try {
    return {
      records: [...log.read()].map((r) => `${r.offset}|${r.key?.toString() ?? null}|${r.value?.toString() ?? null}`),
      segments: log.segments.map((s) => [s.baseOffset, s.size]),
      logStartOffset: log.logStartOffset,
      logEndOffset: log.nextOffset,
    };
  } finally {
    await log.close();
  }
}

const lines = (s: string) => s.split('\n').filter(Boolean);
const json = (s: string) => lines(s).map((l) => JSON.parse(l) as Record<string, unknown>);
const recordOf = (o: Record<string, unknown>) => `${o.offset as number}|${o.key as string | null}|${o.value as string | null}`;

describe('interrupted swaps tested from a reader\'s side at every step of the swap protocol', () => {
  it('read, verify, segments, consume and positions show exactly what the loader keeps, or refuse with exit 3', async () => {
    const root = makeTempDir();
    const template = path.join(root, 'template', 'swapr-0');
    const specs: BatchSpec[] = [];
    for (let i = 0; i < 12; i++) specs.push({ records: [{ key: `k${i % 4}`, value: `v${i}`, timestamp: NOW + i }, { key: `j${i % 3}`, value: `w${i}`, timestamp: NOW + i }] });
    await buildLog(template, specs, CONFIG);

    const full = path.join(root, 'full', 'swapr-0');
    copyDir(template, full);
    const steps = await compactStoppingAt(full, -1);
    // The windows the issue names: old files already `.deleted`, `.swap` not yet renamed.
    expect(steps.filter((s) => s.phase === 'old-to-deleted').length).toBeGreaterThan(1);
    expect(steps.filter((s) => s.phase === 'swap-to-final').length).toBeGreaterThan(1);

    const mismatches: string[] = [];
    let interrupted = 0;
    const states = new Set<string>();
    for (let k = 0; k < steps.length; k++) {
      const step = `step ${k} (${steps[k]!.phase}${steps[k]!.file ? ` ${path.basename(steps[k]!.file!)}` : ''})`;
      const dir = path.join(root, `k${k}`, 'swapr-0');
      copyDir(template, dir);
      await compactStoppingAt(dir, k);
      const names = fs.readdirSync(dir);
      if (names.some((n) => n.endsWith('.swap')) && names.some((n) => n.endsWith('.deleted'))) interrupted++;
      const before = fingerprint(dir);
      // A directory fsync or a checkpoint in the parent leaves the same partition state: test it once.
      const state = JSON.stringify(before);
      if (states.has(state)) continue;
      states.add(state);
      const expected = await loaderView(dir, path.join(root, `k${k}-loaded`, 'swapr-0'));

      // Each command's own handler, in-process (runCli): about 150 child processes would cost a
      // minute of suite time; the CLI's process-level paths are tested elsewhere.
      const read = await cliInProcess('read', dir, '--json');
      const verify = await cliInProcess('verify', dir, '--json');
      const segments = await cliInProcess('segments', dir, '--json');
      const consume = await cliInProcess('consume', dir, '--group', 'g', '--json');
      const positions = await cliInProcess('positions', dir, '--json');
      const after = fingerprint(dir);
      for (const f of [CONSUMER_OFFSETS_CHECKPOINT, CONSUMER_OFFSETS_LOCK]) delete after[f];
      expect(after, `${step}: a reader changed files`).toEqual(before);

      // exit 3 (refusal) is allowed; exit 0 must mean the complete set.
      if (read.code === 0) {
        const got = json(read.stdout).map(recordOf);
        if (JSON.stringify(got) !== JSON.stringify(expected.records)) mismatches.push(`${step}: read showed ${got.length} records, the loader keeps ${expected.records.length}`);
      } else if (read.code !== 3) mismatches.push(`${step}: read exit ${read.code}: ${read.stderr}`);
      if (verify.code === 0) {
        const v = json(verify.stdout)[0]!;
        if (v.logEndOffset !== expected.logEndOffset || v.segments !== expected.segments.length) {
          mismatches.push(`${step}: verify ok with ${v.segments as number} segments up to ${v.logEndOffset as number}; the loader keeps ${expected.segments.length} up to ${expected.logEndOffset}`);
        }
      } else if (verify.code !== 3) mismatches.push(`${step}: verify exit ${verify.code}: ${verify.stderr}`);
      if (segments.code === 0) {
        const rows = json(segments.stdout).filter((o) => o.summary !== true);
        const got = rows.map((o) => [o.baseOffset, o.sizeBytes]);
        if (JSON.stringify(got) !== JSON.stringify(expected.segments)) mismatches.push(`${step}: segments listed ${JSON.stringify(got)}, the loader keeps ${JSON.stringify(expected.segments)}`);
      } else if (segments.code !== 3) mismatches.push(`${step}: segments exit ${segments.code}: ${segments.stderr}`);
      if (consume.code === 0) {
        const got = json(consume.stdout).map(recordOf);
        if (JSON.stringify(got) !== JSON.stringify(expected.records)) mismatches.push(`${step}: consume delivered ${got.length} records, the loader keeps ${expected.records.length}`);
        const p = json(positions.stdout);
        if (positions.code !== 0 || p.length !== 1 || p[0]!.position !== expected.logEndOffset || p[0]!.logEndOffset !== expected.logEndOffset) {
          mismatches.push(`${step}: after consume, positions says ${positions.stdout.trim()} (exit ${positions.code}); the loader's log end offset is ${expected.logEndOffset}`);
        }
      } else if (consume.code === 3) {
        // A refusal commits nothing.
        if (fs.existsSync(path.join(dir, CONSUMER_OFFSETS_CHECKPOINT))) mismatches.push(`${step}: consume refused but committed a position`);
      } else mismatches.push(`${step}: consume exit ${consume.code}: ${consume.stderr}`);
    }
    expect(interrupted, 'states with both .swap and .deleted files were reached').toBeGreaterThan(0);
    expect(states.size).toBeGreaterThan(steps.length / 2);
    expect(mismatches).toEqual([]);
  }, 600_000);
});
