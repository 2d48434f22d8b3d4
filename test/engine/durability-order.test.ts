/**
 * Durability order and work left running (issue 9, items 15–17), observed through a FileIO that
 * records every fsync, rename and unlink by path over the real one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log, realIO, type FileIO } from '../../src/engine/index.js';
import { removeTempDirs, tempPartitionPath } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

/** Records `datasync <path>`, `syncdir <path>`, `rename <from> -> <to>`, `unlink <path>` in order. */
function recordingIO(events: string[], base: FileIO = realIO): FileIO {
  const paths = new Map<number, string>();
  const name = (fd: number) => paths.get(fd) ?? `fd${fd}`;
  return {
    ...base,
    open(p, flags) {
      const fd = base.open(p, flags);
      paths.set(fd, p);
      return fd;
    },
    close(fd) {
      paths.delete(fd);
      base.close(fd);
    },
    datasync(fd) {
      events.push(`datasync ${name(fd)}`);
      base.datasync(fd);
    },
    async datasyncAsync(fd) {
      const p = name(fd);
      await base.datasyncAsync(fd);
      events.push(`datasync ${p}`);
    },
    rename(from, to) {
      base.rename(from, to);
      events.push(`rename ${from} -> ${to}`);
    },
    unlink(p) {
      base.unlink(p);
      events.push(`unlink ${p}`);
    },
    syncDir(p) {
      base.syncDir(p);
      events.push(`syncdir ${p}`);
    },
  };
}

const rec = (i: number) => ({ key: Buffer.from(`k${i}`), value: Buffer.alloc(100, i), timestamp: 1_700_000_000_000 + i });

async function threeSegments(dir: string): Promise<void> {
  const log = Log.open(dir, { config: { segmentBytes: 600, indexIntervalBytes: 1 } });
  for (let i = 0; i < 12; i++) await log.append([rec(i)]);
  expect(log.segments.length).toBeGreaterThanOrEqual(3);
  await log.close();
}

describe('indexes rebuilt at open (item 15)', () => {
  it('are fsynced, and their renames made durable, before the recovery point or the marker move past them', async () => {
    const dir = tempPartitionPath('rebuilt-0');
    await threeSegments(dir);
    const logDir = path.dirname(dir);
    // An unclean shutdown: no marker, no recovery point: every segment is recovered at open.
    fs.rmSync(path.join(logDir, '.kafka_cleanshutdown'), { force: true });
    fs.rmSync(path.join(logDir, 'recovery-point-offset-checkpoint'), { force: true });
    const events: string[] = [];
    const log = Log.open(dir, { io: recordingIO(events) });
    const rebuilt = log.loadReport.indexesRebuilt;
    expect(rebuilt.length).toBeGreaterThanOrEqual(6);
    await log.close();
    const checkpoint = events.findIndex((e) => e.startsWith('rename') && e.endsWith(`-> ${path.join(logDir, 'recovery-point-offset-checkpoint')}`));
    const marker = events.findIndex((e) => e.startsWith('rename') && e.endsWith(`-> ${path.join(logDir, '.kafka_cleanshutdown')}`));
    expect(checkpoint).toBeGreaterThan(0);
    expect(marker).toBeGreaterThan(0);
    for (const file of rebuilt) {
      const renamed = events.lastIndexOf(`rename ${file}.tmp -> ${file}`);
      expect(renamed, file).toBeGreaterThanOrEqual(0);
      // The content: fsynced before the rename (the .tmp) or after it (the final name).
      const synced = events.findIndex((e, i) => (e === `datasync ${file}.tmp` && i < renamed) || (e === `datasync ${file}` && i > renamed));
      expect(synced, `${file} is never fsynced`).toBeGreaterThanOrEqual(0);
      expect(synced).toBeLessThan(checkpoint);
      // The rename: a directory fsync after it, before the checkpoint moves.
      const dirSynced = events.findIndex((e, i) => i > renamed && e === `syncdir ${dir}`);
      expect(dirSynced).toBeGreaterThan(renamed);
      expect(dirSynced).toBeLessThan(checkpoint);
    }
  });
});
