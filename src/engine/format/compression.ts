/**
 * Compression codec registry for v2 batches (attribute bits 0–2). Codecs register themselves
 * (see codecs/); a batch whose codec is not registered is reported, never misread.
 */
import { InvalidArgumentError } from '../errors.js';

export const CompressionType = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
export type CompressionName = keyof typeof CompressionType;
export const compressionNames: readonly CompressionName[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

export function compressionName(id: number): string {
  return compressionNames[id] ?? `unknown(${id})`;
}

export function parseCompression(name: string): number {
  const id = (CompressionType as Record<string, number>)[name];
  if (id === undefined) throw new InvalidArgumentError(['compression'], `unknown compression "${name}" (choose ${compressionNames.join(', ')})`);
  return id;
}

export interface Codec {
  /** Compresses the concatenated records section of a batch. */
  compress(data: Buffer): Buffer;
  /**
   * Decompresses, refusing to produce more than maxOutputBytes (a lying or malicious stream must
   * not exhaust memory). Throws CorruptDataError (or any Error) on bad input. A result that is a
   * view of data is copied by the reader (records are never views of a compressed batch's bytes).
   */
  decompress(data: Buffer, maxOutputBytes: number): Buffer;
  /**
   * Optional: what decompress returns, as the pieces the codec produced (their concatenation is
   * decompress's result; the same checks and errors; none a view of data), for a reader that can
   * take records across them instead of joining them (lz4's blocks, snappy's xerial chunks).
   */
  decompressPieces?(data: Buffer, maxOutputBytes: number): Buffer[];
}

/**
 * A codec's pieces joined (decompressPieces' contract: their concatenation is decompress's result):
 * a lone piece is itself, more are copied into one buffer.
 */
export function joinPieces(pieces: Buffer[]): Buffer {
  if (pieces.length === 1) return pieces[0]!;
  let total = 0;
  for (const p of pieces) total += p.length;
  return Buffer.concat(pieces, total);
}

const codecs = new Map<number, Codec>();

export function registerCodec(id: number, codec: Codec): void {
  codecs.set(id, codec);
}

export function codecFor(id: number): Codec | undefined {
  return codecs.get(id);
}
