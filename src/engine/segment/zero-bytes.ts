/**
 * Zeros to write or compare against — preallocated space, as BookKeeper's journal writes it ahead
 * (preallocation.ts), the entries an index truncation drops (abstract-index.ts), and a log's zero
 * tail as readers find it (file-records.ts isZeroTail) — from one 1 MiB buffer per process, made
 * on first use and never written to: not a fresh zero-filled buffer per preallocation step,
 * truncation or tail check (each a fresh MiB whose pages fault in again on a VM that hands freed
 * memory back to its host).
 */
import { assert } from '../errors.js';

/** The most zeros one call gives. */
export const ZERO_BYTES_MAX = 1 << 20;

let zeros: Buffer | undefined;

/** `length` zero bytes (at most ZERO_BYTES_MAX), a view of the shared buffer: read it, never write it. */
export function zeroBytes(length: number): Buffer {
  if (!(length >= 0 && length <= ZERO_BYTES_MAX)) assert(false, `zeroBytes(${length}): at most ${ZERO_BYTES_MAX}`);
  return (zeros ??= Buffer.alloc(ZERO_BYTES_MAX)).subarray(0, length);
}

/** Writes zeros over a file's bytes [from, to), at most ZERO_BYTES_MAX per write. */
export function writeZeros(file: { readonly path: string; write(buf: Buffer, offset: number, length: number, position: number): number }, from: number, to: number): void {
  for (let at = from; at < to; ) {
    const len = Math.min(ZERO_BYTES_MAX, to - at);
    const n = file.write(zeroBytes(len), 0, len, at);
    assert(n > 0, 'short write of zeros', { file: file.path, position: at });
    at += n;
  }
}
