/**
 * A partition's `.index` and `.timeindex` files as Kafka's recovery rebuilds them from the `.log`
 * (LogSegment.recover), computed in a copy of the directory so that the originals stay untouched:
 * for tests that compare what appends wrote with the rebuild, byte for byte (test helper).
 */
import fs from 'node:fs';
import path from 'node:path';
import { realIO } from '../../src/engine/io.js';
import { LogSegment, segmentFileName } from '../../src/engine/segment/segment.js';
import { makeTempDir } from './fixtures.js';

export interface RebuiltIndexes {
  index: Buffer;
  timeindex: Buffer;
}

/** The rebuilt index files of the segments at `baseOffsets` of the partition in `dir`. */
export function rebuiltIndexes(dir: string, baseOffsets: readonly number[], indexIntervalBytes: number, maxIndexBytes: number): Map<number, RebuiltIndexes> {
  const copy = path.join(makeTempDir(), path.basename(dir));
  fs.cpSync(dir, copy, { recursive: true });
  const out = new Map<number, RebuiltIndexes>();
  for (const baseOffset of baseOffsets) {
    const seg = new LogSegment({ io: realIO, dir: copy, baseOffset, indexIntervalBytes, maxIndexBytes, writable: true });
    seg.recover();
    seg.close();
    const read = (suffix: string) => fs.readFileSync(path.join(copy, segmentFileName(baseOffset, suffix)));
    out.set(baseOffset, { index: read('.index'), timeindex: read('.timeindex') });
  }
  return out;
}
