/** `logtool segments <dir>`: one row per segment — base offset, size, offsets, timestamps, index entries. */
import { Command } from 'commander';
import { Output } from '../render/output.js';
import { renderTable } from '../render/table.js';
import { formatTimestamp, timestampJson } from '../render/timestamp.js';
import type { Timestamp } from '../api/format.js';
import { openLog, type WarningCounter } from './shared.js';

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
        if (opts.json) {
          for (const s of infos) {
            const exact = (t: Timestamp | undefined) => (t === undefined ? undefined : timestampJson(t));
            await out.json({ ...s, firstTimestamp: exact(s.firstTimestamp), maxTimestamp: exact(s.maxTimestamp) });
          }
          await out.json({ summary: true, segments: infos.length, logStartOffset: log.logStartOffset, logEndOffset: log.nextOffset, sizeBytes: infos.reduce((n, s) => n + s.sizeBytes, 0) });
        } else {
          const ts = (t: Timestamp | undefined) => (t === undefined || t < 0 ? '-' : formatTimestamp(t));
          const rows = infos.map((s) => [s.baseOffset, s.sizeBytes, s.firstOffset ?? '-', s.lastOffset ?? '-', ts(s.firstTimestamp), ts(s.maxTimestamp), s.indexEntries, s.timeIndexEntries]);
          await out.line(renderTable(['base offset', 'bytes', 'first offset', 'last offset', 'first timestamp', 'max timestamp', 'index', 'timeindex'], rows, out.isTTY));
          await out.line(`log start offset ${log.logStartOffset}, log end offset ${log.nextOffset}, ${infos.length} segment(s)`);
        }
      } finally {
        await out.flush();
        await log.close();
      }
      if (counter.count > 0) process.exitCode = 3;
    });
}
