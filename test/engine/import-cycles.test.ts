/**
 * No import cycles inside src/ (issue 11). Every .ts file under src/ is tokenized (comments,
 * strings, template literals and regex literals told apart, so text inside them never counts), its
 * relative module specifiers are collected — `import … from`, `import type … from`, `import '…'`,
 * `export … from`, `export type … from`, `import('…')` (also `typeof import('…')`) and
 * `require('…')` — and resolved to files; the import graph must then have no cycle. Type-only
 * imports count: they are erased at runtime, but a cycle through them still ties the modules'
 * layers together. A failure names the files of each cycle in order.
 *
 * The parser and the cycle search are checked on small inputs first, so the check over src/ cannot
 * pass by finding no imports.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

type Token = { kind: 'id' | 'str' | 'punct' | 'other'; text: string };

const REGEX_AFTER_KEYWORDS = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'instanceof', 'yield', 'await']);

/** Identifiers, string literals (value) and punctuation; comments dropped; template and regex literals as 'other'. */
function tokenize(src: string): Token[] {
  const out: Token[] = [];
  // One entry per open `${` (true) or ordinary `{` (false), to know when `}` resumes a template.
  const braces: boolean[] = [];
  let i = 0;
  const prevSignificant = (): Token | undefined => out[out.length - 1];
  const regexAllowed = (): boolean => {
    const p = prevSignificant();
    if (!p) return true;
    if (p.kind === 'punct') return !/^[)\]}]$/.test(p.text);
    if (p.kind === 'id') return REGEX_AFTER_KEYWORDS.has(p.text);
    return false;
  };
  /** Scans template text from i (just after ` or the } closing a substitution) to its end or next `${`. */
  const templateRest = (): void => {
    while (i < src.length) {
      const c = src[i]!;
      if (c === '\\') { i += 2; continue; }
      if (c === '`') { i++; out.push({ kind: 'other', text: '`template`' }); return; }
      if (c === '$' && src[i + 1] === '{') { i += 2; braces.push(true); out.push({ kind: 'punct', text: '(' }); return; }
      i++;
    }
    throw new Error('unterminated template literal');
  };
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) { i++; continue; }
    if (c === '/' && src[i + 1] === '/') { const e = src.indexOf('\n', i); i = e < 0 ? src.length : e; continue; }
    if (c === '/' && src[i + 1] === '*') { const e = src.indexOf('*/', i + 2); if (e < 0) throw new Error('unterminated comment'); i = e + 2; continue; }
    if (c === "'" || c === '"') {
      let j = i + 1;
      let value = '';
      while (j < src.length && src[j] !== c) {
        if (src[j] === '\\') { value += src[j + 1] ?? ''; j += 2; continue; }
        if (src[j] === '\n') throw new Error(`unterminated string at ${i}`);
        value += src[j];
        j++;
      }
      if (j >= src.length) throw new Error(`unterminated string at ${i}`);
      out.push({ kind: 'str', text: value });
      i = j + 1;
      continue;
    }
    if (c === '`') {
      const from = ++i;
      const start = out.length;
      templateRest();
      // A template without substitutions is a plain string (import(`./x.js`)).
      if (out.length === start + 1 && out[start]!.text === '`template`') {
        const raw = src.slice(from, i - 1);
        if (!raw.includes('\\')) out[start] = { kind: 'str', text: raw };
      }
      continue;
    }
    if (c === '{') { braces.push(false); out.push({ kind: 'punct', text: c }); i++; continue; }
    if (c === '}') {
      const wasTemplate = braces.pop();
      i++;
      if (wasTemplate) { out.push({ kind: 'punct', text: ')' }); templateRest(); } else out.push({ kind: 'punct', text: c });
      continue;
    }
    if (c === '/' && regexAllowed()) {
      let j = i + 1;
      let inClass = false;
      while (j < src.length) {
        const d = src[j]!;
        if (d === '\\') { j += 2; continue; }
        if (d === '\n') throw new Error(`unterminated regex literal at ${i}`);
        if (inClass) { if (d === ']') inClass = false; } else if (d === '[') inClass = true;
        else if (d === '/') break;
        j++;
      }
      j++;
      while (j < src.length && /[a-z]/i.test(src[j]!)) j++;
      out.push({ kind: 'other', text: '/regex/' });
      i = j;
      continue;
    }
    const word = /^[A-Za-z_$\d][\w$]*/.exec(src.slice(i, i + 200));
    if (word) { out.push({ kind: /^\d/.test(word[0]) ? 'other' : 'id', text: word[0] }); i += word[0].length; continue; }
    out.push({ kind: 'punct', text: c });
    i++;
  }
  return out;
}

interface Specifier { spec: string; form: string }

/** Module specifiers of one file; throws on an `import(…)` / `require(…)` whose argument is not a literal. */
function moduleSpecifiers(src: string): Specifier[] {
  const t = tokenize(src);
  const found: Specifier[] = [];
  const is = (k: number, text: string) => t[k]?.text === text && t[k]!.kind !== 'str';
  for (let k = 0; k < t.length; k++) {
    const tok = t[k]!;
    if (tok.kind !== 'id') continue;
    const member = k > 0 && is(k - 1, '.');
    if (member) continue; // x.import, x.require
    if ((tok.text === 'import' || tok.text === 'require') && is(k + 1, '(')) {
      const arg = t[k + 2];
      if (arg?.kind === 'str' && is(k + 3, ')')) found.push({ spec: arg.text, form: `${tok.text}()` });
      else if (arg?.kind === 'str' && is(k + 3, ',')) found.push({ spec: arg.text, form: `${tok.text}()` });
      else throw new Error(`${tok.text}(…) with a non-literal argument cannot be checked`);
      continue;
    }
    if (tok.text === 'import' && t[k + 1]?.kind === 'str') { found.push({ spec: t[k + 1]!.text, form: 'import side effect' }); continue; }
    if (tok.text !== 'import' && tok.text !== 'export') continue;
    if (tok.text === 'import' && is(k + 1, '.')) continue; // import.meta
    // import/export clause: identifiers, `type`, `*`, `as`, braces and commas, then `from '…'`.
    let j = k + 1;
    while (j < t.length && (t[j]!.kind === 'id' || (t[j]!.kind === 'punct' && /^[{}*,]$/.test(t[j]!.text)))) {
      if (t[j]!.text === 'from' && t[j + 1]?.kind === 'str') break;
      j++;
    }
    if (is(j, 'from') && t[j + 1]?.kind === 'str') {
      const typeOnly = t[k + 1]?.text === 'type';
      found.push({ spec: t[j + 1]!.text, form: `${tok.text}${typeOnly ? ' type' : ''} … from` });
      k = j + 1;
    }
  }
  return found;
}

function tsFilesUnder(dir: string): string[] {
  const files: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) files.push(...tsFilesUnder(p));
    else if (e.isFile() && p.endsWith('.ts') && !p.endsWith('.d.ts')) files.push(p);
  }
  return files.sort();
}

/** The .ts file a relative specifier names (NodeNext: `./x.js` is `./x.ts`), or undefined. */
function resolveSpecifier(fromFile: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(fromFile), spec);
  const candidates = [base.replace(/\.(m|c)?js$/, '.$1ts'), base, `${base}.ts`, path.join(base, 'index.ts')];
  return candidates.find((c) => c.endsWith('.ts') && fs.existsSync(c) && fs.statSync(c).isFile());
}

/** Graph of src/: file → the src files it imports. Non-relative specifiers (packages, node:) are not edges. */
function importGraph(root: string): { graph: Map<string, string[]>; unresolved: string[]; edges: number } {
  const graph = new Map<string, string[]>();
  const unresolved: string[] = [];
  let edges = 0;
  for (const file of tsFilesUnder(root)) {
    const deps = new Set<string>();
    for (const { spec, form } of moduleSpecifiers(fs.readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = resolveSpecifier(file, spec);
      if (!target) unresolved.push(`${path.relative(root, file)}: ${form} '${spec}'`);
      else if (target.startsWith(root + path.sep)) deps.add(target);
    }
    edges += deps.size;
    graph.set(file, [...deps].sort());
  }
  return { graph, unresolved, edges };
}

/** Every cycle's files in import order (one cycle per strongly connected component, first file repeated at the end). */
function findCycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const comp: string[] = [];
      let w: string;
      do { w = stack.pop()!; onStack.delete(w); comp.push(w); } while (w !== v);
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(comp);
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  // Within a component, a shortest path from its first file back to itself (BFS).
  return components.map((comp) => {
    const inComp = new Set(comp);
    const start = [...comp].sort()[0]!;
    const prev = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const v = queue.shift()!;
      for (const w of graph.get(v) ?? []) {
        if (!inComp.has(w)) continue;
        if (w === start) {
          const cycle = [start];
          for (let x = v; x !== start; x = prev.get(x)!) cycle.splice(1, 0, x);
          return [...cycle, start];
        }
        if (!prev.has(w)) { prev.set(w, v); queue.push(w); }
      }
    }
    throw new Error('a strongly connected component without a cycle');
  });
}

describe('import cycles', () => {
  it('the parser finds every import form and nothing in comments, strings or regexes', () => {
    const src = [
      "import fs from 'node:fs';",
      "import { a, type B } from './a.js';",
      "import type { C } from './c.js';",
      "import * as d from \"./d.js\";",
      "import './side-effect.js';",
      "export { e } from './e.js';",
      "export type { F } from './f.js';",
      "export * from './g.js';",
      "export * as h from './h.js';",
      "const i = await import('./i.js');",
      'const j = import(`./j.js`);',
      "type K = typeof import('./k.js');",
      "const l = require('./l.js');",
      "import {\n  m1,\n  m2,\n} from './m.js';",
      "// import { no1 } from './comment.js';",
      "/* export * from './block-comment.js'; */",
      "const s = \"import { no2 } from './string.js'\";",
      "const re = /import '.\\/regex.js'/;",
      "const tpl = `import('./template.js') ${x ? 'import(\\'./nested.js\\')' : '`'}`;",
      "export const n = 1; export default o; export { p };",
      'const meta = import.meta.url;',
    ].join('\n');
    expect(moduleSpecifiers(src).map((s) => s.spec)).toEqual([
      'node:fs', './a.js', './c.js', './d.js', './side-effect.js', './e.js', './f.js', './g.js', './h.js',
      './i.js', './j.js', './k.js', './l.js', './m.js',
    ]);
    expect(() => moduleSpecifiers('const x = await import(name);')).toThrow(/non-literal/);
  });

  it('the cycle search finds self-imports, two-file and longer cycles and nothing in a DAG', () => {
    const g = (edges: Record<string, string[]>) => new Map(Object.entries(edges));
    expect(findCycles(g({ a: ['b', 'c'], b: ['c'], c: [] }))).toEqual([]);
    expect(findCycles(g({ a: ['a'] }))).toEqual([['a', 'a']]);
    expect(findCycles(g({ a: ['b'], b: ['a'], c: ['a'] }))).toEqual([['a', 'b', 'a']]);
    expect(findCycles(g({ x: ['y'], y: ['z'], z: ['x', 'w'], w: [] }))).toEqual([['x', 'y', 'z', 'x']]);
  });

  it('src/ has no import cycle', () => {
    const { graph, unresolved, edges } = importGraph(SRC);
    expect(unresolved, 'relative imports the check could not resolve to a file under src/').toEqual([]);
    // The graph is real: hundreds of edges, including type-only and re-export ones.
    expect(graph.size).toBeGreaterThan(50);
    expect(edges).toBeGreaterThan(150);
    expect(graph.get(path.join(SRC, 'engine/log/log-reader.ts'))).toContain(path.join(SRC, 'engine/log/log-types.ts'));
    expect(graph.get(path.join(SRC, 'engine/segment/segment.ts'))).toContain(path.join(SRC, 'engine/segment/segment-files.ts'));
    const cycles = findCycles(graph).map((c) => c.map((f) => path.relative(SRC, f)).join(' → '));
    expect(cycles, `import cycles in src/:\n${cycles.join('\n')}`).toEqual([]);
  });
});

/**
 * Commands reach the engine only through its public API's parts (src/api/*.ts, which src/api.ts, the
 * package's module, puts together) and the internals for commands (src/inspect/*.ts), never an
 * engine file directly (issue 11). The parts are split by job so that each command loads only the
 * engine modules it loaded before (issue 15, test/commands/help-lazy.test.ts).
 */
describe('the command boundary', () => {
  /** Files under src/commands allowed to import an engine file directly, with the reason. None so far. */
  const EXCEPTIONS: Record<string, string> = {};

  it('no file under src/commands imports src/engine directly; each engine import goes through src/api or src/inspect', () => {
    const { graph } = importGraph(SRC);
    const commands = [...graph.keys()].filter((f) => f.startsWith(path.join(SRC, 'commands') + path.sep));
    expect(commands.length).toBeGreaterThan(20);
    const inside = (f: string, dir: string) => f.startsWith(path.join(SRC, dir) + path.sep);
    const direct = commands.flatMap((f) => (graph.get(f) ?? []).filter((d) => inside(d, 'engine')).map((d) => `${path.relative(SRC, f)} → ${path.relative(SRC, d)}`));
    const allowed = direct.filter((line) => !(line.split(' → ')[0]! in EXCEPTIONS));
    expect(allowed, 'commands importing engine files; import them from src/api/* (public) or src/inspect/* (internal)').toEqual([]);
    // The boundary is used, not bypassed: commands import the parts, and the parts the engine.
    const viaParts = commands.flatMap((f) => (graph.get(f) ?? []).filter((d) => inside(d, 'api') || inside(d, 'inspect')));
    expect(viaParts.length).toBeGreaterThan(50);
    expect(graph.get(path.join(SRC, 'api.ts'))).toContain(path.join(SRC, 'api/log.ts'));
    expect(graph.get(path.join(SRC, 'api/log.ts'))).toContain(path.join(SRC, 'engine/log/log.ts'));
  });
});
