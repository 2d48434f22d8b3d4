/**
 * A channel's capacities and counters, as Flume's MemoryChannel has them (org.apache.flume.channel.
 * MemoryChannel: `capacity`, `byteCapacity`, `transactionCapacity`, `keep-alive`; ChannelCounter):
 * the options and their defaults, their validation, the counters, and the channel's size — records
 * and log bytes between the committed take position and the log end (channel.ts).
 */
import { InvalidArgumentError } from '../errors.js';
import type { AppendOptions, Log } from '../log/log.js';

export interface ChannelOptions {
  /** Consumer group whose committed position is the take cursor. */
  group: string;
  /** Most records between the take position and the log end (Flume `capacity`; default 10 000). */
  capacity?: number;
  /**
   * Most log bytes (encoded batches, as on disk) between the take position and the log end
   * (Flume `byteCapacity`; default 64 MiB).
   */
  capacityBytes?: number;
  /** Most records put or taken in one transaction (Flume `transactionCapacity`; default 1000). */
  transactionCapacity?: number;
  /**
   * Most record bytes (key + value + header keys and values) staged in one put transaction
   * (default 1 MiB; the encoded batch must also fit the log's max.message.bytes).
   */
  transactionCapacityBytes?: number;
  /** How long a full put commit waits for room, and takeWait() for a record (Flume `keepAlive`; default 3000 ms). */
  keepAliveMs?: number;
  /** Options of every append a put commit makes (flush mode, compression …). */
  appendOptions?: AppendOptions;
}

/** Flume's channel counters (ChannelCounter), plus the current size. */
export interface ChannelCounters {
  /** put() calls. */
  putAttempts: number;
  /** Records appended by committed put transactions. */
  putSuccesses: number;
  /** take() calls (takeWait counts once per call). */
  takeAttempts: number;
  /** Records whose take was committed. */
  takeSuccesses: number;
  /** Put and take transactions rolled back. */
  rollbacks: number;
  /** Records between the committed take position and the log end offset. */
  sizeRecords: number;
  /** Log bytes between the committed take position and the log end. */
  sizeBytes: number;
  capacityRecords: number;
  capacityBytes: number;
}

/** The counters a channel's transactions move (ChannelCounters without the size). */
export type ChannelStats = Omit<ChannelCounters, 'sizeRecords' | 'sizeBytes' | 'capacityRecords' | 'capacityBytes'>;

/** A put or take transaction's state. */
export type TxState = 'open' | 'committing' | 'committed' | 'rolled-back';

export const DEFAULT_CHANNEL_CAPACITY = 10_000;
export const DEFAULT_CHANNEL_CAPACITY_BYTES = 64 * 1024 * 1024;
export const DEFAULT_TRANSACTION_CAPACITY = 1000;
export const DEFAULT_TRANSACTION_CAPACITY_BYTES = 1024 * 1024;
export const DEFAULT_KEEP_ALIVE_MS = 3000;
/** How often waits re-check (a put by another writer path, or buffered data reaching the file). */
export const POLL_INTERVAL_MS = 20;

/** The capacities of ChannelOptions, defaults applied and checked. */
export type ChannelCapacities = Required<Pick<ChannelOptions, 'capacity' | 'capacityBytes' | 'transactionCapacity' | 'transactionCapacityBytes' | 'keepAliveMs'>>;

function positiveInt(name: string, v: number | undefined, def: number): number {
  const n = v ?? def;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError([name], `${name} must be a positive integer, not ${v}`);
  return n;
}

/** The options' capacities, or an invalid-argument error naming the option. */
export function channelCapacities(options: ChannelOptions): ChannelCapacities {
  const capacity = positiveInt('capacity', options.capacity, DEFAULT_CHANNEL_CAPACITY);
  const capacityBytes = positiveInt('capacityBytes', options.capacityBytes, DEFAULT_CHANNEL_CAPACITY_BYTES);
  const transactionCapacity = positiveInt('transactionCapacity', options.transactionCapacity, DEFAULT_TRANSACTION_CAPACITY);
  const transactionCapacityBytes = positiveInt('transactionCapacityBytes', options.transactionCapacityBytes, DEFAULT_TRANSACTION_CAPACITY_BYTES);
  const keepAlive = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
  if (!Number.isSafeInteger(keepAlive) || keepAlive < 0) throw new InvalidArgumentError(['keepAliveMs'], `keepAliveMs must be a non-negative integer, not ${options.keepAliveMs}`);
  if (transactionCapacity > capacity) throw new InvalidArgumentError(['transactionCapacity', 'capacity'], `transactionCapacity (${transactionCapacity}) must not exceed capacity (${capacity})`);
  return { capacity, capacityBytes, transactionCapacity, transactionCapacityBytes, keepAliveMs: keepAlive };
}

/** The channel's size from a take position: records and log bytes up to the log end. */
export class ChannelSize {
  /** Byte position of the take position, cached while it and the segment list stay the same. */
  private takeBytesCache: { offset: number; segments: unknown; segmentBase: number; position: number } | undefined;

  constructor(private readonly log: Log) {}

  /** Records between `takePosition` and the log end (accepted appends included). */
  records(takePosition: number): number {
    return Math.max(0, this.log.nextOffset - Math.max(takePosition, this.log.logStartOffset));
  }

  /** Log bytes between `takePosition` and the log end (write buffer included). */
  bytes(takePosition: number): number {
    const p = this.log.positions();
    const buffered = p.bytes.written - p.bytes.committed;
    const from = Math.max(takePosition, this.log.logStartOffset);
    if (from >= p.committed.offset) return buffered;
    const segs = this.log.segments;
    let c = this.takeBytesCache;
    if (!c || c.offset !== from || c.segments !== segs) {
      const seg = this.log.segmentFor(from) ?? segs[0]!;
      const t = seg.translateOffset(from);
      c = this.takeBytesCache = { offset: from, segments: segs, segmentBase: seg.baseOffset, position: t ? t.position : seg.size };
    }
    let bytes = buffered;
    for (const s of segs) {
      if (s.baseOffset < c.segmentBase) continue;
      bytes += s.baseOffset === c.segmentBase ? Math.max(0, s.size - c.position) : s.size;
    }
    return bytes;
  }
}
