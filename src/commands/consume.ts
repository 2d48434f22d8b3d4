/**
 * `logtool consume <dir> --group G`: prints the records after the group's committed position
 * (same line formats as `read`), then commits the position after them in
 * `<dir>/consumer-offsets-checkpoint` (consumer-positions.ts).
 *
 * Commit rule (at-least-once). Printing to stdout, the position is committed once every line was
 * handed to stdout without a write error; that proves nothing about what a pipe's reader consumed
 * (a `| head` that exits after its line still lets every earlier write succeed). With --exec CMD the
 * acknowledgement is real: CMD runs through `sh -c` once per batch of at most --exec-records records
 * (the lines `consume` prints, on its stdin); a batch is committed only when CMD exits 0, and the
 * first failure stops consume with CMD's exit code (128+n for signal n).
 *
 * `logtool positions <dir>`: every group with its position and lag (log end offset − position).
 *
 * Both open the log read-only (no writer lock): they work next to a writer in another process.
 * consume reads as a read_committed Kafka consumer (partition-state/isolation.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { Chalk } from 'chalk';
import { Command } from 'commander';
import { ConsumerPositions } from '../api/queue.js';
import { validateGroupName } from '../inspect/queue.js';
import { LogtoolError, type LogRecord } from '../api/format.js';
import { Output, colours, warn } from '../render/output.js';
import { renderTable } from '../render/table.js';
import { recordJsonLine, recordText } from './read.js';
import { committedView } from '../inspect/log.js';
import { openLog, parseEncoding, parseInteger, type WarningCounter } from './shared.js';

interface ConsumeOpts {
  group?: string;
  maxRecords?: number;
  json?: boolean;
  encoding: string;
  commit: boolean;
  exec?: string;
  execRecords?: number;
}

/** Records per --exec batch unless --exec-records says otherwise. */
const DEFAULT_EXEC_RECORDS = 500;

export function consumeCommand(): Command {
  return new Command('consume')
    .description("print the records after a consumer group's committed position, then commit the position after them")
    .argument('<dir>', 'partition directory')
    .option('-g, --group <group>', 'consumer group (printable ASCII, no spaces)')
    .option('-n, --max-records <n>', 'print at most this many records', parseInteger('--max-records', 1))
    .option('--json', 'one JSON object per line, as `read --json`')
    .option('--encoding <enc>', 'keys, values and header values as utf8, base64 or hex', 'utf8')
    .option('--no-commit', 'print only; leave the committed position where it is')
    .option('--exec <cmd>', 'run CMD with `sh -c` once per batch, the records on its stdin (the lines consume prints); commit a batch only if CMD exits 0, stop at the first failure with its exit code')
    .option('--exec-records <n>', `records per --exec batch (default ${DEFAULT_EXEC_RECORDS}; --max-records stays the total)`, parseInteger('--exec-records', 1))
    .addHelpText(
      'after',
      `
A group that never committed starts at the log start offset; a position below it (records deleted
by retention) restarts there, and one beyond the log end (a lost tail was recovered) moves back to
the end. Positions live in <dir>/consumer-offsets-checkpoint (Kafka checkpoint format).

Without --exec the position is committed once every line was written to stdout. No program can know
what the reader of a pipe consumed (\`consume | head\` may commit records head never read): for a
real acknowledgement use --exec CMD, which runs CMD through sh -c once per batch of at most
--exec-records (500) records, on its stdin, and commits a batch only when CMD exits 0. At the first
failure consume stops with CMD's exit code (128+n if signal n killed it); the batch is delivered again
next time (at-least-once).

Examples:
  logtool consume logdata/orders-0 --group billing
  logtool consume logdata/orders-0 --group billing --max-records 100 --json
  logtool consume logdata/orders-0 --group billing --json --exec 'curl -sf --data-binary @- http://sink/bulk'
  logtool positions logdata/orders-0`,
    )
    .action(async (dir: string, opts: ConsumeOpts) => {
      if (opts.group === undefined) throw new LogtoolError('usage', '--group is required');
      validateGroupName(opts.group);
      if (opts.execRecords !== undefined && opts.exec === undefined) throw new LogtoolError('usage', '--exec-records needs --exec');
      opts.execRecords ??= DEFAULT_EXEC_RECORDS;
      const encoding = parseEncoding(opts.encoding);
      const out = new Output();
      const counter: WarningCounter = { count: 0 };
      const log = openLog(dir, { readOnly: true }, counter);
      // Lines for a CMD carry no colour codes, FORCE_COLOR or not: CMD is a program reading data.
      const c = opts.exec !== undefined ? new Chalk({ level: 0 }) : colours();
      const stats = { nonUtf8: 0 };
      let execFailed = false;
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
        // Commits only forward (a concurrent consumer of the group may be ahead: that is its commit).
        const commitUpTo = (offset: number): void => {
          if (!opts.commit || offset <= (stored ?? from)) return;
          positions.commit(opts.group!, offset);
          stored = offset;
        };
        const format = (r: LogRecord): string => (opts.json ? recordJsonLine(r, encoding, stats) : recordText(r, encoding, stats, c));
        let next = from;
        let printed = 0;
        // Read to the end without a warning: control records past the last data record are consumed too
        // — up to the last stable offset (read_committed), so an open transaction is read once committed.
        const view = committedView(log, from); // one producer-state scan, shared with the reads below
        const stableEnd = view.upperBound;
        const readToEnd = (): number => ((opts.maxRecords === undefined || printed < opts.maxRecords) && counter.count === 0 ? Math.max(next, stableEnd) : next);
        if (opts.exec !== undefined) {
          // One CMD per batch of at most --exec-records; its exit status 0 is the acknowledgement.
          let batch: ExecBatch | undefined;
          const finishBatch = async (): Promise<boolean> => {
            const b = batch!;
            batch = undefined;
            const status = await b.finish();
            if (status.code === 0) {
              commitUpTo(next);
              return true;
            }
            execFailed = true;
            process.exitCode = status.code;
            warn(`--exec command ${status.signal ? `was killed by ${status.signal}` : `exited with ${status.code}`} on records ${b.firstOffset}..${next - 1}; not committed, group ${opts.group} stays at ${stored ?? from}`);
            return false;
          };
          for (const r of log.read({ fromOffset: from, maxRecords: opts.maxRecords, isolationLevel: 'read_committed', committedView: view })) {
            batch ??= new ExecBatch(opts.exec, r.offset);
            await batch.out.line(format(r));
            batch.count++;
            next = r.offset + 1;
            printed++;
            // A CMD that closed its input early has taken what it wanted: its exit status decides.
            if ((batch.count >= opts.execRecords || batch.out.closed) && !(await finishBatch())) return;
          }
          if (batch && !(await finishBatch())) return;
          commitUpTo(readToEnd());
          return;
        }
        for (const r of log.read({ fromOffset: from, maxRecords: opts.maxRecords, isolationLevel: 'read_committed', committedView: view })) {
          if (out.closed) break;
          await out.line(format(r));
          next = r.offset + 1;
          printed++;
        }
        next = readToEnd();
        await out.flush();
        // What a pipe's reader consumed is unknowable: this only avoids committing after a write failed.
        const written = await stdoutWritten();
        if (out.closed || !written) return;
        commitUpTo(next);
      } finally {
        await log.close();
        if (stats.nonUtf8 > 0 && !opts.json) warn(`${stats.nonUtf8} keys/values were not valid UTF-8 and are shown with \\xNN escapes; use --encoding base64 or hex for exact bytes`);
        if (counter.count > 0 && !execFailed) process.exitCode = 3;
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


/** One run of the --exec command: `sh -c CMD` with the batch's lines on its stdin. */
class ExecBatch {
  readonly out: Output;
  count = 0;
  private readonly child: ChildProcess;
  private readonly exited: Promise<{ code: number; signal?: string }>;

  constructor(
    command: string,
    readonly firstOffset: number,
  ) {
    this.child = spawn('sh', ['-c', command], { stdio: ['pipe', 'inherit', 'inherit'] });
    this.exited = new Promise((resolve, reject) => {
      this.child.once('error', (e: NodeJS.ErrnoException) => reject(new LogtoolError('io', `cannot run the --exec command with sh: ${e.code ?? e.message}`)));
      this.child.once('close', (code, signal) =>
        resolve(signal ? { code: 128 + (os.constants.signals[signal] ?? 0), signal } : { code: code ?? 1 }),
      );
    });
    this.exited.catch(() => undefined); // awaited in finish()
    this.out = new Output(this.child.stdin as unknown as NodeJS.WriteStream);
  }

  /** Ends CMD's input; resolves with its exit status (128+n when signal n killed it). */
  async finish(): Promise<{ code: number; signal?: string }> {
    await this.out.flush();
    this.child.stdin!.end();
    return this.exited;
  }
}
