/**
 * `append --lines` without a Buffer, a record object or a promise per line (issue 15): each input
 * chunk's lines become value ranges of the chunk, appended with Log.appendValueSlices as records
 * with a null key (Kafka's DefaultRecord, kafka-format.md §2; format/value-slices.ts). Batches end
 * where BatchAppender's do for the same input — at --batch-records, before max.message.bytes, and
 * at the end of each input chunk — so the log is byte-identical to the one the record path writes.
 */
import { LogtoolError, type ValueSlices } from '../api/format.js';

/** Per-record overhead bound used to keep a batch under max.message.bytes. */
export const RECORD_OVERHEAD_BOUND_BYTES = 21 + 10;
export const BATCH_OVERHEAD_BYTES = 61;
/** Largest input line accepted (a line is one record). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
/** Ranges a batch starts with room for; the arrays double up to the batch's record bound. */
const INITIAL_SLICES = 1024;
/** A line's start carried over and the chunk it ends in are joined in one reused buffer up to this size (a stdin chunk and a line of 1 MiB). */
const JOIN_REUSE_BYTES = 2 * 1024 * 1024;

/** Where the batches go: BatchAppender. */
export interface SliceSink {
  readonly maxBatchBytes: number;
  readonly batchRecords: number;
  /** Appends the slices (if any) as one batch, reading them before it returns; resolves once the caller may go on. */
  appendSlices(slices: ValueSlices): Promise<void>;
}

/** A record of `size` bytes (value plus RECORD_OVERHEAD_BOUND_BYTES) that no batch can hold. */
export function tooLargeRecord(size: number, maxBatchBytes: number): LogtoolError | undefined {
  if (size + BATCH_OVERHEAD_BYTES <= maxBatchBytes) return undefined;
  return new LogtoolError('too-large', `a record of about ${size} bytes does not fit max.message.bytes (${maxBatchBytes}); raise --max-message-bytes`);
}

/** A failure reading the input, as one line naming it. */
export function inputError(e: unknown, source: string): unknown {
  if (e instanceof LogtoolError) return e;
  return new LogtoolError('io', `cannot read input: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { file: source });
}

/**
 * Appends every line (LF or CRLF; a last line without LF too) of `stream` as a record's value, at
 * `timestampMs` (a safe integer) or the time of each append when undefined.
 */
export async function appendLines(stream: AsyncIterable<Buffer | string>, source: string, sink: SliceSink, timestampMs: number | undefined): Promise<void> {
  const slices: ValueSlices = { buf: Buffer.alloc(0), starts: new Int32Array(INITIAL_SLICES), ends: new Int32Array(INITIAL_SLICES), count: 0, timestampMs };
  let pendingBytes = 0;
  const send = (): Promise<void> => {
    const sent = sink.appendSlices(slices);
    slices.count = 0;
    pendingBytes = 0;
    return sent;
  };
  /** Adds buf[start, end) to the batch; a promise when a full batch went out and must be waited for. */
  const add = (buf: Buffer, start: number, end: number): Promise<void> | undefined => {
    const size = end - start + RECORD_OVERHEAD_BOUND_BYTES;
    const tooLarge = tooLargeRecord(size, sink.maxBatchBytes);
    if (tooLarge) throw tooLarge;
    let sent: Promise<void> | undefined;
    if (pendingBytes + size + BATCH_OVERHEAD_BYTES > sink.maxBatchBytes) sent = send();
    slices.buf = buf; // one buffer per batch: every batch is sent by the end of its chunk
    if (slices.count === slices.starts.length) grow(slices);
    slices.starts[slices.count] = start;
    slices.ends[slices.count++] = end;
    pendingBytes += size;
    if (slices.count >= sink.batchRecords) return sent ? sent.then(send) : send();
    return sent;
  };
  await splitLines(stream, source, add, send);
}

/**
 * Splits a byte stream into lines (LF or CRLF; a last line without LF too), split as bytes so a
 * character across two chunks stays whole, and hands each on as the range [start, end) of a buffer
 * without its ending: the input chunk's own bytes, or, for a line that began in earlier chunks,
 * one buffer holding it and the rest of its chunk (reused while small). A range is valid until
 * `onPause` resolves: that runs whenever the current chunk is used up (after the last line too),
 * so a slow producer's records are appended without waiting for more input. `onLine` may return
 * nothing (the line was taken) or a promise to wait for (backpressure). The chunks themselves may
 * be reused once the next is asked for (stdinChunks): what is carried over is copied.
 */
export async function splitLines(
  stream: AsyncIterable<Buffer | string>,
  source: string,
  onLine: (buf: Buffer, start: number, end: number, lineNo: number) => Promise<void> | undefined,
  onPause: () => Promise<void>,
): Promise<void> {
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let joinBuf = Buffer.alloc(0);
  let lineNo = 0;
  try {
    for await (const chunk of stream) {
      let buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      let nl = buf.indexOf(NEWLINE);
      if (carryBytes > 0 && nl >= 0) {
        // The line that began in earlier chunks ends here: one buffer holds it and this chunk,
        // a reused one unless that is large (a long line).
        const bytes = carryBytes + buf.length;
        if (bytes > JOIN_REUSE_BYTES) buf = Buffer.concat([...carry, buf], bytes);
        else {
          if (joinBuf.length < bytes) joinBuf = Buffer.allocUnsafeSlow(JOIN_REUSE_BYTES);
          let at = 0;
          for (const c of carry) at += c.copy(joinBuf, at);
          buf.copy(joinBuf, at);
          buf = joinBuf.subarray(0, bytes);
        }
        nl += carryBytes;
        carry = [];
        carryBytes = 0;
      }
      let start = 0;
      for (; nl >= 0; nl = buf.indexOf(NEWLINE, start)) {
        const wait = onLine(buf, start, nl > start && buf[nl - 1] === CARRIAGE_RETURN ? nl - 1 : nl, ++lineNo);
        if (wait) await wait;
        start = nl + 1;
      }
      if (start < buf.length) {
        // Copied: the chunk's buffer may be reused for the next read (stdinChunks).
        carry.push(Buffer.from(buf.subarray(start)));
        carryBytes += buf.length - start;
      }
      if (carryBytes > MAX_LINE_BYTES) throw new LogtoolError('usage', `${source} line ${lineNo + 1} is longer than ${MAX_LINE_BYTES} bytes`);
      await onPause();
    }
  } catch (e) {
    throw inputError(e, source);
  }
  if (carryBytes === 0) return;
  const last = Buffer.concat(carry, carryBytes);
  await onLine(last, 0, last[last.length - 1] === CARRIAGE_RETURN ? last.length - 1 : last.length, ++lineNo);
  await onPause();
}

/** Twice the room for ranges, keeping those taken. */
function grow(slices: ValueSlices): void {
  const starts = new Int32Array(slices.starts.length * 2);
  const ends = new Int32Array(slices.ends.length * 2);
  starts.set(slices.starts);
  ends.set(slices.ends);
  slices.starts = starts;
  slices.ends = ends;
}
