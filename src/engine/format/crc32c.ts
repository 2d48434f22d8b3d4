/**
 * CRC-32C (Castagnoli) as Kafka's v2 batches use it, and CRC-32 (IEEE) for legacy v0/v1 messages.
 * Large inputs go to a native add-on: CRC-32C to sse4_crc32's inline crc32 instruction loop on x86
 * with SSE 4.2 (~1.4× @node-rs/crc32's speed on a 5 KB batch, docs/performance.md), else, and for
 * CRC-32, to @node-rs/crc32 (SSE4.2 / ARM CRC instructions). Below `nativeThresholdBytes` the cost
 * of crossing into native code outweighs the work, so a slice-by-16 table in JS is used;
 * `logtool bench` measures where that crossover sits on a machine.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
type NativeCrc = { crc32c(input: Buffer, initial?: number): number; crc32(input: Buffer, initial?: number): number };
type Crc32cFn = (input: Buffer, initial: number) => number;
let nativeLib: NativeCrc | undefined;
/** The native add-on, loaded on the first checksum that needs it (not at start-up: issue 15). */
const native = (): NativeCrc => (nativeLib ??= require('@node-rs/crc32') as NativeCrc);
let nativeCrc32cFn: Crc32cFn | undefined;
/**
 * sse4_crc32's hardware function, loaded straight from its build (its index.js loads `bindings`,
 * which searches the file system, and a stream class). Where it is not built (an optional
 * dependency: a failed node-gyp build or no compiler) or the CPU lacks SSE 4.2 (its own fallback is
 * a byte table, slower than @node-rs/crc32's ARM CRC instructions), @node-rs/crc32.
 */
function loadCrc32c(): Crc32cFn {
  try {
    const sse = require('sse4_crc32/build/Release/crc32c.node') as { hardware_support: boolean; sse42_crc: Crc32cFn };
    if (sse.hardware_support) {
      crc32cAddOn = 'sse4_crc32';
      return sse.sse42_crc;
    }
  } catch {
    // not built here: @node-rs/crc32 below
  }
  crc32cAddOn = '@node-rs/crc32';
  return native().crc32c;
}
let crc32cAddOn: 'sse4_crc32' | '@node-rs/crc32' | undefined;
/** The add-on native CRC-32C calls go to (loading it), and its function, for the tests and bench. */
export function nativeCrc32c(): { addOn: 'sse4_crc32' | '@node-rs/crc32'; fn: Crc32cFn } {
  const fn = (nativeCrc32cFn ??= loadCrc32c());
  return { addOn: crc32cAddOn!, fn };
}

/** Slice-by-16 tables of `poly` (reflected): table t maps a byte to its CRC shifted by t more bytes. */
function makeTables(poly: number): Int32Array[] {
  const tables: Int32Array[] = [];
  const t0 = new Int32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ poly : c >>> 1;
    t0[i] = c;
  }
  tables.push(t0);
  for (let t = 1; t < 16; t++) {
    const prev = tables[t - 1]!;
    const cur = new Int32Array(256);
    for (let i = 0; i < 256; i++) cur[i] = (prev[i]! >>> 8) ^ t0[prev[i]! & 0xff]!;
    tables.push(cur);
  }
  return tables;
}

// Int32Array, not Uint32Array: an entry with its top bit set stays an int32 in optimised code.
const C = makeTables(0x82f63b78);
const [c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15] = C as [
  Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array,
  Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array,
];

/**
 * Pure-JS CRC-32C over buf[start, end). `initial` is the CRC of the bytes before (0 for none), so
 * a long input can be checked in bounded chunks: crc32c(b) === crc32c(b2, 0, b2.length, crc32c(b1)).
 * Slice-by-16 (16 bytes per step, one table lookup per byte): about 1.1–1.7× the speed of
 * slice-by-8 from 150 B up (docs/performance.md), the size of a one-record batch.
 */
export function crc32cJs(buf: Uint8Array, start = 0, end = buf.length, initial = 0): number {
  let crc = ~initial;
  let i = start;
  const stop16 = end - ((end - start) & 15);
  while (i < stop16) {
    const a = crc ^ (buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24));
    crc =
      c15[a & 0xff]! ^
      c14[(a >>> 8) & 0xff]! ^
      c13[(a >>> 16) & 0xff]! ^
      c12[a >>> 24]! ^
      c11[buf[i + 4]!]! ^
      c10[buf[i + 5]!]! ^
      c9[buf[i + 6]!]! ^
      c8[buf[i + 7]!]! ^
      c7[buf[i + 8]!]! ^
      c6[buf[i + 9]!]! ^
      c5[buf[i + 10]!]! ^
      c4[buf[i + 11]!]! ^
      c3[buf[i + 12]!]! ^
      c2[buf[i + 13]!]! ^
      c1[buf[i + 14]!]! ^
      c0[buf[i + 15]!]!;
    i += 16;
  }
  while (i < end) crc = (crc >>> 8) ^ c0[(crc ^ buf[i++]!) & 0xff]!;
  return ~crc >>> 0;
}

/** Inputs shorter than this are checksummed in JS (measured in `logtool bench`). */
export let nativeThresholdBytes = 384;
export function setNativeThresholdBytes(n: number): void {
  nativeThresholdBytes = n;
}

/** CRC-32C over buf[start, end), unsigned, continuing from `initial` (the CRC of the bytes before). */
export function crc32c(buf: Buffer, start = 0, end = buf.length, initial = 0): number {
  if (end - start < nativeThresholdBytes) return crc32cJs(buf, start, end, initial);
  return (nativeCrc32cFn ??= loadCrc32c())(start === 0 && end === buf.length ? buf : buf.subarray(start, end), initial) >>> 0;
}

/** CRC-32 (IEEE, zlib) over buf[start, end), unsigned, continuing from `initial` — legacy v0/v1 messages. */
export function crc32(buf: Buffer, start = 0, end = buf.length, initial = 0): number {
  return native().crc32(start === 0 && end === buf.length ? buf : buf.subarray(start, end), initial) >>> 0;
}
