/**
 * Legacy v0/v1 message sets (kafka-format.md §3). Placeholder until legacy decoding lands:
 * such entries are reported clearly, never misread.
 */
import { LogtoolError } from '../errors.js';
import type { DecodeOptions, LogRecord } from './record-batch.js';

export function decodeLegacyEntry(buf: Buffer, pos: number, _size: number, opts: DecodeOptions = {}): LogRecord[] {
  const magic = buf.readInt8(pos + 16);
  throw new LogtoolError('unsupported', `v${magic} (legacy) message at byte ${opts.filePosition ?? pos}${opts.file ? ` in ${opts.file}` : ''} is not supported yet`, {
    file: opts.file,
    position: opts.filePosition,
  });
}
