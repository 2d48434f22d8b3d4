/**
 * issue 9 item 11: input that is not valid in its encoding is a usage error (exit 2) and nothing
 * is appended — never an empty or truncated value.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/api.js';
import { ensureBuilt } from '../helpers/build.js';
import { removeTempDirs, tempPartitionPath } from '../helpers/fixtures.js';
import { cli, sh } from '../helpers/cli.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

function recordCount(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  const log = Log.open(dir, { readOnly: true });
  try {
    return [...log.read()].length;
  } finally {
    void log.close();
  }
}

describe('append refuses invalid encodings', () => {
  it.each([
    ['{"base64":"!!!!"} value', '{"value":{"base64":"!!!!"}}'],
    ['{"hex":"abzz"} value', '{"value":{"hex":"abzz"}}'],
    ['odd-length {"hex"} key', '{"key":{"hex":"abc"},"value":"x"}'],
    ['one-character {"base64"} header value', '{"value":"x","headers":[{"key":"h","value":{"base64":"A"}}]}'],
  ])('NDJSON with an invalid %s exits 2 and appends nothing', async (_name, line) => {
    const dir = tempPartitionPath('enc-0');
    const r = await sh(`printf '%s\\n' '${line}' | "$NODE" "$CLI" append ${dir}`);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/stdin line 1 .*is not valid (base64|hex)/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(recordCount(dir)).toBe(0);
  });

  it('--encoding base64 with "A" exits 2; valid base64 and hex (padded or not) are stored exactly', async () => {
    const dir = tempPartitionPath('enc-0');
    const bad = await cli('append', dir, '--encoding', 'base64', '--value', 'A');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--value: "A" is not valid base64/);
    expect(recordCount(dir)).toBe(0);
    expect((await cli('append', dir, '--encoding', 'base64', '--value', 'AAE=')).code).toBe(0);
    expect((await cli('append', dir, '--encoding', 'base64', '--value', 'AAE')).code).toBe(0);
    expect((await cli('append', dir, '--encoding', 'hex', '--value', 'ff00')).code).toBe(0);
    const log = Log.open(dir, { readOnly: true });
    try {
      expect([...log.read()].map((r) => r.value!.toString('hex'))).toEqual(['0001', '0001', 'ff00']);
    } finally {
      await log.close();
    }
  });
});
