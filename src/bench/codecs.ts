/**
 * Codec read bench: one log per codec (none, gzip, snappy, lz4, zstd) holding the same 1 KiB
 * JSON-like records, written through the engine (async flush), then each read back with full
 * decoding (CRC check, decompression, record parsing). Reported per codec: records/s and MB/s of
 * *decompressed* record bytes (keys + values), and the ratio to the uncompressed log's read in the
 * same run, which is what to judge (absolute numbers depend on the machine).
 *
 * The reads are interleaved (none, gzip, …, none, gzip, …) `repeats` times and each codec keeps
 * its fastest pass, so a burst of background load hurts every codec alike instead of one.
 *
 * Beside each compressed read, the codec library's own decompression of the same batch payloads
 * (node:zlib gunzip, snappy's raw blocks, lz4-napi's blocks, zstd-napi's one-shot decompress; the
 * framing parsed beforehand, untimed): what logtool's read-decode is judged against (issue 15:
 * within 1.2×), and logtool's codec call alone on the same payloads (what its framing adds; for lz4
 * the blocks unjoined, as a read takes them).
 */
import fs from 'node:fs';
import path from 'node:path';
import '../engine/format/codecs/index.js';
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';
import { Log } from '../engine/log/log.js';
import { EntryScanner } from '../engine/segment/file-records.js';
import { realIO } from '../engine/io.js';
import { RECORD_BATCH_OVERHEAD } from '../engine/format/record-batch.js';
import { codecFor } from '../engine/format/compression.js';
import { CompressionType, type CompressionName } from '../engine/format/compression.js';
import type { RecordInput } from '../engine/format/record-batch.js';
import { prng } from './datasets.js';
import { median, nowMs } from './types.js';

export interface CodecBenchOptions {
  /** Bytes per record value (default 1024). */
  recordBytes?: number;
  /** Records per appended batch, i.e. per compressed stream (default 100). */
  batchRecords?: number;
  /** Codecs to run; `none` always runs first, as the baseline (default all five). */
  codecs?: readonly CompressionName[];
  /** Read passes per codec; the fastest counts (default 3). */
  repeats?: number;
  /** Progress of the whole run, 0..1. */
  progress?: (fraction: number) => void;
}

export interface CodecBenchResult {
  /** `read-decode-<codec>`. */
  name: string;
  codec: CompressionName;
  recordsPerSec: number;
  /** Decompressed record bytes (keys + values) per second, in MB (10^6 bytes). */
  mbPerSec: number;
  /** Name of the uncompressed read this is compared with; null for that read itself. */
  baseline: string | null;
  /** mbPerSec / the baseline's mbPerSec; null for the baseline itself. */
  ratioToBaseline: number | null;
  records: number;
  /** Decompressed record bytes read per pass. */
  bytes: number;
  /** Duration of the median read pass. */
  seconds: number;
  /** Bytes of the codec's `.log` files. */
  fileBytes: number;
  /** Record bytes / file bytes (how well the data compressed). */
  compressionRatio: number;
  /** Time to append and close the log (not the measured phase). */
  writeSeconds: number;
  /** Compressed codecs: the library's own decompression of the same payloads (median pass). */
  library?: { mbPerSec: number; seconds: number };
  /** Compressed codecs: logtool's codec call alone on the same payloads (median pass). */
  codecCall?: { mbPerSec: number; seconds: number };
  /** Compressed codecs: the median over passes of the read's MB/s over the library's in that pass. */
  readDecodeToLibrary?: number;
  /** Compressed codecs: the same for the codec call alone. */
  codecCallToLibrary?: number;
}

const ALL_CODECS: readonly CompressionName[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const WORDS = ['order', 'payment', 'shipment', 'refund', 'login', 'logout', 'click', 'view', 'search', 'cart', 'checkout', 'review'];
const REGIONS = ['eu-west-1', 'us-east-1', 'us-west-2', 'ap-south-1', 'sa-east-1'];
const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A JSON-ish event of exactly `bytes` bytes: repeated field names and small vocabularies (which
 * compress) around ids, numbers and a random token string (which do not) — roughly what an
 * application log or event topic carries. Deterministic in `n`.
 */
export function jsonishRecord(n: number, bytes: number): Buffer {
  const rnd = prng(0x9e3779b9 ^ (n * 2654435761));
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
  const token = (len: number): string => {
    let s = '';
    for (let i = 0; i < len; i++) s += ALNUM[Math.floor(rnd() * ALNUM.length)];
    return s;
  };
  const head =
    `{"id":${n},"ts":${1_700_000_000_000 + n * 37},"type":"${pick(WORDS)}","user":"user-${Math.floor(rnd() * 100_000)}",` +
    `"region":"${pick(REGIONS)}","amount":${(rnd() * 1000).toFixed(2)},"session":"${token(24)}","tags":["${pick(WORDS)}","${pick(WORDS)}"],` +
    `"attrs":{"browser":"${pick(['firefox', 'chrome', 'safari'])}","retries":${Math.floor(rnd() * 4)},"ok":${rnd() < 0.9}},"note":"`;
  const tail = '"}';
  let body = '';
  // Half the filler is words from the vocabulary, half random tokens.
  while (head.length + body.length + tail.length < bytes) body += rnd() < 0.5 ? `${pick(WORDS)} ` : `${token(6)} `;
  const text = (head + body).slice(0, Math.max(0, bytes - tail.length)) + tail;
  return Buffer.from(text.slice(0, bytes), 'latin1');
}

function logBytes(dir: string): number {
  let n = 0;
  for (const f of fs.readdirSync(dir)) if (f.endsWith('.log')) n += fs.statSync(path.join(dir, f)).size;
  return n;
}

/** Reads every record of the log with full decoding; returns record count, bytes and seconds. */
async function readPass(dir: string): Promise<{ records: number; bytes: number; seconds: number }> {
  const log = Log.open(dir, { readOnly: true });
  try {
    let records = 0;
    let bytes = 0;
    const t0 = nowMs();
    for (const r of log.read()) {
      records++;
      bytes += (r.key ? r.key.length : 0) + (r.value ? r.value.length : 0);
    }
    return { records, bytes, seconds: (nowMs() - t0) / 1000 };
  } finally {
    await log.close();
  }
}

/** The records sections (compressed payloads) of every batch of a log, read untimed. */
function batchPayloads(dir: string): Buffer[] {
  const out: Buffer[] = [];
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.log')).sort()) {
    for (const e of new EntryScanner({ io: realIO, path: path.join(dir, f) }).entries()) {
      if (e.header) out.push(Buffer.from(e.buf.subarray(e.bufPos + RECORD_BATCH_OVERHEAD, e.bufPos + e.size)));
    }
  }
  return out;
}

const require = createRequire(import.meta.url);

/** Splits framed payloads into what the library decodes (xerial chunks, LZ4 frame blocks with lz4-napi's size prefix). */
function libraryInputs(codec: CompressionName, payloads: Buffer[]): Buffer[] {
  if (codec === 'gzip' || codec === 'zstd') return payloads;
  const blocks: Buffer[] = [];
  for (const p of payloads) {
    if (codec === 'snappy') {
      for (let pos = 16; pos + 4 <= p.length; ) {
        const n = p.readInt32BE(pos);
        blocks.push(p.subarray(pos + 4, pos + 4 + n));
        pos += 4 + n;
      }
      continue;
    }
    // lz4: magic, FLG, BD, HC, then blocks (Kafka writes no content size, no block checksums).
    for (let pos = 7; ; ) {
      const word = p.readUInt32LE(pos);
      const n = word & 0x7fffffff;
      if (n === 0) break;
      if ((word & 0x80000000) === 0) {
        const block = Buffer.allocUnsafe(4 + n);
        block.writeUInt32LE(64 * 1024, 0);
        p.copy(block, 4, pos + 4, pos + 4 + n);
        blocks.push(block);
      }
      pos += 4 + n;
    }
  }
  return blocks;
}

/** The library call that decodes one input of libraryInputs. */
function libraryDecoder(codec: CompressionName): (b: Buffer) => Buffer {
  switch (codec) {
    case 'gzip':
      return (b) => gunzipSync(b);
    case 'snappy': {
      const lib = require('snappy') as typeof import('snappy');
      // The library's faster call, as the codec makes it (copyOutputData: output in V8's memory, no external buffer).
      return (b) => lib.uncompressSync(b, { asBuffer: true, copyOutputData: true }) as Buffer;
    }
    case 'lz4': {
      const lib = require('lz4-napi') as typeof import('lz4-napi');
      return (b) => lib.uncompressSync(b);
    }
    default: {
      const lib = require('zstd-napi') as typeof import('zstd-napi');
      return (b) => lib.decompress(b);
    }
  }
}

function sumLengths(pieces: Buffer[]): number {
  let n = 0;
  for (const p of pieces) n += p.length;
  return n;
}

/** One timed pass of `decode` (which returns the bytes it decompressed) over `inputs`; returns the decompressed bytes and seconds. */
function decodePass(inputs: Buffer[], decode: (b: Buffer) => number): { bytes: number; seconds: number } {
  let bytes = 0;
  const t0 = nowMs();
  for (const b of inputs) bytes += decode(b);
  return { bytes, seconds: (nowMs() - t0) / 1000 };
}

/** Timed passes of the codec library's own decompression and of logtool's codec call over one log's batch payloads. */
interface CodecCalls {
  library(): { bytes: number; seconds: number };
  codecCall(): { bytes: number; seconds: number };
}

/** Prepares both calls on a log's payloads (read untimed) and warms each up with one pass that checks they agree. */
export function codecCalls(dir: string, codec: CompressionName): CodecCalls {
  const payloads = batchPayloads(dir);
  const inputs = libraryInputs(codec, payloads);
  const lib = libraryDecoder(codec);
  const ours = codecFor(CompressionType[codec])!;
  // What a read calls: the pieces where the codec offers them (lz4's blocks, taken unjoined by the record decoder).
  const pieces = ours.decompressPieces?.bind(ours);
  const call = pieces ? (b: Buffer) => sumLengths(pieces(b, 1 << 30)) : (b: Buffer) => ours.decompress(b, 1 << 30).length;
  const calls: CodecCalls = { library: () => decodePass(inputs, (b) => lib(b).length), codecCall: () => decodePass(payloads, call) };
  const l = calls.library();
  const o = calls.codecCall();
  if (l.bytes !== o.bytes) throw new Error(`${codec}: the library decoded ${l.bytes} bytes, logtool's codec ${o.bytes}`);
  return calls;
}

const mbPerSec = (r: { bytes: number; seconds: number }): number => r.bytes / 1e6 / Math.max(r.seconds, 1e-9);

/** The pass of median MB/s (the lower middle one for an even count). */
function medianPass<T extends { bytes: number; seconds: number }>(passes: T[]): T {
  const sorted = [...passes].sort((x, y) => mbPerSec(x) - mbPerSec(y));
  return sorted[(sorted.length - 1) >> 1]!;
}

/** The median over passes of a[i]'s MB/s over b[i]'s. */
function pairedMedian(a: readonly { bytes: number; seconds: number }[], b: readonly { bytes: number; seconds: number }[]): number {
  return median(a.map((x, i) => mbPerSec(x) / mbPerSec(b[i]!)));
}

/**
 * Writes `records` records into one log per codec under `scratchDir` (partition directories
 * `codec-<name>-0`) and measures the read-with-decode throughput of each. Returns one result per
 * codec, `none` first; compressed codecs carry their ratio to `none`.
 */
export async function benchCodecs(scratchDir: string, records: number, options: CodecBenchOptions = {}): Promise<CodecBenchResult[]> {
  const recordBytes = options.recordBytes ?? 1024;
  const batchRecords = Math.max(1, options.batchRecords ?? 100);
  const repeats = Math.max(1, options.repeats ?? 3);
  const codecs = ['none' as const, ...(options.codecs ?? ALL_CODECS).filter((c) => c !== 'none')];
  if (!Number.isSafeInteger(records) || records < 1) throw new Error(`record count must be a positive integer, not ${records}`);
  const progress = options.progress ?? (() => {});
  const steps = codecs.length * (1 + repeats);
  let step = 0;

  // The same records for every codec, built once (not timed).
  const pool: RecordInput[] = [];
  const poolSize = Math.min(records, 4096);
  for (let i = 0; i < poolSize; i++) pool.push({ key: Buffer.from(`key-${i % 1000}`), value: jsonishRecord(i, recordBytes) });

  type Pass = { records: number; bytes: number; seconds: number };
  type Timed = { bytes: number; seconds: number };
  const runs = new Map<CompressionName, { dir: string; writeSeconds: number; fileBytes: number; reads: Pass[]; calls?: CodecCalls; library: Timed[]; codecCall: Timed[] }>();
  for (const codec of codecs) {
    const dir = path.join(scratchDir, `codec-${codec}-0`);
    fs.rmSync(dir, { recursive: true, force: true });
    const t0 = nowMs();
    const log = Log.open(dir, { config: { flushMode: 'async' }, rememberConfig: false });
    try {
      for (let written = 0; written < records; ) {
        const n = Math.min(batchRecords, records - written);
        const batch: RecordInput[] = new Array(n);
        for (let i = 0; i < n; i++) batch[i] = pool[(written + i) % poolSize]!;
        await log.append(batch, { compression: CompressionType[codec] });
        written += n;
      }
    } finally {
      await log.close();
    }
    runs.set(codec, { dir, writeSeconds: (nowMs() - t0) / 1000, fileBytes: logBytes(dir), reads: [], ...(codec === 'none' ? {} : { calls: codecCalls(dir, codec) }), library: [], codecCall: [] });
    progress(++step / steps);
  }

  for (let pass = 0; pass < repeats; pass++) {
    for (const codec of codecs) {
      const run = runs.get(codec)!;
      const r = await readPass(run.dir);
      if (r.records !== records) throw new Error(`${codec}: read ${r.records} records, wrote ${records}`);
      run.reads.push(r);
      if (run.calls) {
        run.library.push(run.calls.library());
        run.codecCall.push(run.calls.codecCall());
      }
      progress(++step / steps);
    }
  }

  const none = runs.get('none')!.reads;
  return codecs.map((codec) => {
    const run = runs.get(codec)!;
    const read = medianPass(run.reads);
    const timed = (t: Timed[]) => {
      const m = medianPass(t);
      return { mbPerSec: mbPerSec(m), seconds: m.seconds };
    };
    return {
      ...(run.calls
        ? {
            library: timed(run.library),
            codecCall: timed(run.codecCall),
            readDecodeToLibrary: pairedMedian(run.reads, run.library),
            codecCallToLibrary: pairedMedian(run.codecCall, run.library),
          }
        : {}),
      name: `read-decode-${codec}`,
      codec,
      recordsPerSec: read.records / Math.max(read.seconds, 1e-9),
      mbPerSec: mbPerSec(read),
      baseline: codec === 'none' ? null : 'read-decode-none',
      ratioToBaseline: codec === 'none' ? null : pairedMedian(run.reads, none),
      records: read.records,
      bytes: read.bytes,
      seconds: read.seconds,
      fileBytes: run.fileBytes,
      compressionRatio: read.bytes / Math.max(run.fileBytes, 1),
      writeSeconds: run.writeSeconds,
    };
  });
}
