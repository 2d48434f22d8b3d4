/**
 * Errors and output limits shared by the codecs. Every codec failure surfaces as a
 * CorruptDataError naming the codec, so recordsSection (and the legacy decoder) can add the batch
 * and file; native libraries' own exceptions never escape a codec.
 */
import { assert, CorruptDataError, LogtoolError } from '../../errors.js';

export function codecError(codec: string, message: string): CorruptDataError {
  return new CorruptDataError(`${codec}: ${message}`);
}

/** Re-throws anything a native library raised as a CorruptDataError naming the codec. */
export function wrapNative(codec: string, what: string, e: unknown): LogtoolError {
  if (e instanceof LogtoolError) return e;
  const detail = e instanceof Error ? e.message : String(e);
  return codecError(codec, `${what}: ${detail}`);
}

export function limitError(codec: string, maxOutputBytes: number, detail: string): CorruptDataError {
  return codecError(codec, `${detail}, over the limit of ${maxOutputBytes} decompressed bytes (maxDecompressedBytes)`);
}

/** A caller-supplied output limit must be sane (a programming error, not bad data, if not). */
export function checkLimit(maxOutputBytes: number): void {
  assert(Number.isSafeInteger(maxOutputBytes) && maxOutputBytes >= 0, `maxOutputBytes must be a non-negative integer, got ${maxOutputBytes}`);
}
