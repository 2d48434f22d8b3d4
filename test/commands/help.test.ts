/**
 * Help text (issue 14): `logtool --help` and `logtool help` list the exit codes (README, "Exit
 * codes") and examples; every option's default is shown once — by commander's "(default: …)" —
 * never also in the option's own description.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/program.js';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';

beforeAll(() => ensureBuilt(), 120_000);

describe('top-level help', () => {
  it('--help and help list the four exit codes and examples that name real commands', async () => {
    const names = new Set(buildProgram().commands.map((c) => c.name()));
    for (const r of await Promise.all([cli('--help'), cli('help')])) {
      expect(r.code, r.stderr).toBe(0);
      const exit = r.stdout.slice(r.stdout.indexOf('\nExit codes:\n'));
      expect(exit).toMatch(/\n {2}0 {2}success/);
      expect(exit).toMatch(/\n {2}1 {2}operational error/);
      expect(exit).toMatch(/\n {2}2 {2}usage error/);
      expect(exit).toMatch(/\n {2}3 {2}data problem/);
      const examples = r.stdout.slice(r.stdout.indexOf('\nExamples:\n')).split('\n').filter((l) => l.startsWith('  logtool '));
      expect(examples.length).toBeGreaterThanOrEqual(3);
      for (const e of examples) expect(names, e).toContain(e.split(' ')[3]);
    }
  });

  it("a command's help does not repeat the top-level exit-code list", async () => {
    const r = await cli('read', '--help');
    expect(r.stdout).not.toContain('\nExit codes:\n  0');
  });
});

describe('defaults shown once', () => {
  it('no option with a default commander prints also states it in its description', () => {
    const repeated: string[] = [];
    for (const cmd of buildProgram().commands) {
      for (const o of cmd.options) {
        if (o.negate || o.defaultValue === undefined) continue;
        if (/default/i.test(o.description ?? '')) repeated.push(`${cmd.name()} ${o.flags}: ${o.description}`);
      }
    }
    expect(repeated).toEqual([]);
  });

  it('every command help mentions each default at most once per option', async () => {
    const commands = buildProgram().commands.filter((c) => c.name() !== 'help');
    const helps = await Promise.all(commands.map((c) => cli(c.name(), '--help')));
    for (const [i, r] of helps.entries()) {
      expect(r.code, r.stderr).toBe(0);
      // Options wrap over lines: split the Options section at each option's first line.
      const options = r.stdout.slice(r.stdout.indexOf('\nOptions:\n'), (r.stdout.indexOf('\n\n', r.stdout.indexOf('\nOptions:\n') + 2) + 1 || r.stdout.length));
      for (const block of options.split(/\n(?= {2}-)/)) {
        const count = (block.match(/default/gi) ?? []).length;
        expect(count, `${commands[i]!.name()}: ${block}`).toBeLessThanOrEqual(1);
      }
    }
    const compact = helps[commands.findIndex((c) => c.name() === 'compact')]!.stdout;
    expect(compact.match(/134217728/g)).toHaveLength(1);
  }, 120_000);
});
