/**
 * The offset map (Kafka's SkimpyOffsetMap): MD5 of the key, exactly as node:crypto computes it,
 * whatever the key length, or for a key of at most 15 bytes the key itself mixed (distinct short
 * keys never share a digest, and their digests are never empty slots); later offsets overwrite; absent keys read −1; the map reports full at
 * slots × 0.9 without changing anything; memory is exactly slots × 24 bytes; every key put in
 * is found again at that load; and its marks of latest offsets answer as the lookup would.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { OffsetMap, OFFSET_MAP_ENTRY_BYTES } from '../../../src/engine/cleaner/offset-map.js';
import { keyDigestInto, md5Into, SHORT_KEY_MAX_BYTES } from '../../../src/engine/cleaner/key-digest.js';

describe('md5Into', () => {
  it('equals node:crypto MD5 for every key length and position', () => {
    const out = new Int32Array(4);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.nat({ max: 16 }), (bytes, pad) => {
        const buf = Buffer.concat([Buffer.alloc(pad, 7), Buffer.from(bytes), Buffer.alloc(3, 9)]);
        md5Into(buf, pad, pad + bytes.length, out);
        expect(Buffer.from(out.buffer).toString('hex')).toBe(crypto.createHash('md5').update(bytes).digest('hex'));
      }),
      { numRuns: 500 },
    );
    for (const n of [0, 55, 56, 63, 64, 119, 120, 128]) {
      const b = crypto.randomBytes(n);
      md5Into(b, 0, n, out);
      expect(Buffer.from(out.buffer).toString('hex')).toBe(crypto.createHash('md5').update(b).digest('hex'));
    }
  });
});

describe('keyDigestInto', () => {
  const digest = (b: Buffer, start = 0, end = b.length): string => {
    const out = new Int32Array(4);
    keyDigestInto(b, start, end, out);
    return Buffer.from(out.buffer).toString('hex');
  };

  it('gives every short key its own nonzero digest, wherever it sits, and the MD5 for longer keys', () => {
    // Every key of 0-2 bytes and many of 3-15: no two share a digest, none is all zeros.
    const seen = new Map<string, string>();
    const check = (k: Buffer): void => {
      const d = digest(Buffer.concat([Buffer.from([1, 2, 3]), k, Buffer.from([4])]), 3, 3 + k.length);
      expect(d).not.toBe('0'.repeat(32));
      expect(d).toBe(digest(k));
      const other = seen.get(d);
      if (other !== undefined) expect(other).toBe(k.toString('hex'));
      seen.set(d, k.toString('hex'));
    };
    check(Buffer.alloc(0));
    for (let a = 0; a < 256; a++) {
      check(Buffer.from([a]));
      for (let b = 0; b < 256; b += 7) check(Buffer.from([a, b]));
    }
    // Keys that differ only in trailing zero bytes, as padding would make them.
    for (let n = 0; n <= SHORT_KEY_MAX_BYTES; n++) check(Buffer.alloc(n));
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 3, maxLength: SHORT_KEY_MAX_BYTES }), (bytes) => check(Buffer.from(bytes))),
      { numRuns: 4_000 },
    );
    expect(seen.size).toBeGreaterThan(13_000);
    for (const n of [SHORT_KEY_MAX_BYTES + 1, 40, 200]) {
      const k = crypto.randomBytes(n);
      const out = new Int32Array(4);
      md5Into(k, 0, n, out);
      expect(digest(k)).toBe(Buffer.from(out.buffer).toString('hex'));
    }
  });

  it('scatters the probe window of similar short keys like a hash (first 4 bytes, as Kafka probes)', () => {
    const slots = 1 << 16;
    const used = new Set<number>();
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const out = new Int32Array(4);
      const k = Buffer.from(`key-${i}`);
      keyDigestInto(k, 0, k.length, out);
      used.add(Math.abs(Buffer.from(out.buffer).readInt32BE(0)) % slots);
    }
    // Random positions would fill 1 − e^(−n/slots) ≈ 26.3% of the slots: 17,250 distinct of 20,000.
    expect(used.size).toBeGreaterThan(16_800);
  });
});

describe('OffsetMap', () => {
  const key = (s: string) => Buffer.from(s);
  const put = (m: OffsetMap, k: string, o: number) => m.put(key(k), 0, Buffer.byteLength(k), o);
  const get = (m: OffsetMap, k: string) => m.get(key(k), 0, Buffer.byteLength(k));

  it('keeps the latest offset per key, −1 for absent keys, and tracks the latest offset mapped', () => {
    const m = new OffsetMap(24 * 100);
    expect(m.memoryBytes).toBe(2400);
    expect(m.slots).toBe(100);
    expect(m.maxEntries).toBe(90);
    expect(put(m, 'a', 5)).toBe(true);
    expect(put(m, 'b', 6)).toBe(true);
    expect(put(m, 'a', 9)).toBe(true);
    expect(get(m, 'a')).toBe(9);
    expect(get(m, 'b')).toBe(6);
    expect(get(m, 'zzz')).toBe(-1);
    expect(m.size).toBe(2);
    expect(m.latestOffset).toBe(9);
    m.clear();
    expect(get(m, 'a')).toBe(-1);
    expect(m.latestOffset).toBe(-1);
  });

  it('reports full at 90% of its slots and then changes nothing, not even existing keys', () => {
    const m = new OffsetMap(24 * 20);
    for (let i = 0; i < 18; i++) expect(put(m, `k${i}`, i)).toBe(true);
    expect(m.isFull).toBe(true);
    expect(put(m, 'k0', 100)).toBe(false);
    expect(put(m, 'new', 101)).toBe(false);
    expect(get(m, 'k0')).toBe(0);
    expect(get(m, 'new')).toBe(-1);
    expect(m.latestOffset).toBe(17);
  });

  it('finds every key again at full load (Kafka probing), with large offsets intact', () => {
    const slots = 5000;
    const m = new OffsetMap(slots * OFFSET_MAP_ENTRY_BYTES);
    const n = m.maxEntries;
    for (let i = 0; i < n; i++) expect(put(m, `key-${i}`, 2 ** 40 + i)).toBe(true);
    for (let i = 0; i < n; i++) expect(get(m, `key-${i}`)).toBe(2 ** 40 + i);
    for (let i = n; i < n + 200; i++) expect(get(m, `key-${i}`)).toBe(-1);
  });

  it('answers isLatest from its marks exactly as offset >= get(key), inside and outside the marked offsets, and hashes nothing for marked ones', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ k: fc.integer({ min: 0, max: 30 }), skip: fc.boolean(), gap: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 40, max: 100 }),
        (records, base, markOffsets, slots) => {
          const marked = new OffsetMap(slots * OFFSET_MAP_ENTRY_BYTES, undefined, markOffsets);
          const plain = new OffsetMap(slots * OFFSET_MAP_ENTRY_BYTES);
          expect(marked.markBytes).toBe(8 * Math.ceil(markOffsets / 32));
          marked.put(key('stale'), 0, 5, 3); // a previous round's entry: clear() drops it and its marks
          marked.clear(base);
          // Records from `base` on; `skip` ones are not mapped (as an aborted batch's), some before base.
          const log: { k: string; offset: number }[] = [];
          const mapped = new Set<number>();
          let offset = base - 5;
          for (const r of records) {
            offset += r.gap;
            log.push({ k: `k${r.k}`, offset });
            if (r.skip || offset < base) continue;
            const ok = put(marked, `k${r.k}`, offset);
            expect(ok).toBe(put(plain, `k${r.k}`, offset));
            if (ok) mapped.add(offset);
          }
          for (const { k, offset: o } of log) {
            const before = marked.lookups;
            expect(marked.isLatest(o, key(k), 0, Buffer.byteLength(k))).toBe(o >= get(plain, k));
            // Offsets mapped inside the marked range need no hash; every other one is looked up.
            expect(marked.lookups - before).toBe(mapped.has(o) && o - base < markOffsets ? 0 : 1);
          }
        },
      ),
    );
  });
});
