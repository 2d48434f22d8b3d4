/**
 * gzip sizes its output buffer from the trailer's ISIZE (issue 9, item 9: an honest batch inflates
 * into one buffer, not chunks concatenated at twice the memory). A trailer that lies must change
 * nothing but memory: the output is exact and the limit still holds.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gzipDecompress } from '../../../src/engine/format/codecs/gzip.js';

const withIsize = (gz: Buffer, isize: number): Buffer => {
  const copy = Buffer.from(gz);
  copy.writeUInt32LE(isize >>> 0, copy.length - 4);
  return copy;
};

describe('gzip output sizing from ISIZE', () => {
  const raw = Buffer.alloc(3 << 20, 'abcdefgh');
  const gz = gzipSync(raw);

  it('an honest trailer inflates exactly', () => {
    expect(gz.readUInt32LE(gz.length - 4)).toBe(raw.length);
    expect(gzipDecompress(gz, 8 << 20).equals(raw)).toBe(true);
  });

  it('output exactly at the limit is accepted; one byte over is refused', () => {
    expect(gzipDecompress(gz, raw.length).length).toBe(raw.length);
    expect(() => gzipDecompress(gz, raw.length - 1)).toThrow(/over the limit/);
  });

  it('a trailer declaring far more or far less than the stream holds changes nothing but the buffer', () => {
    // zlib checks ISIZE itself: a lying trailer is a corrupt stream, reported, never misread.
    for (const isize of [0, 1, 0xffffffff, raw.length + 1]) {
      expect(() => gzipDecompress(withIsize(gz, isize), 8 << 20)).toThrow(/gzip/);
    }
  });

  it('concatenated members (the trailer states only the last) inflate whole', () => {
    const two = Buffer.concat([gzipSync(raw), gzipSync(Buffer.from('tail'))]);
    expect(gzipDecompress(two, 8 << 20).equals(Buffer.concat([raw, Buffer.from('tail')]))).toBe(true);
  });
});
