/**
 * zstd (codec 4, magic 2 only): standard RFC 8878 frames through zstd-napi. Kafka writes with
 * zstd-jni's streaming encoder at level 3; concatenated frames are read in sequence, as zstd-jni's
 * input stream does.
 *
 * Decompression streams into chunks no larger than what the limit still allows, so neither a
 * lying frame content size nor a bomb can make it allocate past maxOutputBytes. The decoder's
 * window (memory it allocates from the frame header) is capped with windowLogMax as well.
 */
import { createRequire } from 'node:module';
import type { Codec } from '../compression.js';
import { checkLimit, codecError, limitError, wrapNative } from './codec-error.js';

const require = createRequire(import.meta.url);
type ZstdLib = typeof import('zstd-napi');
type ZstdBinding = typeof import('zstd-napi/binding.js');
let zstdLib: ZstdLib | undefined;
let bindingLib: ZstdBinding | undefined;
/** The native add-on, loaded on the first zstd batch (registration costs nothing: issue 15). */
const zstd = (): ZstdLib => (zstdLib ??= require('zstd-napi') as ZstdLib);
const binding = (): ZstdBinding => (bindingLib ??= require('zstd-napi/binding') as ZstdBinding);

const NAME = 'zstd';
/** zstd-jni's (and Kafka's) default level. */
export const ZSTD_KAFKA_LEVEL = 3;
/**
 * Smallest window the decoder always accepts: 8 MiB covers what zstd-jni writes at levels up to
 * 19 when the input size is unknown (level 3 uses 2 MiB), however small the batch.
 */
const MIN_WINDOW_LOG = 23;
/** ZSTD_WINDOWLOG_MAX_64. */
const MAX_WINDOW_LOG = 31;
/** Output chunk when the frame does not state its size (ZSTD_DStreamOutSize is 128 KiB). */
const STREAM_CHUNK_BYTES = 256 * 1024;

let dctx: InstanceType<ZstdBinding['DCtx']> | undefined;

export function zstdCompress(data: Buffer): Buffer {
  return zstd().compress(data, { compressionLevel: ZSTD_KAFKA_LEVEL });
}

/** Window log the decoder may allocate for: the limit's, but never below MIN_WINDOW_LOG. */
function windowLogMaxFor(maxOutputBytes: number): number {
  const limitLog = maxOutputBytes > 0 ? Math.floor(Math.log2(maxOutputBytes)) : 0;
  return Math.min(MAX_WINDOW_LOG, Math.max(MIN_WINDOW_LOG, limitLog));
}

/** The first frame's declared content size, or undefined if absent or unreadable. */
function declaredContentSize(data: Buffer): number | undefined {
  try {
    return binding().getFrameContentSize(data) ?? undefined;
  } catch {
    return undefined; // garbage: the decoder below reports it properly
  }
}

export function zstdDecompress(data: Buffer, maxOutputBytes: number): Buffer {
  checkLimit(maxOutputBytes);
  // zstd-jni's input stream reports end-of-stream for empty input.
  if (data.length === 0) return Buffer.alloc(0);
  const declared = declaredContentSize(data);
  if (declared !== undefined && declared > maxOutputBytes) {
    throw limitError(NAME, maxOutputBytes, `frame declares ${declared} bytes`);
  }
  const ctx = (dctx ??= new (binding().DCtx)());
  const chunks: Buffer[] = [];
  let total = 0;
  let input = data;
  try {
    // A previous call may have failed mid-frame; start clean and apply this call's window cap.
    ctx.reset(binding().ResetDirective.sessionAndParameters);
    ctx.setParameter(binding().DParameter.windowLogMax, windowLogMaxFor(maxOutputBytes));
    let hintBytes = declared !== undefined ? declared : STREAM_CHUNK_BYTES;
    for (;;) {
      // One byte more than the limit allows, so that overrunning it is seen rather than clipped.
      const roomBytes = Math.max(1, Math.min(hintBytes, maxOutputBytes - total + 1));
      const out = Buffer.allocUnsafe(roomBytes);
      const [remaining, produced, consumed] = ctx.decompressStream(out, input);
      input = input.subarray(consumed);
      total += produced;
      if (total > maxOutputBytes) throw limitError(NAME, maxOutputBytes, 'stream decompresses');
      if (produced > 0) chunks.push(produced === roomBytes ? out : out.subarray(0, produced));
      const frameDone = remaining === 0;
      if (frameDone && input.length === 0) break;
      // Input used up mid-frame with output room to spare: the frame is cut short.
      if (!frameDone && input.length === 0 && produced < roomBytes) {
        throw codecError(NAME, `stream is truncated (frame incomplete after ${data.length} bytes)`);
      }
      if (!frameDone && produced === 0 && consumed === 0) throw codecError(NAME, 'decoder made no progress');
      hintBytes = STREAM_CHUNK_BYTES;
    }
  } catch (e) {
    throw wrapNative(NAME, 'cannot decompress', e);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

export const zstdCodec: Codec = { compress: zstdCompress, decompress: zstdDecompress };
