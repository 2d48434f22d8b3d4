/**
 * Output (src/render/output.ts) into a real pipe whose reader starts late: the writer goes on
 * producing while the pipe drains, but never holds more than MAX_IN_FLIGHT_CHARS (plus one chunk)
 * in the stream's buffer, and every line arrives, in order (issue 15).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_IN_FLIGHT_CHARS, Output } from '../../src/render/output.js';
import { makeTempDir, removeTempDirs } from '../helpers/fixtures.js';

afterAll(removeTempDirs);

describe('Output into a pipe', () => {
  it('keeps at most its in-flight limit buffered behind a slow reader, and delivers every line in order', async () => {
    const tmp = makeTempDir();
    const file = path.join(tmp, 'out.txt');
    const go = path.join(tmp, 'go');
    // The reader starts only once told to (not after a fixed delay, which a loaded machine can
    // outlast before the first write): until then the writer meets backpressure.
    const child = spawn('sh', ['-c', `while [ ! -e "${go}" ]; do sleep 0.02; done; cat > "${file}"`], { stdio: ['pipe', 'ignore', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const out = new Output(child.stdin as unknown as NodeJS.WriteStream);
    const lineCount = 200_000; // ~8 MiB of ASCII, 8× the in-flight limit
    let maxBuffered = 0;
    // Released once a quarter of the in-flight limit is buffered; also after 10 s, so that an Output that stopped at the
    // stream's high-water mark fails the assertion below instead of hanging.
    let released = false;
    const release = () => {
      if (!released) fs.writeFileSync(go, '');
      released = true;
    };
    const fallback = setTimeout(release, 10_000);
    for (let i = 0; i < lineCount; i++) {
      await out.line(`${String(i).padStart(10, '0')}${'x'.repeat(30)}`);
      maxBuffered = Math.max(maxBuffered, child.stdin.writableLength);
      if (maxBuffered > MAX_IN_FLIGHT_CHARS / 4) release();
    }
    clearTimeout(fallback);
    release();
    await out.flush();
    child.stdin.end();
    expect(await exited).toBe(0);
    expect(maxBuffered).toBeGreaterThan(Math.max(MAX_IN_FLIGHT_CHARS / 4, child.stdin.writableHighWaterMark)); // it went on writing past the stream's high-water mark
    expect(maxBuffered).toBeLessThanOrEqual(MAX_IN_FLIGHT_CHARS + 128 * 1024);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.length).toBe(lineCount);
    for (let i = 0; i < lineCount; i += 9_973) expect(lines[i]!.slice(0, 10)).toBe(String(i).padStart(10, '0'));
    expect(lines.every((l, i) => Number(l.slice(0, 10)) === i)).toBe(true);
  });
});
