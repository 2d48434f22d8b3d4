/**
 * `logtool recover` and `logtool rebuild-index` as a user runs them: the built CLI
 * (`node dist/cli.js`) in a child process.
 *
 *  - exit codes: 0 already consistent, 3 repaired (or would be with --dry-run), 1 failure
 *    (missing directory, lock held by another process), 2 usage;
 *  - --dry-run changes nothing (every file of the log dir hashed before and after) yet reports
 *    exactly what the real run then does;
 *  - lost+found/ holds exactly the cut bytes and the dropped files; --discard deletes them;
 *  - --json prints one object with the report's fields;
 *  - rebuild-index writes the same indexes the append path wrote, leaves no .tmp files, and
 *    --verify exits 0 on identical files and 3 on missing ones.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { cliSync } from '../helpers/cli.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log, type LogConfig } from '../../src/api.js';
import { DirectoryLock } from '../../src/engine/log/lock.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { ensureBuilt } from '../helpers/build.js';


beforeAll(() => {
  ensureBuilt();
}, 120_000);
afterAll(removeTempDirs);

const cli = cliSync;

const T0 = 1_700_000_000_000;
const config: Partial<LogConfig> = { flushMode: 'async', segmentBytes: 800, indexIntervalBytes: 100 };

async function makeLog(count: number): Promise<{ dir: string; logDir: string }> {
  const logDir = makeTempDir('logtool-cli-');
  const dir = path.join(logDir, 'orders-0');
  const log = Log.open(dir, { config });
  for (let i = 0; i < count; i++) await log.append([{ key: Buffer.from(`k${i}`), value: Buffer.from(`value ${i} ${'#'.repeat(60)}`), timestamp: T0 + i }]);
  await log.close();
  return { dir, logDir };
}

function hashTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const n of fs.readdirSync(d)) {
      const p = path.join(d, n);
      if (fs.statSync(p).isDirectory()) walk(p);
      else out[path.relative(root, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(root);
  return out;
}

const logFiles = (dir: string) => fs.readdirSync(dir).filter((n) => /^\d{20}\.log$/.test(n)).sort();

/** Crash-like damage: no marker, recovery point 0, a torn batch at the end of the second segment. */
function damage(dir: string, logDir: string): { file: string; keep: number; cut: Buffer; later: Map<string, Buffer> } {
  fs.rmSync(path.join(logDir, '.kafka_cleanshutdown'));
  fs.writeFileSync(path.join(logDir, 'recovery-point-offset-checkpoint'), '0\n1\norders 0 0\n');
  const segs = logFiles(dir);
  const file = path.join(dir, segs[1]!);
  const bytes = fs.readFileSync(file);
  const keep = bytes.readInt32BE(8) + 12; // the first batch stays
  const torn = Buffer.concat([bytes.subarray(0, keep), bytes.subarray(keep, keep + 30)]);
  fs.writeFileSync(file, torn);
  const later = new Map<string, Buffer>();
  for (const s of segs.slice(2)) for (const suffix of ['.log', '.index', '.timeindex']) {
    const f = path.join(dir, s.replace('.log', suffix));
    later.set(path.basename(f), fs.readFileSync(f));
  }
  return { file, keep, cut: torn.subarray(keep), later };
}

describe('logtool recover', () => {
  it('exits 0 and says so when the log is already consistent', async () => {
    const { dir } = await makeLog(20);
    const r = cli('recover', dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/clean shutdown/);
    // Sealed segments were trusted, not checked: the report says so (issue 9 item 19); --full checks all.
    expect(r.stdout).toMatch(/not checked .* trusted after a clean shutdown/);
    expect(cli('recover', dir, '--full').stdout).toMatch(/already consistent/);
    const full = cli('recover', dir, '--full', '--json');
    expect(full.code).toBe(0);
    const rep = JSON.parse(full.stdout);
    expect(rep.segmentsScanned).toBe(logFiles(dir).length);
    expect(rep.batchesValidated).toBe(20);
    expect(rep.status).toBe('consistent');
  });

  it('--dry-run changes nothing and reports exactly what the real run then does (exit 3 both)', async () => {
    const { dir, logDir } = await makeLog(30);
    const d = damage(dir, logDir);
    const before = hashTree(logDir);
    const dry = cli('recover', dir, '--dry-run', '--json');
    expect(dry.code).toBe(3);
    expect(hashTree(logDir)).toEqual(before);
    const planned = JSON.parse(dry.stdout);
    expect(planned.dryRun).toBe(true);
    expect(planned.status).toBe('needs-repair');

    const human = cli('recover', dir, '--dry-run');
    expect(human.code).toBe(3);
    expect(human.stdout).toMatch(/would truncate/);
    expect(human.stdout).toContain(`${path.basename(d.file)} at byte ${d.keep}: ${d.cut.length} bytes cut`);
    expect(hashTree(logDir)).toEqual(before);

    const real = cli('recover', dir, '--json');
    expect(real.code).toBe(3);
    const done = JSON.parse(real.stdout);
    // The one-object JSON shape.
    for (const k of ['dir', 'dryRun', 'markerFound', 'cleanShutdown', 'recoveryPoint', 'logStartOffset', 'logEndOffset', 'segments', 'segmentsScanned', 'batchesValidated', 'bytesValidated', 'indexesRebuilt', 'indexProblems', 'truncated', 'bytesTruncated', 'segmentsDropped', 'tempFilesRemoved', 'swapsCompleted', 'checkpointProblems', 'repaired', 'status', 'warnings']) {
      expect(done, k).toHaveProperty(k);
    }
    expect(done.status).toBe('repaired');
    const strip = (x: typeof done) => ({
      ...x,
      dryRun: undefined,
      status: undefined,
      warnings: undefined,
      truncated: x.truncated.map((t: { savedTo?: string }) => ({ ...t, savedTo: path.dirname(t.savedTo!) })),
      segmentsDropped: x.segmentsDropped.map((t: { savedTo?: string }) => ({ ...t, savedTo: path.dirname(t.savedTo!) })),
    });
    expect(strip(planned)).toEqual(strip(done));

    // lost+found holds exactly what was cut and dropped.
    expect(done.truncated).toEqual([expect.objectContaining({ file: d.file, position: d.keep, bytes: d.cut.length })]);
    expect(fs.readFileSync(done.truncated[0].savedTo)).toEqual(d.cut);
    expect(fs.statSync(d.file).size).toBe(d.keep);
    expect(done.segmentsDropped.length).toBe(d.later.size);
    for (const x of done.segmentsDropped as { file: string; savedTo: string; bytes: number }[]) {
      expect(path.dirname(x.savedTo)).toBe(path.join(dir, 'lost+found'));
      expect(fs.readFileSync(x.savedTo)).toEqual(d.later.get(path.basename(x.file)));
      expect(fs.existsSync(x.file)).toBe(false);
    }
    // Recovered and closed: the next run finds nothing to do, even validating everything.
    expect(cli('recover', dir, '--full').code).toBe(0);
  });

  it('--discard deletes what is cut off instead of keeping it', async () => {
    const { dir, logDir } = await makeLog(30);
    damage(dir, logDir);
    const r = cli('recover', dir, '--discard');
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/discarded/);
    expect(fs.existsSync(path.join(dir, 'lost+found'))).toBe(false);
  });

  it('exits 1 on failure (no such directory, lock held by another process) and 2 on a usage error', async () => {
    const missing = cli('recover', path.join(makeTempDir(), 'nope-0'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/error:.*nope-0/);
    const { dir } = await makeLog(3);
    const lock = DirectoryLock.acquire(dir);
    try {
      const locked = cli('recover', dir);
      expect(locked.code).toBe(1);
      expect(locked.stderr).toMatch(/lock/);
      expect(cli('recover', dir, '--dry-run').code).toBe(1);
    } finally {
      lock.release();
    }
    expect(cli('recover', dir, '--no-such-flag').code).toBe(2);
  });

  it('--help shows examples', () => {
    const r = cli('recover', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Examples:\n\s+logtool recover/);
    expect(r.stdout).toMatch(/--dry-run/);
  });
});

describe('logtool rebuild-index', () => {
  it('rebuilds missing indexes identical to those the append path wrote, via .tmp files', async () => {
    const { dir } = await makeLog(30);
    const indexes = fs.readdirSync(dir).filter((n) => /\.(index|timeindex)$/.test(n));
    const original = new Map(indexes.map((n) => [n, fs.readFileSync(path.join(dir, n))]));
    for (const n of indexes) fs.rmSync(path.join(dir, n));
    const verify = cli('rebuild-index', dir, '--verify', '--json');
    expect(verify.code).toBe(3);
    const v = JSON.parse(verify.stdout);
    expect(v.segments.every((s: { verdict: string }) => s.verdict === 'missing')).toBe(true);

    const r = cli('rebuild-index', dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/rebuilt/);
    for (const [n, content] of original) expect(fs.readFileSync(path.join(dir, n)), n).toEqual(content);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    const again = cli('rebuild-index', dir, '--verify', '--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).segments.every((s: { verdict: string }) => s.verdict === 'identical')).toBe(true);
  });

  it('takes one segment, reports an invalid tail (exit 3) without changing the .log', async () => {
    const { dir } = await makeLog(30);
    const seg = path.join(dir, logFiles(dir)[0]!);
    fs.appendFileSync(seg, Buffer.from('trailing garbage that is not a batch'));
    const before = fs.readFileSync(seg);
    const r = cli('rebuild-index', seg);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/run logtool recover/);
    expect(fs.readFileSync(seg)).toEqual(before);
    expect(cli('rebuild-index', path.join(dir, 'logtool.properties')).code).toBe(2); // not a segment file
    expect(cli('rebuild-index', path.join(dir, 'nope.log')).code).toBe(1); // no such file
  });

  it('--help shows examples', () => {
    const r = cli('rebuild-index', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Examples:\n\s+logtool rebuild-index/);
  });
});
