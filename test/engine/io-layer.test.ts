/**
 * Every file operation of the engine goes through the one I/O layer, src/engine/io.ts (issue 11),
 * so fault-injection and crash tests see all of them: no file under src/engine/ other than io.ts
 * imports node:fs (or fs, fs/promises, fs-ext) or requires it. The check is shown to catch an
 * import on small inputs first, so it cannot pass by matching nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ENGINE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/engine');
/** Files allowed to touch the file system directly: the layer itself. */
const EXCEPTIONS = new Set(['io.ts']);

const FS_MODULE = /(?:from\s+|import\s*\(\s*|require\s*\(\s*|import\s+)['"](?:node:)?(?:fs|fs\/promises|fs-ext)['"]/;

/** The lines of src importing a file-system module directly (comments dropped). */
function directFsImports(src: string): string[] {
  const code = src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return code.split('\n').filter((line) => FS_MODULE.test(line));
}

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

describe('the I/O layer', () => {
  it('recognises every form of a direct fs import', () => {
    for (const line of [
      "import fs from 'node:fs';",
      "import * as fs from 'fs';",
      "import { promises } from 'node:fs/promises';",
      "import type { Stats } from 'node:fs';",
      "const fsExt = require('fs-ext');",
      "const m = await import('node:fs');",
      "import 'node:fs';",
    ]) {
      expect(directFsImports(line), line).toEqual([line]);
    }
    expect(directFsImports("import path from 'node:path';\n// import fs from 'node:fs';\n/* require('fs') */")).toEqual([]);
  });

  it('is the only module of src/engine that imports node:fs', () => {
    const files = tsFiles(ENGINE);
    expect(files.length).toBeGreaterThan(20);
    expect(files.some((f) => path.relative(ENGINE, f) === 'io.ts')).toBe(true);
    const offenders = files
      .filter((f) => !EXCEPTIONS.has(path.relative(ENGINE, f)))
      .flatMap((f) => directFsImports(fs.readFileSync(f, 'utf8')).map((line) => `${path.relative(ENGINE, f)}: ${line.trim()}`));
    expect(offenders).toEqual([]);
  });
});
