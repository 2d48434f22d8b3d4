/**
 * The engine's error kinds (issue 11): `usage` is the CLI's kind (a bad command line); the engine
 * raises typed kinds instead — `invalid-argument` (an option, value or directory the API cannot
 * work with), `invalid-state` (an operation the object's state refuses) and `refused` (what Kafka
 * refuses a producer). The CLI keeps exit code 2 and the same messages for all of them.
 *
 * The source check reads every file under src/engine with comments removed: a string literal
 * `usage` anywhere but errors.ts (which defines the kind for the CLI) fails it, naming file and line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Channel, ExitCode, InvalidArgumentError, InvalidDirectoryError, Log, LogManager, LogtoolError } from '../../src/api.js';
import { LogTransaction } from '../../src/engine/partition-state/log-transaction.js';
import { makeTempDir, removeTempDirs, tempPartitionPath } from '../helpers/fixtures.js';
import { rejected } from '../helpers/errors.js';

afterAll(removeTempDirs);

const ENGINE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/engine');

/** The source with comments blanked (line numbers kept); strings, templates and regexes left as they are. */
function withoutComments(src: string): string {
  let out = '';
  let i = 0;
  let quote: string | undefined;
  while (i < src.length) {
    const c = src[i]!;
    if (quote) {
      out += c;
      if (c === '\\') out += src[++i] ?? '';
      else if (c === quote) quote = undefined;
      i++;
    } else if (c === "'" || c === '"' || c === '`') {
      quote = c;
      out += c;
      i++;
    } else if (c === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += src.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** `file:line` of each string literal `usage` in the code of `src`. */
function usageLiterals(file: string, src: string): string[] {
  return withoutComments(src)
    .split('\n')
    .flatMap((line, n) => (/(['"`])usage\1/.test(line) ? [`${file}:${n + 1}: ${line.trim()}`] : []));
}

function engineFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? engineFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

const caught = (fn: () => unknown): Promise<LogtoolError> => rejected(fn, LogtoolError);

describe('engine error kinds', () => {
  it('the source check finds a usage literal in code and ignores one in a comment', () => {
    const src = "// 'usage' in a comment\n/* and 'usage' here */\nconst ok = 'usages';\nthrow new LogtoolError('usage', 'bad');\n";
    expect(usageLiterals('x.ts', src)).toEqual(["x.ts:4: throw new LogtoolError('usage', 'bad');"]);
  });

  it('no file under src/engine raises kind usage (the CLI\'s kind)', () => {
    const files = engineFiles(ENGINE).filter((f) => path.basename(f) !== 'errors.ts');
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((f) => usageLiterals(path.relative(ENGINE, f), fs.readFileSync(f, 'utf8')));
    expect(found).toEqual([]);
  });

  it('the engine kinds keep the CLI exit code 2', () => {
    for (const kind of ['invalid-argument', 'invalid-state', 'refused'] as const) expect(new LogtoolError(kind, 'x').exitCode).toBe(ExitCode.usage);
  });

  it('an operation the state refuses is invalid-state; what Kafka refuses is refused; a bad directory or value is invalid-argument', async () => {
    const dir = tempPartitionPath('kinds-0');
    const log = Log.open(dir, { config: { flushMode: 'async' } });
    await log.append([{ key: null, value: Buffer.from('a') }], { producerId: 7, producerEpoch: 0, baseSequence: 0 });
    expect((await caught(() => log.append([{ key: null, value: Buffer.from('b') }], { producerId: 7, producerEpoch: 0, baseSequence: 5 }))).kind).toBe('refused');
    expect((await caught(() => log.append([]))).kind).toBe('invalid-argument');

    const ch = new Channel(log, { group: 'g' });
    const take = ch.takeTransaction();
    expect((await caught(() => ch.takeTransaction())).kind).toBe('invalid-state');
    take.rollback();
    expect((await caught(() => take.commit())).kind).toBe('invalid-state');
    expect((await caught(() => ch.putTransaction().commit())).kind).toBe('invalid-state');

    const tx = await LogTransaction.begin(log);
    await tx.commit();
    expect((await caught(() => tx.append([{ key: null, value: Buffer.from('c') }]))).kind).toBe('invalid-state');
    await log.close();

    const reader = Log.open(dir, { readOnly: true });
    const e = await caught(() => reader.append([{ key: null, value: Buffer.from('d') }]));
    expect([e.kind, e.message]).toEqual(['invalid-state', 'log was opened read-only']);
    await reader.close();

    const unnamed = await caught(() => Log.open(path.join(makeTempDir(), 'unnamed')));
    expect(unnamed).toBeInstanceOf(InvalidDirectoryError);
    expect(unnamed.kind).toBe('invalid-argument');
    const none = await caught(() => LogManager.open([]));
    expect(none).toBeInstanceOf(InvalidArgumentError);
    expect((none as InvalidArgumentError).options).toEqual(['logDirs']);
  });
});
