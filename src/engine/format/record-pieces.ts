/**
 * A batch's records section held as the pieces its codec produced (lz4's 64 KiB blocks, snappy's
 * 32 KiB xerial chunks) instead of one joined buffer (issue 15: joining copied every decompressed
 * byte into a fresh buffer per batch, about a fifth of an lz4 read's CPU). RecordDecoder takes
 * each record from the piece that holds it whole; the few records that straddle two pieces are
 * copied into a buffer of their own.
 *
 * Only records whose length varint is readable and whose declared length stays inside the section
 * are placed here; anything else (and any error while parsing a placed record) makes the decoder
 * join the pieces and go on from that record exactly as it would have from the joined buffer, so
 * every error stays the same, at the same record.
 */
import { BytesOf } from './byte-view.js';
import { joinPieces } from './compression.js';

export class RecordPieces {
  /** Bytes in all pieces: the records section's length. */
  readonly total: number;
  private readonly pieces: Buffer[];
  private readonly pieceViews: (BytesOf | undefined)[];
  /** The piece the last placed record began in, and its position in the section. */
  private k = 0;
  private kStart = 0;
  /** What place() found: the record is data[start, end); views cuts keys and values from data. */
  data: Buffer | undefined;
  views: BytesOf | undefined;
  start = 0;
  end = 0;

  constructor(pieces: Buffer[]) {
    this.pieces = pieces;
    this.pieceViews = new Array<BytesOf | undefined>(pieces.length);
    let total = 0;
    for (const p of pieces) total += p.length;
    this.total = total;
  }

  /** The section as one buffer (what the codec's decompress returns). */
  joined(): Buffer {
    return joinPieces(this.pieces);
  }

  /**
   * Finds the record starting at `at` (a position in the section): true when its length varint
   * reads and it ends inside the section, with data/start/end set; false when only the joined
   * section can tell what is wrong there.
   */
  place(at: number): boolean {
    const pieces = this.pieces;
    while (this.k + 1 < pieces.length && at >= this.kStart + pieces[this.k]!.length) {
      this.kStart += pieces[this.k]!.length;
      this.k++;
    }
    // The length varint (zig-zag, at most 5 bytes), which may itself straddle two pieces.
    let raw = 0;
    let n = 0;
    for (;;) {
      if (n === 5 || at + n >= this.total) return false;
      const b = this.byteAt(at + n);
      raw |= (b & 0x7f) << (7 * n);
      n++;
      if (b < 0x80) break;
    }
    const length = (raw >>> 1) ^ -(raw & 1);
    if (length < 0 || length > this.total - at - n) return false;
    const piece = pieces[this.k]!;
    const local = at - this.kStart;
    if (local + n + length <= piece.length) {
      this.data = piece;
      this.views = this.pieceViews[this.k] ??= new BytesOf(piece);
      this.start = local;
      this.end = local + n + length;
      return true;
    }
    const own = Buffer.allocUnsafe(n + length);
    for (let i = this.k, from = local, filled = 0; filled < own.length; i++, from = 0) {
      const p = pieces[i]!;
      const take = Math.min(p.length - from, own.length - filled);
      p.copy(own, filled, from, from + take);
      filled += take;
    }
    this.data = own;
    this.views = new BytesOf(own);
    this.start = 0;
    this.end = own.length;
    return true;
  }

  /** The section's byte at `at` (at < total), from the current piece on. */
  private byteAt(at: number): number {
    let i = this.k;
    let start = this.kStart;
    while (at >= start + this.pieces[i]!.length) start += this.pieces[i++]!.length;
    return this.pieces[i]![at - start]!;
  }
}
