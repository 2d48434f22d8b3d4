/**
 * The CLI's own paths as a user runs them (issue 15), whole processes through real pipes, each
 * beside a baseline in the same run:
 * - `append --lines --flush async` and NDJSON `append --encoding base64` fed the records through a
 *   pipe, against a Node.js process that reads the same bytes from the same kind of pipe and
 *   writes them to a file (for NDJSON parsing each line and decoding its base64 on the way);
 * - `read --json` and plain `read` of the data set into a pipe, against a Node.js process that
 *   prints the same records from memory with one JSON.stringify each.
 * Input files are built once per run in the shared data directory. The wall time includes each
 * process's start-up on both sides.
 */
import fs from 'node:fs';
import path from 'node:path';
import { dataset, payload } from './datasets.js';
import { cliPath, runNode, type ProcessRun } from './processes.js';
import { singleRunResult, type BenchContext, type BenchScenario, type ScenarioResult } from './types.js';

const VALUE_BYTES = 100;

/** Reads stdin and writes what it gets to the file argv[1]. */
const RAW_PIPE_TO_FILE = `const fs = require('fs'); const fd = fs.openSync(process.argv[1], 'w'); let pos = 0;
process.stdin.on('data', (b) => { fs.writeSync(fd, b, 0, b.length, pos); pos += b.length; });
process.stdin.on('end', () => fs.closeSync(fd));`;

/** Reads NDJSON from stdin; JSON.parse of each line, base64 decode of "value", 64 KiB buffered writes to argv[1]. */
const RAW_NDJSON_TO_FILE = `const fs = require('fs'); const fd = fs.openSync(process.argv[1], 'w');
const chunk = Buffer.allocUnsafe(65536); let len = 0, pos = 0, rest = '';
const flush = () => { fs.writeSync(fd, chunk, 0, len, pos); pos += len; len = 0; };
const put = (b) => { if (len + b.length > chunk.length) flush(); b.copy(chunk, len); len += b.length; };
const line = (l) => { if (l) put(Buffer.from(JSON.parse(l).value, 'base64')); };
process.stdin.setEncoding('utf8');
process.stdin.on('data', (s) => { const lines = (rest + s).split('\\n'); rest = lines.pop(); for (const l of lines) line(l); });
process.stdin.on('end', () => { line(rest); flush(); fs.closeSync(fd); });`;

/** Prints argv[1] records (value argv[2]) as read --json does, from objects built in memory first. */
const RAW_PRINT_JSON = `const n = Number(process.argv[1]); const value = process.argv[2]; const ts = Date.now();
const records = new Array(n); for (let i = 0; i < n; i++) records[i] = { offset: i, timestamp: ts + i, key: null, value, headers: [] };
let i = 0; const out = process.stdout;
const pump = () => { while (i < n) { let s = ''; const end = Math.min(n, i + 500); for (; i < end; i++) s += JSON.stringify(records[i]) + '\\n'; if (!out.write(s)) return void out.once('drain', pump); } };
pump();`;

/** The 100 B value every record of the data set carries, as text (it is printable ASCII). */
const valueText = (): string => payload(VALUE_BYTES).toString('latin1');

/** A file of `records` lines in the shared data directory, written once per run. */
function inputFile(ctx: BenchContext, name: string, records: number, line: (i: number) => string): string {
  const file = path.join(ctx.dataDir, `${name}-${records}.txt`);
  if (fs.existsSync(file)) return file;
  const fd = fs.openSync(`${file}.tmp`, 'w');
  try {
    for (let i = 0; i < records; ) {
      let s = '';
      for (const end = Math.min(records, i + 1000); i < end; i++) s += `${line(i)}\n`;
      fs.writeSync(fd, s);
    }
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(`${file}.tmp`, file);
  return file;
}

export const linesInput = (ctx: BenchContext, records = ctx.records): string => {
  const v = valueText();
  return inputFile(ctx, 'lines', records, () => v);
};

const ndjsonInput = (ctx: BenchContext): string => {
  const line = JSON.stringify({ key: null, value: payload(VALUE_BYTES).toString('base64'), headers: [] });
  return inputFile(ctx, 'ndjson-base64', ctx.records, () => line);
};

/** One process over `records` records, as a scenario result (records/s of the whole process). */
function processResult(run: ProcessRun, records: number, bytes: number, what: string): ScenarioResult {
  const result = singleRunResult({ records, bytes, seconds: run.ms / 1000 }, what, { stdoutBytes: run.stdoutBytes });
  return run.peakRssMB === undefined ? result : { ...result, peakRssMB: run.peakRssMB };
}

async function pipeIn(ctx: BenchContext, input: string, args: string[], what: string): Promise<ScenarioResult> {
  const run = await runNode(args, { inputFile: input, peakRssIn: ctx.dir });
  ctx.progress(1);
  return processResult(run, ctx.records, fs.statSync(input).size, what);
}

async function pipeOut(ctx: BenchContext, args: (logDir: string, records: number) => string[], what: string): Promise<ScenarioResult> {
  const ds = await dataset(ctx);
  const run = await runNode(args(ds.dir, ds.records), { peakRssIn: ctx.dir });
  ctx.progress(1);
  return processResult(run, ds.records, run.stdoutBytes, what);
}

/**
 * A CLI command fed `input` through a pipe and its baseline: a Node.js script (`-e`) given the same
 * input and a file to write in the scenario's directory.
 */
function fromPipe(input: (ctx: BenchContext) => string, baseline: { name: string; description: string; script: string }, scenario: { name: string; description: string; args: string[] }): BenchScenario[] {
  return [
    { name: baseline.name, description: baseline.description, baseline: true, run: (ctx) => pipeIn(ctx, input(ctx), ['-e', baseline.script, path.join(ctx.dir, 'raw.dat')], 'whole process') },
    {
      name: scenario.name,
      description: scenario.description,
      baselineName: baseline.name,
      target: { ratioAtLeast: 0.5 },
      run: (ctx) => pipeIn(ctx, input(ctx), [cliPath, 'append', ctx.partitionDir(), ...scenario.args], 'whole process'),
    },
  ];
}

export const cliPipeScenarios: BenchScenario[] = [
  ...fromPipe(
    (ctx) => linesInput(ctx),
    { name: 'raw-pipe-to-file', description: 'node reading the --lines input from a pipe and writing it to a file (whole process)', script: RAW_PIPE_TO_FILE },
    { name: 'cli-append-lines-pipe', description: '`append --lines --flush async` of 100 B lines from a pipe (whole process)', args: ['--lines', '--flush', 'async'] },
  ),
  ...fromPipe(
    ndjsonInput,
    { name: 'raw-pipe-ndjson-to-file', description: 'node reading NDJSON from a pipe, JSON.parse and base64 decode of each line, values written to a file', script: RAW_NDJSON_TO_FILE },
    { name: 'cli-append-ndjson-pipe', description: '`append --encoding base64` of NDJSON records (100 B values) from a pipe (whole process)', args: ['--encoding', 'base64'] },
  ),
  {
    name: 'raw-print-json',
    description: 'node printing the data set’s records from memory into a pipe, one JSON.stringify each',
    baseline: true,
    run: (ctx) => pipeOut(ctx, (_dir, n) => ['-e', RAW_PRINT_JSON, String(n), valueText()], 'whole process'),
  },
  {
    name: 'cli-read-json-pipe',
    description: '`read --json` of the data set into a pipe (whole process)',
    baselineName: 'raw-print-json',
    target: { ratioAtLeast: 0.7 },
    run: (ctx) => pipeOut(ctx, (dir) => [cliPath, 'read', dir, '--json'], 'whole process'),
  },
  {
    name: 'cli-read-text-pipe',
    description: 'plain `read` of the data set into a pipe (whole process)',
    baselineName: 'raw-print-json',
    target: { ratioAtLeast: 0.7 },
    run: (ctx) => pipeOut(ctx, (dir) => [cliPath, 'read', dir], 'whole process'),
  },
];
