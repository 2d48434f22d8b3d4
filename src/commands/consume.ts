/**
 * `logtool consume <dir> --group G`: prints the records after the group's committed position
 * (same line formats as `read`), then commits the position after them in
 * `<dir>/consumer-offsets-checkpoint` (consumer-positions.ts).
 *
 * Commit rule (at-least-once): the position is committed only once every printed line was handed
 * to stdout and stdout is still open. If the reader of a pipe goes away early (`| head`), nothing
 * is committed: logtool cannot know how many of the lines written to the pipe were actually read,
 * so the next consume prints them again rather than lose them. Use --max-records to consume in
 * steps through such pipes.
 *
 * `logtool positions <dir>`: every group with its position and lag (log end offset − position).
 *
 * Both open the log read-only (no writer lock): they work next to a writer in another process.
 */
import { Command } from 'commander';
import { ConsumerPositions, validateGroupName } from '../engine/consumer-positions.js';
import { LogtoolError } from '../engine/errors.js';
import { Output, colours, warn } from '../render/output.js';
import { renderTable } from '../render/table.js';
import { recordJson, recordText } from './read.js';
import { openLog, parseEncoding, parseInteger, type WarningCounter } from './shared.js';

interface ConsumeOpts {
  group?: string;
  maxRecords?: number;
  json?: boolean;
  encoding: string;
  commit: boolean;
}

export function consumeCommand(): Command {
  return new Command('consume')
    .description("print the records after a consumer group's committed position, then commit the position after them")
    .argument('<dir>', 'partition directory')
    .option('-g, --group <group>', 'consumer group (printable ASCII, no spaces)')
    .option('-n, --max-records <n>', 'print at most this many records', parseInteger('--max-records', 1))
    .option('--json', 'one JSON object per line, as `read --json`')
    .option('--encoding <enc>', 'keys, values and header values as utf8, base64 or hex', 'utf8')
    .option('--no-commit', 'print only; leave the committed position where it is')
    .addHelpText(
      'after',
      `
A group that never committed starts at the log start offset; a position below it (records deleted
by retention) restarts there. The position is committed only when all printed lines reached stdout:
if the reader of a pipe exits early, nothing is committed and the records are printed again next
time (at-least-once). Positions live in <dir>/consumer-offsets-checkpoint (Kafka checkpoint format).

Examples:
  logtool consume logdata/orders-0 --group billing
  logtool consume logdata/orders-0 --group billing --max-records 100 --json
  logtool positions logdata/orders-0`,
    )
    .action(async (dir: string, opts: ConsumeOpts) => {
      if (opts.group === undefined) throw new LogtoolError('usage', '--group is required');
      validateGroupName(opts.group);
      const encoding = parseEncoding(opts.encoding);
      const out = new Output();
      const counter: WarningCounter = { count: 0 };
      const log = openLog(dir, { readOnly: true }, counter);
      const c = colours();
      const stats = { nonUtf8: 0 };
      try {
        const positions = new ConsumerPositions(log);
        const end = positions.logEndOffset();
        const resume = positions.resumePosition(opts.group);
        const from = resume.offset;
        let stored = resume.stored;
        if (resume.moved === 'below-start') {
          warn(`group ${opts.group} was at ${stored}, below the log start offset ${from} (records deleted); continuing from ${from}`);
        } else if (resume.moved === 'beyond-end') {
          // The log lost records after the group read them (a lost tail was recovered). Move the group
          // back to the end, as the channel does, so the records appended next at these offsets reach it.
          if (opts.commit) {
            positions.commit(opts.group, from, { force: true });
            stored = from;
          }
          warn(`group ${opts.group} was at ${resume.stored}, beyond the log end offset ${end} (records after ${end} were lost); ${opts.commit ? 'moved it back' : 'reading from'} ${end}`);
        }
        let next = from;
        let printed = 0;
        for (const r of log.read({ fromOffset: from, maxRecords: opts.maxRecords })) {
          if (out.closed) break;
          if (opts.json) await out.json(recordJson(r, encoding, stats));
          else await out.line(recordText(r, encoding, stats, c));
          next = r.offset + 1;
          printed++;
        }
        // Read to the end without a warning: control records past the last data record are consumed too.
        if ((opts.maxRecords === undefined || printed < opts.maxRecords) && counter.count === 0) next = Math.max(next, end);
        await out.flush();
        const written = await stdoutWritten();
        if (!opts.commit || out.closed || !written) return;
        if (stored === undefined ? next > from || printed > 0 : next > stored) positions.commit(opts.group, next);
      } finally {
        await log.close();
        if (stats.nonUtf8 > 0 && !opts.json) warn(`${stats.nonUtf8} keys/values were not valid UTF-8 and are shown with \\xNN escapes; use --encoding base64 or hex for exact bytes`);
        if (counter.count > 0) process.exitCode = 3;
      }
    });
}

export function positionsCommand(): Command {
  return new Command('positions')
    .description('list the consumer groups of a partition directory with their committed positions and lag')
    .argument('<dir>', 'partition directory')
    .option('--json', 'one JSON object per group: {"group","position","logStartOffset","logEndOffset","lag"}')
    .addHelpText('after', '\nLag is the log end offset minus the position (records not yet consumed).\n\nExamples:\n  logtool positions logdata/orders-0\n  logtool positions logdata/orders-0 --json')
    .action(async (dir: string, opts: { json?: boolean }) => {
      const out = new Output();
      const counter: WarningCounter = { count: 0 };
      const log = openLog(dir, { readOnly: true }, counter);
      try {
        const positions = new ConsumerPositions(log);
        const end = positions.logEndOffset();
        const rows = positions.list().map((p) => ({ group: p.group, position: p.offset, logStartOffset: log.logStartOffset, logEndOffset: end, lag: Math.max(0, end - p.offset) }));
        if (opts.json) for (const r of rows) await out.json(r);
        else if (rows.length === 0) warn(`no consumer group has committed a position in ${dir}`);
        else await out.line(renderTable(['group', 'position', 'log end offset', 'lag'], rows.map((r) => [r.group, r.position, r.logEndOffset, r.lag]), out.isTTY));
      } finally {
        await out.flush();
        await log.close();
      }
      if (counter.count > 0) process.exitCode = 3;
    });
}

/** Resolves once what was written to stdout left the process: true, or false if stdout failed (EPIPE). */
function stdoutWritten(): Promise<boolean> {
  return new Promise((resolve) => {
    if (process.stdout.destroyed || !process.stdout.writable) return resolve(false);
    process.stdout.write('', (err) => resolve(!err));
  });
}

