/**
 * Zero-filled preallocation of a segment's `.log` ahead of its write position (BookKeeper's journal
 * preallocation, not Kafka's sparse `file.preallocate`): an fdatasync after an append over blocks
 * already written need not commit a new file size. Scanners end quietly at these zeros
 * (file-records.ts `zeroTailIsEnd`); a roll or close trims them. An optimisation only: a failed
 * zero write (a full disk) stops it for the segment, the appended data is whole either way.
 *
 * The default (`preallocateBytes` -1) is sync mode's: 1 MiB ahead while the fdatasyncs since the
 * last step committed at most 64 KiB each on average. The zeros reach the disk as well as the data,
 * so they pay only where an fdatasync's fixed cost (the size commit) outweighs its bytes: one
 * producer of small appends and the groups of a few hundred (~43 KB per fdatasync for 256 one-record
 * appends), not 100 KB appends, not a one-shot append.
 */
import type { LogConfig } from '../config.js';
import type { CachedFile } from './fd-cache.js';
import { writeZeros } from './zero-bytes.js';

/**
 * Sync mode's default: zeros kept ahead. Any size writes as many zeros as data in the end; a
 * smaller one only adds a size commit per step (1 in ~6,000 appends of 100 B) and bounds the zeros
 * one append writes on the event loop and its fdatasync carries to the disk (docs/performance.md).
 */
export const SYNC_DEFAULT_PREALLOCATE_BYTES = 1 << 20;
/**
 * Sync mode's default preallocates while fdatasyncs commit at most this many bytes each on average:
 * above a 256-producer group of one-record appends (~43 KB, faster with zeros ahead), below 100 KB
 * appends (slower with them on a quiet disk; docs/performance.md).
 */
export const SYNC_DEFAULT_MAX_BYTES_PER_SYNC = 64 << 10;

/** How a writer's active segment preallocates. */
export interface PreallocationPolicy {
  /** Zeros kept written ahead of the write position (0: none). */
  readonly aheadBytes: number;
  /** Zeros are written only while the fdatasyncs since the last step averaged at most this (Infinity: always). */
  readonly maxBytesPerSync: number;
  /** segment.bytes: no zeros past it (the segment rolls before its data would reach them). */
  readonly segmentBytes: number;
}

/** An explicit `preallocateBytes` (0 included) as given; the default (-1): sync mode's, none for async and buffered. */
export function preallocationPolicy(config: Pick<LogConfig, 'preallocateBytes' | 'flushMode' | 'segmentBytes'>): PreallocationPolicy {
  const { segmentBytes } = config;
  if (config.preallocateBytes >= 0) return { aheadBytes: config.preallocateBytes, maxBytesPerSync: Infinity, segmentBytes };
  if (config.flushMode !== 'sync') return { aheadBytes: 0, maxBytesPerSync: Infinity, segmentBytes };
  return { aheadBytes: SYNC_DEFAULT_PREALLOCATE_BYTES, maxBytesPerSync: SYNC_DEFAULT_MAX_BYTES_PER_SYNC, segmentBytes };
}

export class SegmentPreallocation {
  /** Zeros kept written ahead of the write position (0: none). */
  aheadBytes = 0;
  /** See PreallocationPolicy. */
  maxBytesPerSync = Infinity;
  segmentBytes = Infinity;
  /** Length of the `.log` file: the write position plus any zeros ahead of it. */
  private fileBytes: number;
  /** The write position when the last append passed the zeros' end, and fdatasyncs of new bytes since then. */
  private stepStartBytes: number;
  private syncsSinceStep = 0;
  /** The write position, and where it was at the last fdatasync. */
  private size: number;
  private syncedSize: number;

  constructor(
    private readonly file: CachedFile,
    private readonly writable: boolean,
    fileBytes: number,
  ) {
    this.fileBytes = fileBytes;
    this.stepStartBytes = fileBytes;
    this.size = fileBytes;
    this.syncedSize = fileBytes;
  }

  setPolicy(policy: PreallocationPolicy): void {
    this.aheadBytes = policy.aheadBytes;
    this.maxBytesPerSync = policy.maxBytesPerSync;
    this.segmentBytes = policy.segmentBytes;
  }

  /** An append moved the write position to `size`: zeros are written ahead if it passed them. */
  appended(size: number): void {
    this.size = size;
    if (size <= this.fileBytes) return;
    this.fileBytes = size;
    const toBytes = Math.min(size + this.aheadBytes, this.segmentBytes);
    if (toBytes > size && this.syncsAreSmall(size)) this.writeZeros(size, toBytes);
    this.stepStartBytes = size;
    this.syncsSinceStep = 0;
  }

  /** The `.log` was fdatasynced (one that committed no new bytes is not counted). */
  synced(): void {
    if (this.size === this.syncedSize) return;
    this.syncedSize = this.size;
    this.syncsSinceStep++;
  }

  /** Whether the fdatasyncs since the last step averaged at most maxBytesPerSync (none yet: not known, no). */
  private syncsAreSmall(size: number): boolean {
    if (this.maxBytesPerSync === Infinity) return true;
    return this.syncsSinceStep > 0 && size - this.stepStartBytes <= this.maxBytesPerSync * this.syncsSinceStep;
  }

  /** The `.log` was truncated to `size` (recovery, truncation): no zeros are left past it. */
  truncated(size: number): void {
    this.fileBytes = size;
    this.size = size;
    this.syncedSize = Math.min(this.syncedSize, size);
    this.stepStartBytes = Math.min(this.stepStartBytes, size);
  }

  /** Stops preallocating and cuts the zeros off at `size` (on roll and close); the next fdatasync commits the size. */
  trim(size: number): void {
    this.aheadBytes = 0;
    if (this.fileBytes <= size || !this.writable) return;
    this.file.truncate(size);
    this.fileBytes = size;
  }

  private writeZeros(size: number, toBytes: number): void {
    try {
      writeZeros(this.file, this.fileBytes, toBytes); // the process's shared zeros, 1 MiB a write
      this.fileBytes = toBytes;
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
