/**
 * The bounded read buffer of a `.log` scan (file-records.ts), the part of Kafka's
 * FileLogInputStream that reads a file by position: a window of the file's bytes that refills
 * by chunks and never overwrites bytes that entries (and the record views decoded from them) were
 * handed out from — unless the scan reuses its buffer (ScanOptions.reuseBuffer: `yielded` stays
 * false, so a refill reads into the same buffer).
 */
import { HEADER_PROBE_BYTES } from '../format/record-batch.js';
import { keepFreedMemoryInProcess } from '../malloc-thresholds.js';

/** A file the scanner reads by position: an fd it was given or opened, or a segment's cached file. */
export interface FileSource {
  readonly path: string;
  read(buf: Buffer, offset: number, length: number, position: number): number;
}

/**
 * The scan's window on the file: buf[0, len) holds the file's bytes from filePos. It starts small
 * (a random lookup reads a few KiB) and doubles on each refill up to chunkBytes (a sequential scan
 * soon reads in full chunks).
 */
export class ScanWindow {
  buf: Buffer;
  /** File position of buf[0]. */
  filePos: number;
  len = 0;
  /** Whether an entry was yielded from buf: then buf is never written again (see LogEntry). */
  yielded = false;

  constructor(
    readonly source: FileSource,
    readonly fileEnd: number,
    readonly chunkBytes: number,
    start: number,
    firstReadBytes: number,
  ) {
    // A scan that yields entries reads each chunk into fresh memory: have glibc keep what it frees.
    keepFreedMemoryInProcess();
    this.buf = Buffer.allocUnsafe(Math.min(chunkBytes, firstReadBytes, Math.max(fileEnd - start, HEADER_PROBE_BYTES)));
    this.filePos = start;
  }

  /**
   * Makes buf hold [position, position + needed), reading up to readAhead bytes from position
   * (default: as much as the buffer holds; it grows to chunkBytes). False at end of file.
   */
  ensure(position: number, needed: number, readAhead = Infinity): boolean {
    const have = this.filePos + this.len - position;
    if (have >= needed) return true;
    if (position + needed > this.fileEnd) return false;
    // After an entry that was not buffered, position lies past the buffered bytes: keep none.
    const startInBuf = Math.min(position - this.filePos, this.len);
    const buf = this.buf;
    // Reading on: doubling up to a chunk; a bounded read-ahead: its size (within a chunk).
    const grown = readAhead === Infinity ? (buf.length < this.chunkBytes ? Math.min(this.chunkBytes, buf.length * 2) : buf.length) : Math.max(buf.length, Math.min(readAhead, this.chunkBytes));
    if (needed > buf.length || grown > buf.length || this.yielded) {
      // A buffer that entries were yielded from is never written again: the records decoded
      // from it are views of its bytes (see LogEntry).
      const fresh = Buffer.allocUnsafe(Math.max(needed, grown));
      buf.copy(fresh, 0, startInBuf, this.len);
      this.buf = fresh;
      this.yielded = false;
    } else if (startInBuf > 0) {
      buf.copy(buf, 0, startInBuf, this.len);
    }
    this.len -= startInBuf;
    this.filePos = position;
    while (this.len < needed) {
      const want = Math.min(this.buf.length - this.len, this.fileEnd - (this.filePos + this.len), Math.max(needed, readAhead) - this.len);
      const n = this.source.read(this.buf, this.len, want, this.filePos + this.len);
      if (n <= 0) return false;
      this.len += n;
    }
    return true;
  }
}
