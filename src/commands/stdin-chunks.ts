/**
 * `append`'s stdin in chunks read into one reused buffer (issue 15): no 64 KiB buffer per read, as
 * process.stdin allocates, which left tens of MiB of dead chunks waiting for the GC once lines no
 * longer made garbage of their own. A chunk is valid until the next is asked for (splitLines
 * copies what it carries over).
 */
import fs from 'node:fs';
import type { FileIO } from '../api/format.js';

/** What one read of a regular file asks for: process.stdin's chunk size. */
const FILE_CHUNK_BYTES = 64 * 1024;
/**
 * What one read of a pipe or socket asks for: whatever has piled up, up to this. A writer ahead of
 * `append` leaves more than 64 KiB waiting (a socket from Node's spawn ~230 KB), and one read of it
 * costs one round trip and makes batches that end only at --batch-records.
 */
const PIPE_CHUNK_BYTES = 1024 * 1024;

/**
 * Stdin's chunks. A regular file is read in the chunks process.stdin reads it in (so its batches
 * do not depend on how it is given); a pipe or socket in reads of up to 1 MiB through the thread
 * pool, so the event loop stays free while a slow producer is quiet. A pipe's bytes already
 * waiting are taken first without that round trip, through a non-blocking descriptor of the same
 * pipe (`/proc/self/fd/0` opened anew: the flag stays off the description stdin shares with other
 * processes); only when none wait does the read go to the pool. A non-blocking stdin (EAGAIN: it
 * was shared with a process that set O_NONBLOCK, or process.stdin was opened) is read through
 * process.stdin from there on.
 */
export async function* stdinChunks(io: FileIO): AsyncGenerator<Buffer> {
  const kind = stdinKind();
  const buf = Buffer.allocUnsafeSlow(kind === 'file' ? FILE_CHUNK_BYTES : PIPE_CHUNK_BYTES);
  const waiting = kind === 'fifo' ? WaitingBytes.open() : undefined;
  try {
    for (;;) {
      let n = waiting ? waiting.read(buf) : -1;
      if (n < 0) {
        try {
          n = await io.readAsync!(0, buf, 0, buf.length, null);
        } catch (e) {
          if (((e as Error).cause as NodeJS.ErrnoException | undefined)?.code !== 'EAGAIN') throw e;
          waiting?.close();
          process.stdin.on('error', () => undefined); // surfaced by the iterator
          yield* process.stdin as AsyncIterable<Buffer>;
          return;
        }
      }
      if (n === 0) return;
      yield buf.subarray(0, n);
    }
  } finally {
    waiting?.close();
  }
}

/** What stdin is: a regular file, a pipe, or something else (a socket, a terminal; a failing fstat, whose read then reports the failure). */
function stdinKind(): 'file' | 'fifo' | 'other' {
  try {
    const st = fs.fstatSync(0);
    return st.isFile() ? 'file' : st.isFIFO() ? 'fifo' : 'other';
  } catch {
    return 'other';
  }
}

/** A non-blocking descriptor of the pipe on stdin: the bytes already in it, without waiting. */
class WaitingBytes {
  private constructor(private fd: number | undefined) {}

  /** undefined where the pipe cannot be opened anew (no /proc). */
  static open(): WaitingBytes | undefined {
    try {
      return new WaitingBytes(fs.openSync('/proc/self/fd/0', fs.constants.O_RDONLY | fs.constants.O_NONBLOCK));
    } catch {
      return undefined;
    }
  }

  /**
   * Reads what is waiting into buf (up to its length): the bytes read, 0 at the end of the input,
   * -1 when none are waiting. After any failure but EAGAIN it reads nothing more (-1): the
   * blocking read of stdin then reports the failure as before.
   */
  read(buf: Buffer): number {
    let n = 0;
    while (this.fd !== undefined && n < buf.length) {
      let got: number;
      try {
        got = fs.readSync(this.fd, buf, n, buf.length - n, null);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') this.close();
        break;
      }
      if (got === 0) return n; // the end: 0 now if nothing came before it, else on the next read
      n += got;
    }
    return n > 0 ? n : -1;
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    fs.closeSync(fd);
  }
}
