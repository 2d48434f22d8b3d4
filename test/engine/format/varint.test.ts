/**
 * Zig-zag varints (kafka-format.md §1, fact 3): bytes checked against an independent BigInt
 * reference encoder, round trips over the whole int32 range and the safe-integer varlong range,
 * Kafka's known vectors, and malformed input (too long, truncated) as CorruptDataError.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readVarint, readVarlong, sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from '../../../src/engine/format/varint.js';
import { CorruptDataError } from '../../../src/engine/errors.js';

/** Reference: zig-zag then base-128 little-endian groups, computed with BigInt. */
function refEncode(n: number, bits: 32 | 64): Buffer {
  const b = BigInt(n);
  let v = BigInt.asUintN(bits, (b << 1n) ^ (b >> BigInt(bits - 1)));
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

function encode32(n: number): Buffer {
  const buf = Buffer.alloc(10);
  const end = writeVarint(buf, 0, n);
  return buf.subarray(0, end);
}

function encode64(n: number): Buffer {
  const buf = Buffer.alloc(12);
  const end = writeVarlong(buf, 0, n);
  return buf.subarray(0, end);
}

const int32 = fc.integer({ min: -0x80000000, max: 0x7fffffff });
const safeLong = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.integer({ min: -0x80000000, max: 0x7fffffff }),
  fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 52, -(2 ** 52), 2 ** 53 - 1),
);

describe('varint (int32)', () => {
  it('encodes Kafka vectors byte for byte', () => {
    const vectors: [number, string][] = [
      [0, '00'],
      [-1, '01'],
      [1, '02'],
      [10, '14'],
      [63, '7e'],
      [-64, '7f'],
      [64, '8001'],
      [-65, '8101'],
      [0x7fffffff, 'feffffff0f'],
      [-0x80000000, 'ffffffff0f'],
    ];
    for (const [n, h] of vectors) {
      expect(encode32(n).toString('hex'), `${n}`).toBe(h);
      expect(readVarint(Buffer.from(h, 'hex'), { pos: 0 }, h.length / 2)).toBe(n);
    }
  });

  it('matches the reference encoder and round-trips every int32', () => {
    fc.assert(
      fc.property(int32, (n) => {
        const enc = encode32(n);
        expect(enc.toString('hex')).toBe(refEncode(n, 32).toString('hex'));
        expect(sizeOfVarint(n)).toBe(enc.length);
        const cur = { pos: 0 };
        expect(readVarint(enc, cur, enc.length)).toBe(n);
        expect(cur.pos).toBe(enc.length);
      }),
      { numRuns: 2000, seed: 42 },
    );
  });

  it('reads a sequence back-to-back with the cursor', () => {
    fc.assert(
      fc.property(fc.array(int32, { maxLength: 50 }), (ns) => {
        const buf = Buffer.alloc(ns.length * 5 + 1);
        let p = 0;
        for (const n of ns) p = writeVarint(buf, p, n);
        const cur = { pos: 0 };
        for (const n of ns) expect(readVarint(buf, cur, p)).toBe(n);
        expect(cur.pos).toBe(p);
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('rejects a 5th byte with the continuation bit and a truncated varint', () => {
    expect(() => readVarint(Buffer.from('ffffffff8f01', 'hex'), { pos: 0 }, 6)).toThrow(CorruptDataError);
    expect(() => readVarint(Buffer.from('8080', 'hex'), { pos: 0 }, 2)).toThrow(CorruptDataError);
    expect(() => readVarint(Buffer.alloc(0), { pos: 0 }, 0)).toThrow(CorruptDataError);
    // The end bound is honoured even when the buffer continues.
    expect(() => readVarint(Buffer.from('8001', 'hex'), { pos: 0 }, 1)).toThrow(CorruptDataError);
  });

  it('never throws anything but CorruptDataError on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), (bytes) => {
        const buf = Buffer.from(bytes);
        try {
          const cur = { pos: 0 };
          const v = readVarint(buf, cur, buf.length);
          expect(Number.isInteger(v)).toBe(true);
          expect(v).toBeGreaterThanOrEqual(-0x80000000);
          expect(v).toBeLessThanOrEqual(0x7fffffff);
          expect(cur.pos).toBeLessThanOrEqual(5);
        } catch (e) {
          expect(e).toBeInstanceOf(CorruptDataError);
        }
      }),
      { numRuns: 1000, seed: 3 },
    );
  });
});

describe('varlong (int64 within the safe-integer range)', () => {
  it('encodes vectors byte for byte', () => {
    const vectors: [number, string][] = [
      [0, '00'],
      [-1, '01'],
      [1, '02'],
      [2 ** 31, '8080808010'],
      [-(2 ** 31) - 1, '8180808010'],
      [1700000000000, refEncode(1700000000000, 64).toString('hex')],
    ];
    for (const [n, h] of vectors) {
      expect(encode64(n).toString('hex'), `${n}`).toBe(h);
      expect(readVarlong(Buffer.from(h, 'hex'), { pos: 0 }, h.length / 2)).toBe(n);
    }
  });

  it('matches the reference encoder and round-trips', () => {
    fc.assert(
      fc.property(safeLong, (n) => {
        const enc = encode64(n);
        expect(enc.toString('hex')).toBe(refEncode(n, 64).toString('hex'));
        expect(sizeOfVarlong(n)).toBe(enc.length);
        const cur = { pos: 0 };
        expect(readVarlong(enc, cur, enc.length)).toBe(n);
        expect(cur.pos).toBe(enc.length);
      }),
      { numRuns: 2000, seed: 42 },
    );
  });

  it('reads the encodings of the int64 extremes written by Java without throwing', () => {
    // Long.MIN_VALUE / MAX_VALUE as Kafka writes them (10 bytes); JS numbers lose precision
    // beyond 2^53 but the reader must consume exactly 10 bytes and stay finite.
    for (const n of [-(2n ** 63n), 2n ** 63n - 1n]) {
      let v = BigInt.asUintN(64, (n << 1n) ^ (n >> 63n));
      const out: number[] = [];
      while (v >= 0x80n) {
        out.push(Number(v & 0x7fn) | 0x80);
        v >>= 7n;
      }
      out.push(Number(v));
      const cur = { pos: 0 };
      const got = readVarlong(Buffer.from(out), cur, out.length);
      expect(cur.pos).toBe(10);
      expect(Number.isFinite(got)).toBe(true);
      expect(Math.sign(got)).toBe(n < 0n ? -1 : 1);
    }
  });

  it('rejects more than 10 bytes and truncation', () => {
    expect(() => readVarlong(Buffer.from('ffffffffffffffffffff01', 'hex'), { pos: 0 }, 11)).toThrow(CorruptDataError);
    expect(() => readVarlong(Buffer.from('ff', 'hex'), { pos: 0 }, 1)).toThrow(CorruptDataError);
  });

  it('never throws anything but CorruptDataError on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 14 }), (bytes) => {
        const buf = Buffer.from(bytes);
        try {
          const cur = { pos: 0 };
          const v = readVarlong(buf, cur, buf.length);
          expect(Number.isFinite(v)).toBe(true);
          expect(cur.pos).toBeLessThanOrEqual(10);
        } catch (e) {
          expect(e).toBeInstanceOf(CorruptDataError);
        }
      }),
      { numRuns: 1000, seed: 5 },
    );
  });
});
