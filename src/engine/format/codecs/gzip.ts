/**
 * gzip (codec 1): RFC 1952 through node:zlib, as Kafka's Java client writes it with
 * GZIPOutputStream at the default level. Reading accepts concatenated members, as Java's
 * GZIPInputStream does (node's gunzip continues into a following member too).
 */
import { constants as bufferConstants } from 'node:buffer';
import { constants, gunzipSync, gzipSync } from 'node:zlib';
import type { Codec } from '../compression.js';
import { checkLimit, codecError, limitError, wrapNative } from './codec-error.js';

const NAME = 'gzip';
/** deflate's best compression ratio is about 1032:1: no honest stream inflates past this. */
const MAX_DEFLATE_RATIO = 1032;

/**
 * zlib's output chunk: the size the gzip trailer declares (ISIZE, the last member's length mod
 * 2^32) plus one, so that an honest single-member stream — what Kafka's GZIPOutputStream writes —
 * inflates into one buffer instead of 16 KiB chunks concatenated at the end (twice the memory at
 * the peak). Never above the limit or what deflate's best ratio allows for this input, so a
 * lying trailer buys nothing; zlib's default chunk when the trailer says less.
 */
function outputChunkBytes(data: Buffer, maxOutputBytes: number): number {
  const declared = data.length >= 18 ? data.readUInt32LE(data.length - 4) : 0;
  return Math.max(constants.Z_DEFAULT_CHUNK, Math.min(declared + 1, maxOutputBytes + 1, data.length * MAX_DEFLATE_RATIO, bufferConstants.MAX_LENGTH));
}

export function gzipCompress(data: Buffer): Buffer {
  return gzipSync(data, { level: constants.Z_DEFAULT_COMPRESSION });
}

export function gzipDecompress(data: Buffer, maxOutputBytes: number): Buffer {
  checkLimit(maxOutputBytes);
  if (data.length === 0) throw codecError(NAME, 'empty payload (no gzip header)');
  let out: Buffer;
  try {
    // zlib stops as soon as its output passes maxOutputLength, so a bomb never gets inflated
    // past the limit. Node wants it in [1, buffer.constants.MAX_LENGTH]; the exact limit is
    // checked below.
    out = gunzipSync(data, { maxOutputLength: Math.min(Math.max(1, maxOutputBytes), bufferConstants.MAX_LENGTH), chunkSize: outputChunkBytes(data, maxOutputBytes) });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw limitError(NAME, maxOutputBytes, 'stream inflates');
    throw wrapNative(NAME, 'cannot inflate', e);
  }
  if (out.length > maxOutputBytes) throw limitError(NAME, maxOutputBytes, `stream inflates to ${out.length} bytes`);
  return out;
}

export const gzipCodec: Codec = { compress: gzipCompress, decompress: gzipDecompress };
