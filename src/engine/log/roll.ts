/**
 * Segment roll of one partition (Kafka's UnifiedLog.maybeRoll / LocalLog.roll; kafka-format.md §9):
 * the roll conditions evaluated before each append, and the roll itself, which seals the active
 * segment and creates the next one exclusively at the log end offset.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { InvalidArgumentError, LogtoolError, assert } from '../errors.js';
import { cleanupPolicy, type LogConfig } from '../config.js';
import { LogSegment } from '../segment/segment.js';
import { preallocationPolicy } from '../segment/preallocation.js';
import type { LogSegments } from './log-segments.js';

export interface RollHost {
  readonly io: FileIO;
  readonly dir: string;
  readonly config: LogConfig;
  readonly readOnly: boolean;
  readonly segments: LogSegments;
  /** The committed log end offset (the only offset a new segment may start at). */
  committedEndOffset(): number;
  /** Called with the segment a roll seals, before the new one is created (the flush glue syncs it). */
  onSealed(sealed: LogSegment): void;
  /** Called once the new segment is in the list (its directory entry needs a sync). */
  onRolled(): void;
}

export class Roller {
  private readonly host: RollHost;
  private readonly compacted: boolean;

  constructor(host: RollHost) {
    this.host = host;
    this.compacted = cleanupPolicy(host.config.cleanupPolicy).compact;
  }

  /**
   * segment.ms, or for a compacted log with max.compaction.lag.ms set, the smaller of the two
   * (Kafka's UnifiedLog), so that the active segment — never cleaned — becomes cleanable in time.
   */
  get maxSegmentMs(): number {
    const c = this.host.config;
    return this.compacted && c.maxCompactionLagMs > 0 ? Math.min(c.segmentMs, c.maxCompactionLagMs) : c.segmentMs;
  }

  /** Kafka's roll conditions (kafka-format.md §9), evaluated before each append. */
  maybeRoll(incomingBytes: number, incomingBaseOffset: number, incomingLastOffset: number, incomingMaxTimestamp: number): void {
    const seg = this.host.segments.active;
    const c = this.host.config;
    let reason: string | undefined;
    if (seg.size > c.segmentBytes - incomingBytes) reason = 'size';
    else if (seg.size > 0) {
      const first = seg.firstBatchMaxTimestamp();
      const waited = first >= 0 ? incomingMaxTimestamp - first : Date.now() - seg.createdMs;
      if (waited > this.maxSegmentMs) reason = 'time';
    }
    if (!reason && seg.indexesFull) reason = 'index full';
    if (!reason && incomingLastOffset - seg.baseOffset > 0x7fffffff) reason = 'offset overflow';
    if (!reason) return;
    if (seg.size === 0 && seg.baseOffset === incomingBaseOffset) return; // KAFKA-6388: nothing to roll
    this.roll(Math.max(incomingBaseOffset, this.host.committedEndOffset()));
  }

  /**
   * Seals the active segment and starts a new one at the log end offset (the only offset
   * newBaseOffset may name). Refuses any other offset, and the log end offset when a segment
   * already starts there (an empty active segment): below it the new segment would overlap
   * acknowledged data, above it the next records would fall below the segment's base. The new
   * `.log` is created exclusively, never reopened for truncation.
   */
  roll(newBaseOffset = this.host.committedEndOffset()): LogSegment {
    const { io, dir, config, segments } = this.host;
    const leo = this.host.committedEndOffset();
    if (this.host.readOnly) throw new LogtoolError('invalid-state', 'log was opened read-only', { file: dir });
    if (!Number.isSafeInteger(newBaseOffset) || newBaseOffset < leo) {
      throw new InvalidArgumentError(['newBaseOffset'], `cannot roll to offset ${newBaseOffset}: it is below the log end offset ${leo}`, { file: dir });
    }
    if (newBaseOffset > leo) {
      throw new InvalidArgumentError(['newBaseOffset'], `cannot roll to offset ${newBaseOffset}: it is above the log end offset ${leo}, so the next records would fall below the segment's base`, { file: dir });
    }
    const existing = segments.at(newBaseOffset);
    if (existing) {
      throw new LogtoolError('invalid-state', `cannot roll to offset ${newBaseOffset}: segment ${path.basename(existing.logPath)} already starts there`, { file: dir });
    }
    const old = segments.active;
    // Offsets across segments: everything in the sealed segment lies below the new base.
    assert(old.baseOffset < newBaseOffset, `roll to ${newBaseOffset} at or below the active segment's base ${old.baseOffset}`);
    old.onBecomeInactive();
    this.host.onSealed(old);
    const seg = new LogSegment({
      io,
      dir,
      baseOffset: newBaseOffset,
      indexIntervalBytes: config.indexIntervalBytes,
      maxIndexBytes: config.segmentIndexBytes,
      writable: true,
      create: 'exclusive',
      files: old.fdCache,
    });
    seg.preallocate(preallocationPolicy(config));
    seg.zeroTailIsEnd = true;
    segments.add(seg);
    this.host.onRolled();
    return seg;
  }
}
