/**
 * `logtool segments <dir>`: one row per segment — base offset, size, offsets, timestamps, index
 * entries — then the leader epochs of leader-epoch-checkpoint (kafka-format.md §12.3) and the
 * offsets each covers.
 */
import path from 'node:path';
import { Command } from 'commander';
import { Output, warn } from '../render/output.js';
import { renderTable } from '../render/table.js';
import { formatTimestamp, timestampJson } from '../render/timestamp.js';
import type { Timestamp } from '../api/format.js';
import { openLog, type WarningCounter } from './shared.js';
import { LogtoolError } from '../api/format.js';
import { LEADER_EPOCH_CHECKPOINT, readLeaderEpochCheckpoint, type Log } from '../api/log.js';
import { leaderEpochRanges } from '../inspect/log.js';

/** The epoch ranges of leader-epoch-checkpoint (none without one); a malformed file is a warning (exit 3). */
function epochRanges(log: Log, counter: WarningCounter): ReturnType<typeof leaderEpochRanges> | null {
  try {
    return leaderEpochRanges(readLeaderEpochCheckpoint(log.io, path.join(log.dir, LEADER_EPOCH_CHECKPOINT)), log.nextOffset);
  } catch (e) {
    if (!(e instanceof LogtoolError) || e.kind !== 'corrupt') throw e;
    counter.count++;
    warn(e.describe());
    return null;
  }
}

export function segmentsCommand(): Command {
  return new Command('segments')
    .description('list the segments of a partition directory with their offsets, timestamps and sizes')
    .argument('<dir>', 'partition directory')
    .option('--json', 'one JSON object per segment, plus a summary line')
    .addHelpText('after', '\nExamples:\n  logtool segments logdata/demo-0\n  logtool segments /var/lib/kafka/orders-3 --json | jq .sizeBytes')
    .action(async (dir: string, opts: { json?: boolean }) => {
      const out = new Output();
      const counter: WarningCounter = { count: 0 };
      const log = openLog(dir, { readOnly: true }, counter);
      try {
        const infos = log.segmentInfos();
        const epochs = epochRanges(log, counter);
        if (opts.json) {
          for (const s of infos) {
            const exact = (t: Timestamp | undefined) => (t === undefined ? undefined : timestampJson(t));
            await out.json({ ...s, firstTimestamp: exact(s.firstTimestamp), maxTimestamp: exact(s.maxTimestamp) });
          }
          await out.json({ summary: true, segments: infos.length, logStartOffset: log.logStartOffset, logEndOffset: log.nextOffset, sizeBytes: infos.reduce((n, s) => n + s.sizeBytes, 0), leaderEpochs: epochs });
        } else {
          const ts = (t: Timestamp | undefined) => (t === undefined || t < 0 ? '-' : formatTimestamp(t));
          const rows = infos.map((s) => [s.baseOffset, s.sizeBytes, s.firstOffset ?? '-', s.lastOffset ?? '-', ts(s.firstTimestamp), ts(s.maxTimestamp), s.indexEntries, s.timeIndexEntries]);
          await out.line(renderTable(['base offset', 'bytes', 'first offset', 'last offset', 'first timestamp', 'max timestamp', 'index', 'timeindex'], rows, out.isTTY));
          await out.line(`log start offset ${log.logStartOffset}, log end offset ${log.nextOffset}, ${infos.length} segment(s)`);
          if (epochs && epochs.length > 0) await out.line(renderTable(['leader epoch', 'start offset', 'end offset (exclusive)'], epochs.map((e) => [e.epoch, e.startOffset, e.endOffset]), out.isTTY));
        }
      } finally {
        await out.flush();
        await log.close();
      }
      if (counter.count > 0) process.exitCode = 3;
    });
}
