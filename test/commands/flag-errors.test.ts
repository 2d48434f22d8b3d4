/**
 * The CLI names its flags for the engine's option errors (issue 11): the engine says `segment.bytes`
 * or `group` (test/engine/option-errors.test.ts), the command line says which flag was wrong, as a
 * usage error (exit 2), in text and in --json.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { ensureBuilt } from '../helpers/build.js';
import { cli } from '../helpers/cli.js';

beforeAll(ensureBuilt);
afterAll(removeTempDirs);

describe('engine option errors through the CLI', () => {
  it('a config flag, --group and --topic are named in the one error line', async () => {
    const root = makeTempDir();
    const dir = path.join(root, 't-0');
    expect((await cli('append', dir, '-v', 'a')).code).toBe(0);
    const seg = await cli('append', dir, '-v', 'b', '--segment-bytes', '5');
    expect(seg.code).toBe(2);
    expect(seg.stderr).toBe('error: --segment-bytes: segment.bytes must be at least 14, not 5\n');
    const json = await cli('append', dir, '-v', 'b', '--segment-bytes', '5', '--json');
    expect(JSON.parse(json.stderr)).toEqual({ error: { kind: 'usage', message: '--segment-bytes: segment.bytes must be at least 14, not 5', file: null, position: null, exitCode: 2 } });
    const group = await cli('consume', dir, '--group', 'two words');
    expect(group.code).toBe(2);
    expect(group.stderr).toMatch(/^error: --group: consumer group name must be 1 to 249 printable ASCII characters/);
    const topic = await cli('append', root, '--topic', '..', '--partition', '0', '-v', 'x');
    expect(topic.code).toBe(2);
    expect(topic.stderr).toMatch(/^error: --topic: topic name "\.\." is not allowed/);
  });
});
