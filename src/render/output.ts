/**
 * Output for pipes: lines are buffered and written one chunk (one string) at a time with bounded
 * backpressure — up to MAX_IN_FLIGHT_CHARS may be written but not yet taken by the reader, so the
 * command goes on producing while the pipe drains — and a closed pipe (EPIPE, as with `| head`)
 * ends the command quietly instead of throwing. The CLI never calls process.exit(): it sets
 * process.exitCode and lets stdout drain.
 */
import { Chalk, type ChalkInstance } from 'chalk';
import { colourLevel } from './colour-level.js';
import { clearStderrLine } from './stderr-line.js';
import { COPY, STOP, writeEscapedRuns, type ByteEscapes } from './json-line.js';

export { colourLevel };

const FLUSH_AT_BYTES = 64 * 1024;
/**
 * Characters handed to the stream and not yet written out before line()/flush() wait (at most 3
 * bytes each in UTF-8). Two chunks: strings waiting on a slow reader live long enough for V8 to
 * promote them, and 1 MiB of them let `read --json` into a Node.js reader's pipe grow its heap to
 * ~110 MiB (issue 15, peak memory: 160 -> 118 MiB peak RSS over 1 GiB, same wall time).
 */
export const MAX_IN_FLIGHT_CHARS = 128 * 1024;

/** Room in a chunk: a line is encoded straight into it (no joined string, no encoding in the stream). */
const CHUNK_CAPACITY_BYTES = 2 * FLUSH_AT_BYTES;
/** Text up to this many UTF-16 units is tried as ASCII first (write), and bytes up to this many are copied one by one (writeBytes). */
const SHORT_TEXT_CHARS = 64;
/** Chunks written out and back from the stream, kept for reuse. */
const SPARE_CHUNKS = 2;

export class Output {
  private readonly stream: NodeJS.WriteStream;
  /** Queued lines as UTF-8, each ending in \n, in chunk[0, pos). */
  private chunk: Buffer = Buffer.allocUnsafeSlow(CHUNK_CAPACITY_BYTES);
  private pos = 0;
  private readonly spare: Buffer[] = [];
  /** Bytes (or characters, for a line longer than a chunk) written to the stream whose write has not completed yet. */
  private inFlightChars = 0;
  /** Wakes a flush waiting for the in-flight characters to go down. */
  private wake: (() => void) | undefined;
  /** True once the reader of our stdout went away. */
  closed = false;

  constructor(stream: NodeJS.WriteStream = process.stdout) {
    this.stream = stream;
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') this.closed = true;
      else throw err;
    });
  }

  get isTTY(): boolean {
    return Boolean(this.stream.isTTY);
  }

  /** Queues one line; writes when the buffer is large. Await it in loops to respect backpressure. */
  async line(text: string): Promise<void> {
    if (this.push(text)) await this.flush();
  }

  /**
   * Queues one line without a promise (a loop over many records awaits flush() only when this
   * returns true, rather than one promise per line: issue 15). True once a chunk is due.
   */
  push(text: string): boolean {
    this.write(text);
    return this.endLine();
  }

  /** Appends text to the line being built; endLine() ends it. */
  write(text: string): void {
    if (this.closed) return;
    const n = text.length;
    if (n <= SHORT_TEXT_CHARS && this.pos + n <= this.chunk.length) {
      // Short ASCII text (a record's field names, numbers, punctuation) is its char codes: stored
      // one by one, it costs less than an encoder call per piece (issue 15, read --json).
      const chunk = this.chunk;
      const pos = this.pos;
      let i = 0;
      for (let c = 0; i < n && (c = text.charCodeAt(i)) < 0x80; i++) chunk[pos + i] = c;
      if (i === n) {
        this.pos = pos + n;
        return;
      }
    }
    let room = this.chunk.length - this.pos;
    // At most 3 UTF-8 bytes per UTF-16 unit: most text fits without measuring it first.
    if (text.length * 3 > room) {
      const bytes = Buffer.byteLength(text);
      if (bytes > room) {
        this.writeOut();
        room = this.chunk.length;
      }
      if (bytes > room) return this.send(text); // longer than a chunk: written as it is
    }
    this.pos += this.chunk.write(text, this.pos);
  }

  /** Appends bytes[start, end) to the line being built, copied (the caller may reuse them). */
  writeBytes(bytes: Buffer, start = 0, end = bytes.length): void {
    if (this.closed) return;
    const n = end - start;
    if (n > this.chunk.length - this.pos) {
      this.writeOut();
      if (n > this.chunk.length) return this.send(Buffer.from(bytes.subarray(start, end)));
    }
    const chunk = this.chunk;
    const pos = this.pos;
    // A short piece (between escapes) is stored byte by byte: cheaper than a view and a copy call.
    if (n <= SHORT_TEXT_CHARS) for (let i = 0; i < n; i++) chunk[pos + i] = bytes[start + i]!;
    else chunk.set(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end), pos);
    this.pos = pos + n;
  }

  /** JsonSink.writeEscaped: in one pass into the chunk when the worst case fits in it (issue 15: a value's JSON or text escapes). */
  writeEscaped(bytes: Buffer, escapes: ByteEscapes, start = 0): number {
    if (this.closed) return bytes.length;
    const worst = (bytes.length - start) * escapes.maxChars;
    if (worst > this.chunk.length - this.pos) {
      this.writeOut();
      if (worst > this.chunk.length) return writeEscapedRuns(this, bytes, escapes, start);
    }
    const { actions, texts } = escapes;
    const chunk = this.chunk;
    let pos = this.pos;
    let i = start;
    for (; i < bytes.length; i++) {
      const b = bytes[i]!;
      const action = actions[b]!;
      if (action === COPY) chunk[pos++] = b;
      else if (action === STOP) break;
      else {
        const text = texts[b]!;
        for (let j = 0; j < text.length; j++) chunk[pos++] = text.charCodeAt(j);
      }
    }
    this.pos = pos;
    return i;
  }

  /** Ends the line being built; true once a chunk is due (then await flush()). */
  endLine(): boolean {
    if (this.closed) return false;
    if (this.pos === this.chunk.length) this.writeOut();
    this.chunk[this.pos++] = 0x0a;
    return this.flushDue;
  }

  /** True once enough is queued (or in flight) that flush() should be awaited. */
  get flushDue(): boolean {
    return this.pos >= FLUSH_AT_BYTES || this.inFlightChars > MAX_IN_FLIGHT_CHARS;
  }

  /** Hands the queued lines to the stream; the chunk comes back for reuse once written. */
  private writeOut(): void {
    if (this.pos === 0) return;
    const full = this.chunk;
    const data = full.subarray(0, this.pos);
    this.chunk = this.spare.pop() ?? Buffer.allocUnsafeSlow(CHUNK_CAPACITY_BYTES);
    this.pos = 0;
    this.send(data, () => {
      if (this.spare.length < SPARE_CHUNKS) this.spare.push(full);
    });
  }

  private send(data: Buffer | string, written?: () => void): void {
    if (this.stream.isTTY) clearStderrLine(); // stdout and a progress line on stderr share the terminal
    const chars = data.length;
    this.inFlightChars += chars;
    this.stream.write(data, (err) => {
      this.inFlightChars -= chars;
      if (!err) written?.();
      this.wake?.();
    });
  }

  /**
   * Writes what is queued as one chunk; resolves at once while at most MAX_IN_FLIGHT_CHARS are
   * still being written, else once enough of them are (or the stream closed).
   */
  async flush(): Promise<void> {
    if (this.closed) return;
    this.writeOut();
    while (this.inFlightChars > MAX_IN_FLIGHT_CHARS && !this.closed && !this.stream.destroyed) await this.oneWriteDone();
  }

  /** Resolves when a write completes, or the stream fails or closes. */
  private oneWriteDone(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.wake = undefined;
        this.stream.off('error', done);
        this.stream.off('close', done);
        resolve();
      };
      this.wake = done;
      this.stream.once('error', done);
      this.stream.once('close', done);
    });
  }

  /** Writes a JSON value as one line. */
  async json(value: unknown): Promise<void> {
    await this.line(JSON.stringify(value));
  }
}

/** A chalk for a stream at colourLevel(stream). */
export function colours(stream: Pick<NodeJS.WriteStream, 'isTTY'> = process.stdout): ChalkInstance {
  return new Chalk({ level: colourLevel(stream) });
}

export { clearStderrLine, setBeforeStderrLine } from './stderr-line.js';

/** Warnings go to stderr, one line each. */
export function warn(message: string): void {
  clearStderrLine();
  const c = colours(process.stderr);
  process.stderr.write(`${c.yellow('warning:')} ${message}\n`);
}
