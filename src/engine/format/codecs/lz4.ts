/**
 * lz4 (codec 3) as an LZ4 *frame* in the exact shape of Kafka's KafkaLZ4BlockOutputStream
 * (kafka-format.md §2.7): magic 04 22 4D 18, FLG 0x60 (version 01, independent blocks, no
 * checksums, no content size), BD 0x40 (64 KiB blocks), HC = (xxh32(FLG‖BD) >> 8) & 0xFF, then
 * blocks as uint32 LE size (bit 31 = stored uncompressed) + data, and a zero end mark.
 *
 * Reading follows KafkaLZ4BlockInputStream: version 01, reserved bits 0, independent blocks only,
 * BD size code 4–7; an optional content size is skipped, block checksums are verified when
 * flagged, the content checksum is read but not verified, and bytes after the end mark are
 * ignored.
 *
 * Magic-0 messages carry the pre-KIP-57 bug: their HC was computed over magic‖FLG‖BD, so Kafka
 * writes it that way for magic 0 and does not verify HC when reading magic 0 (legacyHeaderChecksum).
 *
 * Blocks go through lz4-napi, whose block API is "uint32 LE size ‖ raw block": the size it reads
 * is only an output capacity (the block may decompress to less; more is an error), which is what
 * keeps a lying block from allocating past the limit.
 */
import { createRequire } from 'node:module';
import { joinPieces, type Codec } from '../compression.js';
import { checkLimit, codecError, limitError, wrapNative } from './codec-error.js';
import { xxh32 } from './xxhash32.js';

const require = createRequire(import.meta.url);
type Lz4Lib = typeof import('lz4-napi');
let lz4Lib: Lz4Lib | undefined;
/** The native add-on, loaded on the first lz4 batch (registration costs nothing: issue 15). */
const lz4 = (): Lz4Lib => (lz4Lib ??= require('lz4-napi') as Lz4Lib);

const NAME = 'lz4';
export const LZ4_FRAME_MAGIC = 0x184d2204;
const FLG_KAFKA = 0x60;
const BD_64KB = 0x40;
export const LZ4_KAFKA_BLOCK_BYTES = 64 * 1024;
const STORED_BIT = 0x80000000;
const SIZE_MASK = 0x7fffffff;

const FLG_VERSION_SHIFT = 6;
const FLG_BLOCK_INDEPENDENCE = 0x20;
const FLG_BLOCK_CHECKSUM = 0x10;
const FLG_CONTENT_SIZE = 0x08;
const FLG_CONTENT_CHECKSUM = 0x04;
const FLG_RESERVED = 0x03;

export interface Lz4FrameOptions {
  /**
   * Magic-0 quirk (KAFKA-3160): write HC over magic‖FLG‖BD, and do not verify HC when reading.
   * Set exactly for legacy magic-0 messages.
   */
  legacyHeaderChecksum?: boolean;
}

/** Compresses one block; undefined when LZ4 does not make it smaller (then it is stored). */
function compressBlock(block: Buffer): Buffer | undefined {
  // lz4-napi prefixes the uncompressed size (uint32 LE); the frame stores only the raw block.
  const packed = lz4().compressSync(block).subarray(4);
  return packed.length >= block.length ? undefined : packed;
}

export function lz4Compress(data: Buffer, opts: Lz4FrameOptions = {}): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.allocUnsafe(7);
  header.writeUInt32LE(LZ4_FRAME_MAGIC, 0);
  header[4] = FLG_KAFKA;
  header[5] = BD_64KB;
  header[6] = ((opts.legacyHeaderChecksum ? xxh32(header, 0, 6) : xxh32(header, 4, 6)) >>> 8) & 0xff;
  parts.push(header);
  for (let p = 0; p < data.length; p += LZ4_KAFKA_BLOCK_BYTES) {
    const block = data.subarray(p, Math.min(p + LZ4_KAFKA_BLOCK_BYTES, data.length));
    const packed = compressBlock(block);
    const size = Buffer.allocUnsafe(4);
    if (packed) {
      size.writeUInt32LE(packed.length, 0);
      parts.push(size, packed);
    } else {
      size.writeUInt32LE((block.length | STORED_BIT) >>> 0, 0);
      parts.push(size, block);
    }
  }
  parts.push(Buffer.alloc(4)); // end mark
  return Buffer.concat(parts);
}

/**
 * Decompresses the raw block at data[start, end) into at most capacityBytes; throws the library's
 * error otherwise. The library wants "uint32 LE size ‖ block": the block's own 4-byte size word
 * before it is overwritten with the capacity for the call and restored after it, instead of
 * copying every block into a new buffer (issue 15: the copy was a tenth of an lz4 read).
 */
function decompressBlock(data: Buffer, start: number, end: number, capacityBytes: number): Buffer {
  const word = data.readUInt32LE(start - 4);
  data.writeUInt32LE(capacityBytes, start - 4);
  try {
    return lz4().uncompressSync(data.subarray(start - 4, end));
  } finally {
    data.writeUInt32LE(word, start - 4);
  }
}

/** The frame descriptor (FLG, BD, optional content size, header checksum), checked as Kafka's KafkaLZ4BlockInputStream does. */
function readFrameHeader(data: Buffer, opts: Lz4FrameOptions): { flg: number; maxBlockBytes: number; pos: number } {
  if (data.length < 6) throw codecError(NAME, `frame of ${data.length} bytes is shorter than its header`);
  const magic = data.readUInt32LE(0);
  if (magic !== LZ4_FRAME_MAGIC) throw codecError(NAME, `bad frame magic 0x${magic.toString(16).padStart(8, '0')}`);
  const flg = data[4]!;
  const bd = data[5]!;
  const version = flg >>> FLG_VERSION_SHIFT;
  if (version !== 1) throw codecError(NAME, `frame version ${version} is unsupported`);
  if (flg & FLG_RESERVED) throw codecError(NAME, `FLG 0x${flg.toString(16)} has reserved bits set`);
  if (!(flg & FLG_BLOCK_INDEPENDENCE)) throw codecError(NAME, 'dependent (linked) blocks are unsupported, as in Kafka');
  const sizeCode = (bd >>> 4) & 0x07;
  if ((bd & 0x8f) !== 0) throw codecError(NAME, `BD 0x${bd.toString(16)} has reserved bits set`);
  if (sizeCode < 4) throw codecError(NAME, `BD block size code ${sizeCode} is invalid (4–7)`);
  const maxBlockBytes = 1 << (2 * sizeCode + 8);
  let pos = 6;
  if (flg & FLG_CONTENT_SIZE) {
    if (data.length - pos < 8) throw codecError(NAME, 'frame ends inside its content size');
    pos += 8; // Kafka skips it; the limit is enforced on what the blocks actually produce
  }
  if (pos >= data.length) throw codecError(NAME, 'frame ends before its header checksum');
  if (!opts.legacyHeaderChecksum) {
    const expected = (xxh32(data, 4, pos) >>> 8) & 0xff;
    if (data[pos] !== expected) throw codecError(NAME, `header checksum 0x${data[pos]!.toString(16)} does not match 0x${expected.toString(16)}`);
  }
  return { flg, maxBlockBytes, pos: pos + 1 };
}

export function lz4Decompress(data: Buffer, maxOutputBytes: number, opts: Lz4FrameOptions = {}): Buffer {
  const out = lz4DecompressBlocks(data, maxOutputBytes, opts, false);
  // One decompressed block is the library's own buffer; a stored one is a view of the input: copied.
  return out.length === 1 && out[0]!.buffer === data.buffer ? Buffer.from(out[0]!) : joinPieces(out);
}

/**
 * The frame's blocks decompressed, in order, not joined (what lz4Decompress joins, with the same
 * checks and errors): a reader that takes the records across them saves the copy of every byte
 * into a fresh buffer per batch (issue 15). A stored block is a view of `data` unless `copyStored`.
 */
export function lz4DecompressBlocks(data: Buffer, maxOutputBytes: number, opts: Lz4FrameOptions, copyStored: boolean): Buffer[] {
  checkLimit(maxOutputBytes);
  const header = readFrameHeader(data, opts);
  const { flg, maxBlockBytes } = header;
  let pos = header.pos;
  const blockChecksums = (flg & FLG_BLOCK_CHECKSUM) !== 0;
  const out: Buffer[] = [];
  let total = 0;
  for (;;) {
    if (data.length - pos < 4) throw codecError(NAME, `frame ends at byte ${pos} without an end mark`);
    const word = data.readUInt32LE(pos);
    const stored = (word & STORED_BIT) !== 0;
    const blockBytes = word & SIZE_MASK;
    const where = `block at byte ${pos}`;
    pos += 4;
    if (blockBytes === 0) {
      if (flg & FLG_CONTENT_CHECKSUM) {
        if (data.length - pos < 4) throw codecError(NAME, 'frame ends inside its content checksum');
        pos += 4; // read but not verified, as Kafka does
      }
      break;
    }
    if (blockBytes > maxBlockBytes) throw codecError(NAME, `${where} is ${blockBytes} bytes, above the frame's ${maxBlockBytes}-byte maximum`);
    if (blockBytes + (blockChecksums ? 4 : 0) > data.length - pos) throw codecError(NAME, `${where} runs past the end of the frame`);
    const blockStart = pos;
    const block = data.subarray(pos, pos + blockBytes);
    pos += blockBytes;
    if (blockChecksums) {
      const stated = data.readUInt32LE(pos);
      pos += 4;
      if (xxh32(block) !== stated) throw codecError(NAME, `${where} fails its checksum`);
    }
    const budgetBytes = maxOutputBytes - total;
    let piece: Buffer;
    if (stored) {
      if (blockBytes > budgetBytes) throw limitError(NAME, maxOutputBytes, `stored ${where} holds ${blockBytes} bytes with ${budgetBytes} left`);
      piece = block;
    } else {
      const capacityBytes = Math.min(maxBlockBytes, budgetBytes);
      try {
        piece = decompressBlock(data, blockStart, blockStart + blockBytes, capacityBytes);
      } catch (e) {
        const detail = e instanceof Error ? e.message : String(e);
        // lz4-napi reports "output is too small" when a block outgrows the capacity given.
        if (capacityBytes < maxBlockBytes && /too small/i.test(detail)) {
          throw limitError(NAME, maxOutputBytes, `${where} does not fit in the ${budgetBytes} bytes left`);
        }
        throw wrapNative(NAME, `${where} is not a valid LZ4 block of at most ${maxBlockBytes} bytes`, e);
      }
    }
    out.push(stored && copyStored ? Buffer.from(piece) : piece);
    total += piece.length;
  }
  return out;
}

export const lz4Codec: Codec = {
  compress: (data) => lz4Compress(data),
  decompress: (data, maxOutputBytes) => lz4Decompress(data, maxOutputBytes),
  decompressPieces: (data, maxOutputBytes) => lz4DecompressBlocks(data, maxOutputBytes, {}, true),
};
