/**
 * `read`'s range options checked against the log: --from-offset within [log start, log end]
 * (exactly at the end is an empty range), --to-offset / --to-time turned into one exclusive end
 * offset for ReadOptions.toOffset, and --key / --key-base64 turned into the key's exact bytes.
 */
import { LogtoolError } from '../api/format.js';
import type { Log } from '../api/log.js';
import { decodeStrict } from './shared.js';

export interface RangeOpts {
  fromOffset?: number;
  toOffset?: number;
  toTime?: number;
  key?: string;
  keyBase64?: string;
  batches?: boolean;
}

export interface Range {
  /** Exclusive end offset, or undefined for no end. */
  toOffset: number | undefined;
  /** Only records with exactly this key, or undefined for all. */
  key: Buffer | undefined;
}

export function readRange(log: Log, opts: RangeOpts): Range {
  if (opts.batches && (opts.toOffset !== undefined || opts.toTime !== undefined || opts.key !== undefined || opts.keyBase64 !== undefined)) {
    throw new LogtoolError('usage', '--to-offset, --to-time, --key and --key-base64 select records; they cannot be used with --batches');
  }
  if (opts.key !== undefined && opts.keyBase64 !== undefined) throw new LogtoolError('usage', 'give --key or --key-base64, not both');
  const start = log.logStartOffset;
  const end = log.nextOffset;
  const from = opts.fromOffset;
  if (from !== undefined && from > end) {
    throw new LogtoolError('usage', `--from-offset ${from} is beyond the log end offset ${end}: the log has offsets [${start}, ${end})`, { file: log.dir });
  }
  if (from !== undefined && from < start) {
    throw new LogtoolError(
      'usage',
      `--from-offset ${from} is below the log start offset ${start} (earlier records were deleted by retention or delete-records): the log has offsets [${start}, ${end})`,
      { file: log.dir },
    );
  }
  let toOffset = opts.toOffset;
  if (opts.toTime !== undefined) {
    // The offset --from-time would start at for this time; no record that late means no end.
    const byTime = log.reader().offsetForTimestamp(opts.toTime);
    if (byTime !== undefined) toOffset = Math.min(toOffset ?? Infinity, byTime);
  }
  const key = opts.key !== undefined ? Buffer.from(opts.key, 'utf8') : opts.keyBase64 !== undefined ? decodeStrict(opts.keyBase64, 'base64', '--key-base64') : undefined;
  return { toOffset, key };
}
