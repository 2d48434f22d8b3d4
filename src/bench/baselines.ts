/**
 * Raw baselines: the plainest Node.js loops doing the same I/O as a scenario, measured on the
 * same machine in the same run. A scenario's ratio to its baseline is what to judge, never its
 * absolute numbers (they depend on the disk, the page cache and whatever else runs).
 *
 * - raw-write-100B / raw-write-1KiB: length-prefixed records copied into a 64 KiB buffer, written
 *   with fs.writeSync when full (the page-cache write bound of an append).
 * - raw-write-fdatasync: write one 100-byte record, fdatasync, repeat (the latency bound of a
 *   sync append).
 * - raw-write-fdatasync-async, raw-fdatasync-per-1000-async: the same with fs.fdatasync through
 *   libuv's thread pool, as the engine's sync mode calls it: the difference is what the hop costs.
 * - raw-fdatasync-per-1000: 1000 records through the 64 KiB buffer, then fdatasync (the bound of a
 *   durable batched append).
 * - raw-read-crc: the data set's `.log` files read in 1 MiB chunks, each batch's CRC-32C checked
 *   (the bound of a scan).
 * - raw-append-per-record-async: one awaited async call per 100 B record copying it into the
 *   64 KiB buffer, written when full (the bound of appending one record at a time).
 * - raw-write-per-record: one awaited async call per 100 B record writing its one-record batch
 *   with fs.writeSync (the physical floor of async mode's per-record append: a write(2) each).
 * - raw-random-read: pread of one whole batch at a random batch position, CRC-32C checked (the
 *   bound of an offset lookup).
 */
import fs from 'node:fs';
import path from 'node:path';
import { crc32c } from '../engine/format/crc32c.js';
import { encodeBatch } from '../engine/format/record-batch.js';
import { dataset, payload, prng } from './datasets.js';
import { LatencyRecorder, nowMs, timeOps, type BenchContext, type BenchScenario, type ScenarioResult } from './types.js';

const CHUNK_BYTES = 64 * 1024;

/** Sequential write of length-prefixed records through a 64 KiB buffer. */
async function rawWrite(ctx: BenchContext, valueBytes: number, records: number): Promise<ScenarioResult> {
  const value = payload(valueBytes);
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  const lat = new LatencyRecorder();
  const run = (file: string, n: number, measure: boolean): { records: number; seconds: number } => {
    const fd = fs.openSync(file, 'w');
    let filePos = 0;
    let pos = 0;
    let done = 0;
    const t0 = nowMs();
    const deadline = t0 + ctx.durationMs;
    let opStart = t0;
    try {
      for (; done < n; done++) {
        if (pos + 4 + valueBytes > CHUNK_BYTES) {
          fs.writeSync(fd, chunk, 0, pos, filePos);
          filePos += pos;
          pos = 0;
          if (measure) {
            const t = nowMs();
            lat.record(t - opStart);
            opStart = t;
            if ((lat.count & 63) === 0) {
              ctx.progress(done / n);
              if (t > deadline) break;
            }
          }
        }
        chunk.writeInt32BE(valueBytes, pos);
        chunk.set(value, pos + 4);
        pos += 4 + valueBytes;
      }
      if (pos > 0) fs.writeSync(fd, chunk, 0, pos, filePos);
    } finally {
      fs.closeSync(fd);
    }
    return { records: done, seconds: (nowMs() - t0) / 1000 };
  };
  run(path.join(ctx.dir, 'warmup.dat'), Math.max(1000, Math.floor(records / 20)), false);
  fs.rmSync(path.join(ctx.dir, 'warmup.dat'));
  const r = run(path.join(ctx.dir, 'raw.dat'), records, true);
  return { records: r.records, bytes: r.records * valueBytes, seconds: r.seconds, latenciesMs: lat, opUnit: '64 KiB write', extra: { valueBytes } };
}

/**
 * One awaited async call per 100 B record that copies it into the 64 KiB buffer, written when
 * full: the bound of appending one record at a time (append([record]) awaited each time).
 */
async function rawAppendPerRecordAsync(ctx: BenchContext): Promise<ScenarioResult> {
  const value = payload(100);
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  const fd = fs.openSync(path.join(ctx.dir, 'raw.dat'), 'w');
  let filePos = 0;
  let pos = 0;
  const append = async (v: Buffer): Promise<void> => {
    if (pos + 4 + v.length > CHUNK_BYTES) {
      fs.writeSync(fd, chunk, 0, pos, filePos);
      filePos += pos;
      pos = 0;
    }
    chunk.writeInt32BE(v.length, pos);
    chunk.set(v, pos + 4);
    pos += 4 + v.length;
  };
  try {
    return await timeAwaitedCalls(ctx, append, value, 100_000);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * One awaited async call per 100 B record that writes it as its own one-record batch (the bytes
 * append([record]) writes, ~170 B) with fs.writeSync at the end of the file: the physical floor
 * of async mode, whose append resolves only once its bytes are in the file (one write(2) each).
 */
async function rawWritePerRecord(ctx: BenchContext): Promise<ScenarioResult> {
  const batch = encodeBatch([{ key: null, value: payload(100) }], { baseOffset: 0 });
  const fd = fs.openSync(path.join(ctx.dir, 'raw.dat'), 'w');
  let filePos = 0;
  const write = async (b: Buffer): Promise<void> => {
    fs.writeSync(fd, b, 0, b.length, filePos);
    filePos += b.length;
  };
  try {
    return await timeAwaitedCalls(ctx, write, batch, 20_000, { batchBytes: batch.length });
  } finally {
    fs.closeSync(fd);
  }
}

/** Up to ctx.records awaited calls `call(arg)` (one 100 B record each) after `warmupCalls`, timed per 1024. */
async function timeAwaitedCalls(ctx: BenchContext, call: (arg: Buffer) => Promise<void>, arg: Buffer, warmupCalls: number, extra?: ScenarioResult['extra']): Promise<ScenarioResult> {
  const lat = new LatencyRecorder();
  for (let i = 0; i < warmupCalls; i++) await call(arg);
  let done = 0;
  const t0 = nowMs();
  let opStart = t0;
  while (done < ctx.records) {
    await call(arg);
    if ((++done & 1023) === 0) {
      const t = nowMs();
      lat.record(t - opStart);
      opStart = t;
      if ((done & 0xffff) === 0) {
        ctx.progress(done / ctx.records);
        if (t > t0 + ctx.durationMs) break;
      }
    }
  }
  const seconds = (nowMs() - t0) / 1000;
  return { records: done, bytes: done * 100, seconds, latenciesMs: lat, opUnit: '1024 awaited calls', extra };
}

/**
 * fdatasync of `fd`: the synchronous call (blocks the event loop, the physical bound) or, with
 * `viaThreadPool`, fs.fdatasync through libuv's thread pool as the engine's sync mode does — the
 * difference is what the hop costs (issue 15).
 */
function fdatasync(fd: number, viaThreadPool: boolean): void | Promise<void> {
  if (!viaThreadPool) return fs.fdatasyncSync(fd);
  return new Promise((resolve, reject) => fs.fdatasync(fd, (e) => (e ? reject(e) : resolve())));
}

/** write + fdatasync of one 100-byte record, repeated. */
async function rawWriteFdatasync(ctx: BenchContext, viaThreadPool = false): Promise<ScenarioResult> {
  const rec = Buffer.concat([Buffer.from([0, 0, 0, 100]), payload(100)]);
  const fd = fs.openSync(path.join(ctx.dir, 'raw.dat'), 'w');
  const lat = new LatencyRecorder();
  const maxOps = ctx.quick ? 50 : Math.max(1000, Math.floor(ctx.records / 100));
  let pos = 0;
  let ops = 0;
  try {
    for (let i = 0; i < Math.min(20, maxOps); i++) {
      fs.writeSync(fd, rec, 0, rec.length, pos);
      await fdatasync(fd, viaThreadPool);
      pos += rec.length;
    }
    const t0 = nowMs();
    const deadline = t0 + ctx.durationMs;
    for (; ops < maxOps; ops++) {
      const a = nowMs();
      fs.writeSync(fd, rec, 0, rec.length, pos);
      await fdatasync(fd, viaThreadPool);
      const b = nowMs();
      lat.record(b - a);
      pos += rec.length;
      if ((ops & 31) === 0) {
        ctx.progress(Math.max(ops / maxOps, (b - t0) / ctx.durationMs));
        if (b > deadline) {
          ops++;
          break;
        }
      }
    }
    const seconds = (nowMs() - t0) / 1000;
    return { records: ops, bytes: ops * 100, seconds, latenciesMs: lat, opUnit: `write + ${viaThreadPool ? 'async ' : ''}fdatasync of 1 record` };
  } finally {
    fs.closeSync(fd);
  }
}

/** 1000 records through the 64 KiB buffer, then fdatasync; repeated. */
async function rawFdatasyncPer1000(ctx: BenchContext, viaThreadPool = false): Promise<ScenarioResult> {
  const value = payload(100);
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  const fd = fs.openSync(path.join(ctx.dir, 'raw.dat'), 'w');
  const maxOps = ctx.quick ? 20 : Math.max(200, Math.floor(ctx.records / 1000));
  let filePos = 0;
  const batch = (): void | Promise<void> => {
    let pos = 0;
    for (let i = 0; i < 1000; i++) {
      if (pos + 104 > CHUNK_BYTES) {
        fs.writeSync(fd, chunk, 0, pos, filePos);
        filePos += pos;
        pos = 0;
      }
      chunk.writeInt32BE(100, pos);
      chunk.set(value, pos + 4);
      pos += 104;
    }
    fs.writeSync(fd, chunk, 0, pos, filePos);
    filePos += pos;
    return fdatasync(fd, viaThreadPool);
  };
  try {
    const { ops, seconds, latenciesMs } = viaThreadPool
      ? await timeAsyncOps(ctx, maxOps, batch as () => Promise<void>, 10)
      : timeOps(ctx, maxOps, batch as () => void, { warmupOps: 10, progressEvery: 1 });
    return { records: ops * 1000, bytes: ops * 1000 * 100, seconds, latenciesMs, opUnit: `1000 records + ${viaThreadPool ? 'async ' : ''}fdatasync` };
  } finally {
    fs.closeSync(fd);
  }
}

/** timeOps for an operation that returns a promise: each awaited before the next. */
async function timeAsyncOps(ctx: BenchContext, maxOps: number, one: () => Promise<void>, warmupOps: number): Promise<{ ops: number; seconds: number; latenciesMs: LatencyRecorder }> {
  const lat = new LatencyRecorder();
  for (let i = 0; i < Math.min(warmupOps, maxOps); i++) await one();
  const t0 = nowMs();
  let ops = 0;
  while (ops < maxOps) {
    const a = nowMs();
    await one();
    const b = nowMs();
    lat.record(b - a);
    ops++;
    ctx.progress(Math.max(ops / maxOps, (b - t0) / ctx.durationMs));
    if (b > t0 + ctx.durationMs) break;
  }
  return { ops, seconds: (nowMs() - t0) / 1000, latenciesMs: lat };
}

/** Reads the data set's `.log` files in 1 MiB chunks and checks every batch's CRC-32C. */
async function rawReadCrc(ctx: BenchContext): Promise<ScenarioResult> {
  const ds = await dataset(ctx);
  const lat = new LatencyRecorder();
  let buf = Buffer.allocUnsafe(1 << 20);
  const scan = (measure: boolean): { records: number; bytes: number } => {
    let records = 0;
    let bytes = 0;
    for (const file of ds.logFiles) {
      const fd = fs.openSync(file, 'r');
      try {
        const size = fs.fstatSync(fd).size;
        let filePos = 0; // file position of buf[0]
        let len = 0;
        let p = 0;
        for (;;) {
          const opStart = measure ? nowMs() : 0;
          // Keep the unread tail, fill the rest.
          if (p > 0) {
            buf.copy(buf, 0, p, len);
            filePos += p;
            len -= p;
            p = 0;
          }
          const want = Math.min(buf.length - len, size - (filePos + len));
          if (want > 0) len += fs.readSync(fd, buf, len, want, filePos + len);
          if (len < 12) break;
          while (p + 12 <= len) {
            const total = buf.readInt32BE(p + 8) + 12;
            if (p + total > len) break;
            if (crc32c(buf, p + 21, p + total) !== buf.readUInt32BE(p + 17)) throw new Error(`CRC mismatch in ${file} at ${filePos + p}`);
            records += buf.readInt32BE(p + 57);
            bytes += total;
            p += total;
          }
          if (measure) lat.record(nowMs() - opStart);
          if (p === 0) {
            if (filePos + len >= size) break;
            const bigger = Buffer.allocUnsafe(buf.length * 2); // a batch larger than the buffer
            buf.copy(bigger, 0, 0, len);
            buf = bigger;
          }
          if (filePos + p >= size) break;
        }
      } finally {
        fs.closeSync(fd);
      }
    }
    return { records, bytes };
  };
  scan(false);
  const t0 = nowMs();
  const r = scan(true);
  const seconds = (nowMs() - t0) / 1000;
  ctx.progress(1);
  return { records: r.records, bytes: r.bytes, seconds, latenciesMs: lat, opUnit: '1 MiB read + CRC-32C of its batches', extra: { mbIsFileBytes: true } };
}

/** pread of a whole batch at a random batch position, CRC-32C checked. */
async function rawRandomRead(ctx: BenchContext): Promise<ScenarioResult> {
  const ds = await dataset(ctx);
  const fds = ds.logFiles.map((f) => fs.openSync(f, 'r'));
  const maxOps = ctx.quick ? 200 : 20_000;
  const rnd = prng(7);
  const biggest = ds.batches.reduce((m, b) => Math.max(m, b.size), 0);
  const buf = Buffer.allocUnsafe(biggest);
  let records = 0;
  let bytes = 0;
  try {
    const one = (): void => {
      const b = ds.batches[Math.floor(rnd() * ds.batches.length)]!;
      fs.readSync(fds[b.file]!, buf, 0, b.size, b.position);
      if (crc32c(buf, 21, b.size) !== buf.readUInt32BE(17)) throw new Error('CRC mismatch');
      records++;
      bytes += b.size;
    };
    const { ops, seconds, latenciesMs } = timeOps(ctx, maxOps, one, { afterWarmup: () => (records = bytes = 0) });
    return { records: ops, bytes, seconds, latenciesMs, opUnit: 'pread of 1 batch + CRC-32C', extra: { batchBytes: biggest } };
  } finally {
    for (const fd of fds) fs.closeSync(fd);
  }
}

/** Bytes of 1 KiB-record scenarios: an eighth of the records, so both write about the same volume. */
export const kibRecords = (ctx: BenchContext): number => Math.max(1000, Math.floor(ctx.records / 8));

/** A raw loop with fs.fdatasync through the thread pool, judged against its synchronous twin: the ratio is what the hop costs. */
function hopCost(name: string, synchronous: string, description: string, run: BenchScenario['run']): BenchScenario {
  return { name, baselineName: synchronous, ratioMetric: 'recordsPerSec', description: `${description} (what the hop costs)`, run };
}

export const baselines: BenchScenario[] = [
  { name: 'raw-write-100B', baseline: true, description: '100 B length-prefixed records through a 64 KiB buffer, fs.writeSync', run: (ctx) => rawWrite(ctx, 100, ctx.records) },
  { name: 'raw-write-1KiB', baseline: true, description: '1 KiB length-prefixed records through a 64 KiB buffer, fs.writeSync', run: (ctx) => rawWrite(ctx, 1024, kibRecords(ctx)) },
  { name: 'raw-append-per-record-async', baseline: true, description: 'one awaited async call per 100 B record into the 64 KiB buffer, fs.writeSync when full', run: rawAppendPerRecordAsync },
  { name: 'raw-write-per-record', baseline: true, description: 'one awaited async call per 100 B record writing its one-record batch (~170 B) with fs.writeSync', run: rawWritePerRecord },
  { name: 'raw-write-fdatasync', baseline: true, description: 'write one 100 B record + fdatasync, repeated', run: (ctx) => rawWriteFdatasync(ctx) },
  hopCost('raw-write-fdatasync-async', 'raw-write-fdatasync', 'write one 100 B record + fs.fdatasync through the thread pool, repeated', (ctx) => rawWriteFdatasync(ctx, true)),
  { name: 'raw-fdatasync-per-1000', baseline: true, description: '1000 records through the 64 KiB buffer, then fdatasync', run: (ctx) => rawFdatasyncPer1000(ctx) },
  hopCost('raw-fdatasync-per-1000-async', 'raw-fdatasync-per-1000', 'the same with fs.fdatasync through the thread pool', (ctx) => rawFdatasyncPer1000(ctx, true)),
  { name: 'raw-read-crc', baseline: true, description: 'read the data set in 1 MiB chunks, CRC-32C of every batch', run: rawReadCrc },
  { name: 'raw-random-read', baseline: true, description: 'pread one batch at a random position, CRC-32C', run: rawRandomRead },
];

export const baselineByName = (name: string): BenchScenario | undefined => baselines.find((b) => b.name === name);
