/**
 * Large partitions and log directories, fast, for the descriptor-limit tests (issue 12): one
 * segment is written by the engine (Kafka's LogSegment layout: a one-record batch, its trimmed
 * `.index` and `.timeindex`), then copied under new base offsets with the batch's base offset
 * patched (the v2 CRC does not cover it), with a recovery-point checkpoint and a clean-shutdown
 * marker, so that opening trusts the segments as Kafka's loader does after a clean shutdown.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Log, segmentFileName } from '../../src/api.js';
import { makeTempDir } from './fixtures.js';

interface SegmentTemplate {
  log: Buffer;
  index: Buffer;
  timeindex: Buffer;
}

let template: SegmentTemplate | undefined;

/** A sealed segment holding one record, written by the engine (its middle segment of three). */
async function segmentTemplate(): Promise<SegmentTemplate> {
  if (template) return template;
  const dir = path.join(makeTempDir('logtool-segment-template-'), 't-0');
  const log = Log.open(dir, { config: { flushMode: 'sync' }, rememberConfig: false });
  for (let i = 0; i < 3; i++) {
    await log.append([{ key: Buffer.from('k'), value: Buffer.from(`record ${i}`), timestamp: 1_700_000_000_000 }]);
    if (i < 2) log.roll();
  }
  await log.close();
  const file = (s: string) => fs.readFileSync(path.join(dir, segmentFileName(1, s)));
  template = { log: file('.log'), index: file('.index'), timeindex: file('.timeindex') };
  return template;
}

/** Writes `count` one-record segments (offsets 0 … count−1) into the new partition directory `dir`. */
export async function writeManySegments(dir: string, count: number): Promise<void> {
  const t = await segmentTemplate();
  fs.mkdirSync(dir, { recursive: true });
  const log = Buffer.from(t.log);
  for (let base = 0; base < count; base++) {
    log.writeBigInt64BE(BigInt(base), 0);
    fs.writeFileSync(path.join(dir, segmentFileName(base, '.log')), log);
    fs.writeFileSync(path.join(dir, segmentFileName(base, '.index')), t.index);
    fs.writeFileSync(path.join(dir, segmentFileName(base, '.timeindex')), t.timeindex);
  }
}

/** Marks the log directory cleanly shut down with every partition recovered to `ends` (name → end offset). */
export function markCleanShutdown(logDir: string, ends: Map<string, number>): void {
  const lines = [...ends].map(([name, end]) => `${name.slice(0, name.lastIndexOf('-'))} ${name.slice(name.lastIndexOf('-') + 1)} ${end}`);
  fs.writeFileSync(path.join(logDir, 'recovery-point-offset-checkpoint'), `0\n${lines.length}\n${lines.join('\n')}\n`);
  fs.writeFileSync(path.join(logDir, '.kafka_cleanshutdown'), '');
}
