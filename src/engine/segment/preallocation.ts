/**
 * Zero-filled preallocation of a segment's `.log` ahead of its write position (BookKeeper's journal
 * preallocation, not Kafka's sparse `file.preallocate`): an fdatasync after an append over blocks
 * already written need not commit a new file size. Scanners end quietly at these zeros
 * (file-records.ts `zeroTailIsEnd`); a roll or close trims them. An optimisation only: a failed
 * zero write (a full disk) stops it for the segment, the appended data is whole either way.
 */
import { assert } from '../errors.js';
import type { CachedFile } from './fd-cache.js';

/** Largest zero buffer one preallocation step writes. */
const PREALLOCATE_CHUNK_BYTES = 1 << 20;

export class SegmentPreallocation {
  /** Zeros kept written ahead of the write position (0: none). */
  aheadBytes = 0;
  /** Length of the `.log` file: the write position plus any zeros ahead of it. */
  private fileBytes: number;

  constructor(
    private readonly file: CachedFile,
    private readonly writable: boolean,
    fileBytes: number,
  ) {
    this.fileBytes = fileBytes;
  }

  /** An append moved the write position to `size`: zeros are written ahead if it passed them. */
  appended(size: number): void {
    if (size <= this.fileBytes) return;
    this.fileBytes = size;
    if (this.aheadBytes > 0) this.writeZeros(size, size + this.aheadBytes);
  }

  /** The `.log` was truncated to `size` (recovery, truncation): no zeros are left past it. */
  truncated(size: number): void {
    this.fileBytes = size;
  }

  /** Stops preallocating and cuts the zeros off at `size` (on roll and close); the next fdatasync commits the size. */
  trim(size: number): void {
    this.aheadBytes = 0;
    if (this.fileBytes <= size || !this.writable) return;
    this.file.truncate(size);
    this.fileBytes = size;
  }

  private writeZeros(size: number, toBytes: number): void {
    const zeros = Buffer.alloc(Math.min(PREALLOCATE_CHUNK_BYTES, toBytes - this.fileBytes));
    try {
      while (this.fileBytes < toBytes) {
        const n = this.file.write(zeros, 0, Math.min(zeros.length, toBytes - this.fileBytes), this.fileBytes);
        assert(n > 0, `short write of preallocated zeros`, { file: this.file.path, position: this.fileBytes });
        this.fileBytes += n;
      }
    } catch {
      // The zeros written so far are cut now if possible, else at roll or close (fileBytes > size).
      this.fileBytes = toBytes;
      try {
        this.trim(size);
      } catch {
        this.aheadBytes = 0;
      }
    }
  }
}
