/**
 * A rolled segment's index files exist as soon as its `.log` does (Kafka's LogSegment.open makes
 * all three together): `verify` beside a live writer reports a `.log` without its `.index` as
 * damage, and the roll used to leave that gap open across its directory fsync and producer
 * snapshot (about 10 ms), which a reader met now and then.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/engine/log/log.js';
import { nativeIO, withIO, type FileIO } from '../../src/engine/io.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

describe('a segment roll', () => {
  it('never syncs or writes anything while a new .log lacks its .index or .timeindex', async () => {
    const dir = path.join(makeTempDir('logtool-roll-'), 'roll-0');
    const gaps: string[] = [];
    let checks = 0;
    const check = (what: string): void => {
      if (!nativeIO.stat(dir)) return;
      checks++;
      const names = new Set(nativeIO.readdir(dir));
      for (const n of names) {
        if (!n.endsWith('.log')) continue;
        const base = n.slice(0, -'.log'.length);
        if (!names.has(`${base}.index`) || !names.has(`${base}.timeindex`)) gaps.push(`${what}: ${n} without its index files`);
      }
    };
    const io: FileIO = {
      ...nativeIO,
      write: (fd, buf, offset, length, position) => {
        check('write');
        return nativeIO.write(fd, buf, offset, length, position);
      },
      datasync: (fd) => {
        check('datasync');
        nativeIO.datasync(fd);
      },
      syncDir: (p) => {
        check('syncDir');
        nativeIO.syncDir(p);
      },
    };
    await withIO(io, async () => {
      const log = Log.open(dir, { config: { flushMode: 'async', segmentBytes: 64 * 1024 }, rememberConfig: false });
      for (let b = 0; b < 8; b++) await log.append([{ key: null, value: Buffer.alloc(20_000, b) }]);
      expect(log.segments.length).toBeGreaterThanOrEqual(3);
      await log.close();
    });
    expect(checks).toBeGreaterThan(8);
    expect(gaps).toEqual([]);
  });
});
