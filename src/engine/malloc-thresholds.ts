/**
 * Keeps freed buffer memory in the process instead of handing it back to the kernel page by page.
 *
 * A read that hands out records (Log.read) cannot reuse its read buffer: every record's key and
 * value are views of it (kafka-format.md §2.2, as Kafka's DefaultRecord slices its ByteBuffer), so
 * each 1 MiB chunk of the file is read into fresh memory, and freed when the collector finds no
 * view left. Decompressed batches, compaction's batches and the write buffer are alike: large
 * blocks allocated and freed all the time.
 *
 * glibc's malloc (mallopt(3)) serves a block of 128 KiB or more with mmap and unmaps it when freed,
 * and gives the heap's top back to the kernel once 128 KiB of it are free. Every page so returned
 * and touched again is a page fault: about 19 µs each on the Firecracker VMs the bench ran on in
 * December 2026, where a sequential Log.read of 100-byte records spent more time in those faults
 * (34,000 extra per 2 M records) than decoding, and ran anywhere from 80 to 340 ns per record.
 *
 * glibc raises both thresholds by itself when a block above the mmap threshold is freed (its
 * "dynamic mmap threshold"): the mmap threshold to that block's size, the trim threshold to twice
 * it (up to 32 MiB and 64 MiB). Allocating and dropping one block of `HINT_BYTES` once per process
 * does that at the start instead of after the first chunks: blocks below 8 MiB then come from the
 * heap and are reused, and up to 16 MiB of free heap stay in the process. The block is never
 * touched, so it costs no page. Nothing changes where thresholds were set explicitly (mallopt or
 * GLIBC_TUNABLES: glibc then keeps them), nor with another allocator (musl, macOS): the block is
 * freed like any other.
 */

/** The block that raises glibc's thresholds when freed: 8 MiB → mmap threshold 8 MiB, trim 16 MiB. */
export const HINT_BYTES = 8 * 1024 * 1024;

let hinted = false;

/** Whether this process gave the hint (for tests: the engine's paths give it). */
export function freedMemoryHintGiven(): boolean {
  return hinted;
}

/**
 * Once per process: allocates and drops one untouched `HINT_BYTES` block (freed by the next
 * garbage collection, which raises glibc's thresholds). Cheap to call on every open or scan.
 */
export function keepFreedMemoryInProcess(): void {
  if (hinted) return;
  hinted = true;
  // allocUnsafe: no zero fill, so no page of it is ever faulted in; dropped at once.
  Buffer.allocUnsafe(HINT_BYTES);
}
