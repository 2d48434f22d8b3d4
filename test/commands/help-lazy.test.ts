/**
 * Start-up loads only what the command line needs (issue 15): `logtool --help` loads commander and
 * the command table, not the commands' modules, chalk, ora, cli-table3 or any native add-on; a
 * command loads its own module only. The CLI run is the package's bin, bundled into chunks
 * (scripts/bundle-cli.mjs): a loaded chunk stands for the source modules its manifest lists. Every command's --help still lists the options it listed
 * before commands were loaded lazily (help-options-snapshot.json, taken from the eager program),
 * the program's command list says what each command's own definition says, and compressed logs
 * still read in a fresh process (the codecs' add-ons load on first use).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/program.js';
import { commandSpecs, specForArgv } from '../../src/commands/registry.js';
import { makeTempDir, removeTempDirs, repoRoot } from '../helpers/fixtures.js';
import { cliPath, distDir, ensureBuilt } from '../helpers/build.js';
import { cli, cliSync, sh } from '../helpers/cli.js';

beforeAll(ensureBuilt);
afterAll(removeTempDirs);

const snapshot = JSON.parse(fs.readFileSync(path.join(repoRoot, 'test', 'commands', 'help-options-snapshot.json'), 'utf8')) as Record<string, string[]>;
const tracer = path.join(repoRoot, 'test', 'helpers', 'module-trace.mjs');

/**
 * What a loaded file of the bundle stands for: its chunk's source modules as the compiled files
 * they would be (`src/read.ts` → `<dist>/read.js`, `node_modules/chalk/…` as the package's path).
 */
function sourcesOf(file: string): string[] {
  const binDir = path.join(distDir, 'bin');
  if (path.dirname(file) !== binDir || !file.endsWith('.cjs')) return [file];
  const manifest = JSON.parse(fs.readFileSync(path.join(binDir, 'manifest.json'), 'utf8')) as Record<string, string[]>;
  return [file, ...(manifest[path.basename(file)] ?? []).map((m) => (m.startsWith('src/') ? path.join(distDir, m.slice(4).replace(/\.ts$/, '.js')) : `/${m}`))];
}

/** The modules a CLI run loaded (module-trace.mjs), with its exit code. */
function modulesLoaded(args: string[], input?: string): { code: number | null; modules: string[] } {
  const trace = path.join(makeTempDir('logtool-trace-'), 'modules.txt');
  const env = { ...process.env, NO_COLOR: '1', CI: '1', LOGTOOL_MODULE_TRACE: trace };
  const r = spawnSync(process.execPath, ['--import', tracer, cliPath, ...args], { encoding: 'utf8', env, input });
  const traced = fs.existsSync(trace) ? fs.readFileSync(trace, 'utf8').split('\n').filter(Boolean) : [];
  return { code: r.status, modules: traced.flatMap(sourcesOf) };
}

const commandModules = (modules: string[]): string[] =>
  [...new Set(modules.filter((m) => /\/dist\/commands\/[^/]+\.js$/.test(m)).map((m) => path.basename(m, '.js')))].sort();
const NATIVE = ['lz4-napi', 'snappy', 'zstd-napi', 'fs-ext', '@node-rs/crc32', 'sse4_crc32'];
const RENDERING = ['chalk', 'ora', 'cli-table3'];
/** dist modules a run loaded, relative to dist/. */
const distModules = (modules: string[]): string[] => [...new Set(modules.filter((m) => m.includes('/dist/')).map((m) => m.slice(m.lastIndexOf('/dist/') + 6)))];
/** The cleaner's compaction modules (cleaner.js and what only it uses): Log.compact() loads them on first use. */
const COMPACTION = ['cleaner', 'offset-map', 'offset-map-builder', 'batch-records', 'batch-reader', 'memory', 'stats', 'scan', 'clean-segments', 'record-filter', 'cleaned-output'].map((m) => `engine/cleaner/${m}.js`);
/** Internal-topic decoders and their schemas (topics.js, their names only, is not one). */
const DECODERS = /^engine\/format\/internal\/(?!topics\.js)/;
const loads = (modules: string[], pkg: string): boolean => modules.some((m) => m === pkg || m.startsWith(`${pkg}/`) || m.includes(`/node_modules/${pkg}/`));

describe('lazy start-up', () => {
  it('--help loads no command module, no renderer and no native add-on', () => {
    const { code, modules } = modulesLoaded(['--help']);
    expect(code).toBe(0);
    expect(modules.some((m) => m.endsWith('/dist/bin/main.cjs'))).toBe(true); // the bundle ran
    expect(modules.some((m) => m.endsWith('/dist/program.js'))).toBe(true); // the trace works
    expect([...new Set(modules.filter((m) => m.endsWith('.cjs')).map((m) => path.basename(m)))]).toEqual(['logtool.cjs', 'main.cjs']); // one file of the bundle beyond its start
    expect(commandModules(modules)).toEqual(['registry']);
    for (const pkg of [...NATIVE, ...RENDERING]) expect(loads(modules, pkg), pkg).toBe(false);
  });

  it('a one-record read loads read and what it uses, no other command, codec add-on or spinner', async () => {
    const dir = path.join(makeTempDir(), 't-0');
    expect((await cli('append', dir, '-v', 'hello')).code).toBe(0);
    const { code, modules } = modulesLoaded(['read', dir]);
    expect(code).toBe(0);
    // read's own module and its helpers; no other command's module (positions lives in consume.js).
    const others = commandSpecs.map((c) => (c.name === 'positions' ? 'consume' : c.name)).filter((n) => n !== 'read');
    expect(commandModules(modules)).toContain('read');
    expect(commandModules(modules).filter((m) => others.includes(m))).toEqual([]);
    for (const pkg of ['lz4-napi', 'snappy', 'zstd-napi', 'fs-ext', 'ora', 'cli-table3']) expect(loads(modules, pkg), pkg).toBe(false);
    // No compaction module (Log.compact loads them) and no internal-topic decoder (read --decode does).
    expect(distModules(modules).filter((m) => COMPACTION.includes(m) || DECODERS.test(m))).toEqual([]);
  });

  it('append --lines from stdin loads no table renderer and no worker pool (a partition, not a log directory)', () => {
    const dir = path.join(makeTempDir(), 't-0');
    const { code, modules } = modulesLoaded(['append', dir, '--lines'], 'a\nb\n');
    expect(code).toBe(0);
    expect(distModules(modules)).toContain('commands/logdir-paths.js');
    expect(distModules(modules).filter((m) => ['commands/logdir-runner.js', 'inspect/worker-pool.js', 'render/table.js'].includes(m))).toEqual([]);
    for (const pkg of ['cli-table3', 'ora', 'lz4-napi', 'snappy', 'zstd-napi']) expect(loads(modules, pkg), pkg).toBe(false);
  });

  it('a read that decodes an internal topic loads its decoders, and one of __consumer_offsets does by its name', async () => {
    const root = makeTempDir();
    const dir = path.join(root, 't-0');
    expect((await cli('append', dir, '-v', 'hello')).code).toBe(0);
    const decoded = modulesLoaded(['read', dir, '--decode', 'offsets', '--json']);
    expect(decoded.code).toBe(3); // a record without a key is not an offsets record: printed as a problem
    expect(distModules(decoded.modules)).toContain('engine/format/internal/consumer-offsets.js');
    const byName = path.join(root, '__consumer_offsets-0');
    fs.renameSync(dir, byName);
    expect(distModules(modulesLoaded(['read', byName]).modules)).toContain('engine/format/internal/consumer-offsets.js');
    expect(distModules(modulesLoaded(['read', byName, '--raw']).modules).filter((m) => DECODERS.test(m))).toEqual([]);
  });

  it('every command in the table is the command its module defines: name, arguments, description', async () => {
    const loaded = await Promise.all(commandSpecs.map((s) => s.load()));
    for (const [i, cmd] of loaded.entries()) {
      const spec = commandSpecs[i]!;
      expect(cmd.name()).toBe(spec.name);
      expect(cmd.description()).toBe(spec.description);
      expect(cmd.registeredArguments.map((a) => (a.required ? `<${a.name()}${a.variadic ? '...' : ''}>` : `[${a.name()}${a.variadic ? '...' : ''}]`)).join(' ')).toBe(spec.args);
    }
    // The program's help lists the same lines whether the commands are stubs or loaded.
    expect(buildProgram().helpInformation()).toBe(buildProgram({ loaded }).helpInformation());
    expect(Object.keys(snapshot).sort()).toEqual(commandSpecs.map((s) => s.name).sort());
  });

  it('specForArgv finds the command after the program options, and the one `help` asks about', () => {
    expect(specForArgv(['--debug', 'read', 'x'])?.name).toBe('read');
    expect(specForArgv(['help', 'verify'])?.name).toBe('verify');
    expect(specForArgv(['--help'])).toBeUndefined();
    expect(specForArgv(['nope', 'read'])).toBeUndefined();
    expect(specForArgv(['--', 'read'])).toBeUndefined();
  });

  it("every command's --help (and `help <command>`) lists every option it listed before", async () => {
    await Promise.all(
      Object.entries(snapshot).map(async ([name, flags]) => {
        const [r, viaHelp] = await Promise.all([cli(name, '--help'), cli('help', name)]);
        expect(r.code, name).toBe(0);
        for (const f of flags) expect(r.stdout, `${name} ${f}`).toContain(f);
        expect(viaHelp.stdout).toBe(r.stdout);
      }),
    );
    const top = cliSync('--help');
    for (const s of commandSpecs) expect(top.stdout).toMatch(new RegExp(`^  ${s.name} \\[options\\]${s.args ? ` ${s.args.replace(/[[\].|]/g, '\\$&')}` : ''} +${s.description.slice(0, 20).replace(/[[\].|()]/g, '\\$&')}`, 'm'));
  });

  it('compressed logs are written and read back in fresh processes, one per codec', async () => {
    for (const codec of ['gzip', 'snappy', 'lz4', 'zstd']) {
      const dir = path.join(makeTempDir(), 't-0');
      const w = await sh(`printf 'a\\nbb\\nccc\\n' | "$NODE" "$CLI" append ${dir} --lines --compression ${codec}`);
      expect(w.code, w.stderr).toBe(0);
      const r = await cli('read', dir, '--json');
      expect(r.code, r.stderr).toBe(0);
      const values = r.stdout.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { value: string }).value);
      expect(values, codec).toEqual(['a', 'bb', 'ccc']);
      const meta = await cli('read', dir, '--batches', '--json');
      expect(meta.stdout, codec).toContain(codec);
    }
  });
});

describe("the bin's code cache (scripts/logtool-bin.cjs)", () => {
  const binDir = path.join(distDir, 'bin');

  it('the chunks a read loads are compiled from the caches the build wrote', () => {
    const dir = path.join(makeTempDir(), 't-0');
    expect(cliSync('append', dir, '-v', 'hello').code).toBe(0);
    // The bin required as a module does not run; main.cjs's runCli then loads the read's chunks through it.
    const script = `const bin = require(${JSON.stringify(path.join(binDir, 'logtool.cjs'))});
require(${JSON.stringify(path.join(binDir, 'main.cjs'))}).runCli(['read', ${JSON.stringify(dir)}], { stdout: () => {} })
  .then((code) => console.log(JSON.stringify({ code, use: bin.cacheUse() })));`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    const { code, use } = JSON.parse(r.stdout) as { code: number; use: Record<string, boolean> };
    expect(code).toBe(0);
    expect(Object.keys(use)).toEqual(expect.arrayContaining(['main.cjs', 'read.cjs']));
    expect(Object.entries(use).filter(([, used]) => !used)).toEqual([]);
  });

  it('a chunk changed after the build runs as changed, not from the cache made before (same size)', () => {
    const copy = path.join(makeTempDir(), 'bin');
    fs.cpSync(binDir, copy, { recursive: true, preserveTimestamps: true });
    const main = path.join(copy, 'main.cjs');
    const text = fs.readFileSync(main, 'utf8');
    expect(text).toContain('display help for command');
    // V8 checks a cache against the source's length only: the bin's own check (size and mtime) is what refuses it.
    fs.writeFileSync(main, text.replaceAll('display help for command', 'DISPLAY HELP FOR COMMAND'));
    const r = spawnSync(process.execPath, [path.join(copy, 'logtool.cjs'), '--help'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('DISPLAY HELP FOR COMMAND');
  });
});
