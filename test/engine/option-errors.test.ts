/**
 * The engine's errors about option values (issue 11): an InvalidArgumentError, kind
 * `invalid-argument` (exit 2), naming the option as the library spells it (`segmentBytes`, `group`,
 * `compression`, `topic`), never a command-line flag; the CLI names its flags (test/commands/flag-errors.test.ts).
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Channel, Log, LogtoolError, ConsumerPositions } from '../../src/api.js';
import { InvalidArgumentError } from '../../src/engine/errors.js';
import { requireValidTopicName } from '../../src/engine/log/topic-partition.js';
import { parseCompression } from '../../src/engine/format/compression.js';
import { exactTimestamp } from '../../src/engine/format/batch-header.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import { thrown } from '../helpers/errors.js';

afterAll(removeTempDirs);

function caught(f: () => unknown): InvalidArgumentError {
  const err = thrown(f, InvalidArgumentError);
  expect(err).toBeInstanceOf(LogtoolError);
  expect(err.kind).toBe('invalid-argument');
  expect(err.exitCode).toBe(2);
  expect(err.message).not.toMatch(/--[a-z]/);
  return err;
}

describe('option errors name the option, not a flag', () => {
  it('a config value, a group name, an offset, a codec, a timestamp and a topic name', async () => {
    const dir = path.join(makeTempDir(), 't-0');
    expect(caught(() => Log.open(dir, { config: { segmentBytes: 5 } })).options).toEqual(['segmentBytes']);
    const log = Log.open(dir);
    try {
      await log.append([{ key: null, value: Buffer.from('a') }]);
      const positions = new ConsumerPositions(log);
      expect(caught(() => positions.commit('two words', 0)).options).toEqual(['group']);
      expect(caught(() => positions.commit('g', -1)).options).toEqual(['offset']);
      expect(caught(() => log.deleteRecordsBefore(-1)).options).toEqual(['offset']);
      expect(caught(() => new Channel(log, { group: 'g', capacity: 0 })).options).toEqual(['capacity']);
      expect(caught(() => new Channel(log, { group: 'g', keepAliveMs: -1 })).options).toEqual(['keepAliveMs']);
    } finally {
      await log.close();
    }
    expect(caught(() => requireValidTopicName('a/b')).options).toEqual(['topic']);
    expect(caught(() => parseCompression('brotli')).options).toEqual(['compression']);
    expect(caught(() => exactTimestamp(1.5)).options).toEqual(['timestamp']);
  });
});
