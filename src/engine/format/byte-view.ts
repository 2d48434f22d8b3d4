/**
 * Views of a record's bytes, as Kafka's DefaultRecord.readFrom slices its key, value and header
 * values out of the batch's ByteBuffer (kafka-format.md §2.2) instead of copying them.
 *
 * `buf.subarray(start, end)` costs a read decoding 100-byte records about a third of its time: each
 * call reads the typed array's `buffer` and `byteOffset` again and checks its arguments. A decoder
 * takes them once per batch (`BytesOf`) and builds each view directly: a Buffer in every respect
 * (Buffer.isBuffer, instanceof, its methods, `constructor === Buffer`), made the way Node's own
 * Buffer views are made (a Uint8Array subclass sharing Buffer.prototype's methods).
 */
import { assert } from '../errors.js';

class ByteView extends Uint8Array {
  constructor(arrayBuffer: ArrayBuffer, byteOffset: number, length: number) {
    super(arrayBuffer, byteOffset, length);
  }
}
Object.setPrototypeOf(ByteView.prototype, Buffer.prototype);
// What Buffer.prototype.subarray returns says `constructor === Buffer`; so does a view.
Object.defineProperty(ByteView.prototype, 'constructor', { value: Buffer, writable: true, configurable: true });

/** The bytes of one Buffer, from which views are cut by position in that Buffer. */
export class BytesOf {
  private readonly arrayBuffer: ArrayBuffer;
  private readonly byteOffset: number;
  private readonly length: number;

  constructor(buf: Buffer) {
    this.arrayBuffer = buf.buffer as ArrayBuffer; // or a SharedArrayBuffer: views of either are made alike
    this.byteOffset = buf.byteOffset;
    this.length = buf.length;
  }

  /** buf.subarray(start, start + length): the caller has checked that the range lies inside buf. */
  view(start: number, length: number): Buffer {
    if (!(start >= 0 && length >= 0 && start + length <= this.length)) assert(false, `view [${start}, ${start + length}) outside a ${this.length}-byte buffer`);
    return new ByteView(this.arrayBuffer, this.byteOffset + start, length) as Buffer;
  }
}
