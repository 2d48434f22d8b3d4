/**
 * Kafka's LogValidator (storage/…/log/LogValidator.java) for one v2 record batch handed to the
 * log by a caller (AppendOrigin.CLIENT), plus the checks Kafka makes before it
 * (DefaultRecordBatch.ensureValid: size and CRC-32C; the record iterator: the declared count must
 * match the records). Layout in ../shared/docs/kafka-format.md §2.
 *
 * Kafka rewrites what it may (last offset delta of a compressed batch, max timestamp, timestamp
 * type, inner offsets of a compressed batch); logtool stores the caller's bytes unchanged (the CRC
 * stays the caller's), so where Kafka would rewrite a field, a batch whose field disagrees with
 * its records is refused instead. Every refusal names the byte of the batch at fault.
 */
import { LogtoolError } from '../errors.js';
import { compressionName, compressionNames } from './compression.js';
import {
  Attr,
  compressionOf,
  computeBatchCrc,
  isControl,
  isTransactional,
  LOG_OVERHEAD,
  readBatchHeader,
  recordsSection,
  RECORD_BATCH_OVERHEAD,
  type BatchHeader,
} from './record-batch.js';
import { readVarint, readVarlong, type VarintCursor } from './varint.js';

/** Byte positions of the v2 header fields checked here (kafka-format.md §2). */
const POS = { magic: 16, crc: 17, attributes: 21, lastOffsetDelta: 23, baseTimestamp: 27, maxTimestamp: 35, producerId: 43, baseSequence: 53, recordsCount: 57 } as const;

export interface BatchValidationOptions {
  /** Names the batch in errors (the partition directory it was given to). */
  file: string;
  /** The caller declared a control batch (AppendOptions.control); Kafka accepts those only from the coordinator. */
  allowControl: boolean;
  /** The caller asked for LogAppendTime (AppendOptions.logAppendTime): the batch's max timestamp is its append time. */
  logAppendTime: boolean;
  /** Bound on the decompressed records of a compressed batch. */
  maxDecompressedBytes?: number;
}

/**
 * Throws a `corrupt` LogtoolError (exit 3: the data given is invalid) naming the first failed
 * check; returns the batch's header when every check passes. The batch must be exactly one v2
 * batch (buf.length = batchLength + 12, magic 2): the caller checks that shape first.
 */
export function validateClientBatch(buf: Buffer, opts: BatchValidationOptions): BatchHeader {
  const refuse = (position: number, what: string): never => {
    throw new LogtoolError('corrupt', `batch refused at its byte ${position}: ${what}; nothing was appended`, { file: opts.file });
  };
  if (buf.length < RECORD_BATCH_OVERHEAD) refuse(0, `${buf.length} bytes cannot hold a v2 batch header (${RECORD_BATCH_OVERHEAD})`);
  const h = readBatchHeader(buf, 0);
  if (h.magic !== 2) refuse(POS.magic, `magic ${h.magic}; only v2 batches can be appended`);
  if (h.batchLength + LOG_OVERHEAD !== buf.length) refuse(8, `batch length ${h.batchLength} does not match the ${buf.length - LOG_OVERHEAD} bytes given`);
  const crc = computeBatchCrc(buf, 0, buf.length);
  if (crc !== h.crc) refuse(POS.crc, `CRC-32C is ${crc} but the batch says ${h.crc}`);
  // LogValidator.validateBatch for client appends.
  if (h.lastOffsetDelta < 0) refuse(POS.lastOffsetDelta, `negative last offset delta ${h.lastOffsetDelta}`);
  if (h.recordsCount <= 0) refuse(POS.recordsCount, `invalid record count ${h.recordsCount} (a batch holds at least one record)`);
  if (h.lastOffsetDelta + 1 !== h.recordsCount) {
    refuse(POS.lastOffsetDelta, `last offset delta ${h.lastOffsetDelta} spans ${h.lastOffsetDelta + 1} offsets but the batch counts ${h.recordsCount} records`);
  }
  if (isControl(h) && !opts.allowControl) refuse(POS.attributes, 'control batches are written by the transaction coordinator, not appended (declare control: true)');
  if (h.producerId >= 0 && h.baseSequence < 0 && !isControl(h)) refuse(POS.baseSequence, `invalid sequence number ${h.baseSequence} with producer id ${h.producerId}`);
  if (isTransactional(h) && h.producerId < 0) refuse(POS.producerId, 'a transactional batch needs a producer id');
  const logAppendTime = (h.attributes & Attr.logAppendTime) !== 0;
  if (logAppendTime !== opts.logAppendTime) {
    refuse(POS.attributes, logAppendTime ? 'the batch says LogAppendTime but the append asked for CreateTime' : 'the batch says CreateTime but the append asked for LogAppendTime');
  }
  const codec = compressionOf(h);
  if (codec >= compressionNames.length) refuse(POS.attributes, `unknown compression codec ${codec}`);
  walkRecords(buf, h, opts, refuse);
  return h;
}

/**
 * Walks every record without keeping any (the same structure decodeRecords reads): the count,
 * each record's offset delta (0, 1, 2 …: Kafka assigns consecutive offsets), lengths that fit,
 * nothing left over; and for CreateTime the batch's max timestamp must be the records' maximum.
 */
function walkRecords(buf: Buffer, h: BatchHeader, opts: BatchValidationOptions, refuse: (position: number, what: string) => never): void {
  let section: { data: Buffer; start: number; end: number };
  try {
    section = recordsSection(buf, 0, h, { maxDecompressedBytes: opts.maxDecompressedBytes, file: opts.file });
  } catch (e) {
    return refuse(RECORD_BATCH_OVERHEAD, `${compressionName(compressionOf(h))} records cannot be read: ${(e as Error).message}`);
  }
  const { data, end } = section;
  const compressed = data !== buf;
  // Positions inside a decompressed section are not bytes of the batch: name the section's start.
  const at = (p: number) => (compressed ? RECORD_BATCH_OVERHEAD : p);
  const c: VarintCursor = { pos: section.start };
  const exactTimes = Number.isSafeInteger(h.baseTimestamp);
  let maxTimestamp = -1;
  const varint = (bodyEnd: number, what: string, i: number): number => {
    try {
      return readVarint(data, c, bodyEnd);
    } catch {
      return refuse(at(c.pos), `record ${i}: ${what} is not a valid varint within the record`);
    }
  };
  const skip = (len: number, bodyEnd: number, what: string, i: number) => {
    if (len < -1 || c.pos + Math.max(0, len) > bodyEnd) refuse(at(c.pos), `record ${i}: ${what} length ${len} runs past the record`);
    c.pos += Math.max(0, len);
  };
  for (let i = 0; i < h.recordsCount; i++) {
    if (c.pos >= end) refuse(at(c.pos), `the batch counts ${h.recordsCount} records but holds ${i}`);
    const recordStart = c.pos;
    const length = varint(end, 'length', i);
    const bodyStart = c.pos;
    if (length <= 0 || bodyStart + length > end) refuse(at(recordStart), `record ${i}: length ${length} does not fit the batch`);
    const bodyEnd = bodyStart + length;
    c.pos++; // attributes (unused in v2)
    let tsDelta: number;
    try {
      tsDelta = readVarlong(data, c, bodyEnd);
    } catch {
      return refuse(at(c.pos), `record ${i}: timestamp delta is not a valid varlong within the record`);
    }
    const offsetDelta = varint(bodyEnd, 'offset delta', i);
    if (offsetDelta !== i) refuse(at(recordStart), `record ${i} has offset delta ${offsetDelta}; the records of a batch take consecutive offsets`);
    skip(varint(bodyEnd, 'key length', i), bodyEnd, 'key', i);
    skip(varint(bodyEnd, 'value length', i), bodyEnd, 'value', i);
    const headers = varint(bodyEnd, 'header count', i);
    if (headers < 0 || headers > bodyEnd - c.pos) refuse(at(c.pos), `record ${i}: invalid header count ${headers}`);
    for (let k = 0; k < headers; k++) {
      const keyLen = varint(bodyEnd, `header ${k} key length`, i);
      if (keyLen < 0) refuse(at(c.pos), `record ${i}: header ${k} has a null key`);
      skip(keyLen, bodyEnd, `header ${k} key`, i);
      skip(varint(bodyEnd, `header ${k} value length`, i), bodyEnd, `header ${k} value`, i);
    }
    if (c.pos !== bodyEnd) refuse(at(recordStart), `record ${i} declares ${length} bytes but holds ${c.pos - bodyStart}`);
    const ts = h.baseTimestamp + tsDelta;
    if (ts > maxTimestamp) maxTimestamp = ts;
  }
  if (c.pos !== end) refuse(at(c.pos), `${end - c.pos} bytes remain after the ${h.recordsCount} records the batch counts`);
  // LogValidator sets a CreateTime batch's max timestamp from its records (beyond 2^53 a double
  // cannot tell them apart, so only exact values are compared).
  if (!opts.logAppendTime && exactTimes && Number.isSafeInteger(maxTimestamp) && Number.isSafeInteger(h.maxTimestamp) && h.maxTimestamp !== maxTimestamp) {
    refuse(POS.maxTimestamp, `max timestamp ${h.maxTimestamp} is not the records' maximum ${maxTimestamp}`);
  }
}
