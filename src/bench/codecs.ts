/**
 * Codec read bench: one log per codec (none, gzip, snappy, lz4, zstd) holding the same 1 KiB
 * JSON-like records, written through the engine (async flush), then each read back with full
 * decoding (CRC check, decompression, record parsing). Reported per codec: records/s and MB/s of
 * *decompressed* record bytes (keys + values), and the ratio to the uncompressed log's read in the
 * same run, which is what to judge (absolute numbers depend on the machine).
 *
 * The reads are interleaved (none, gzip, …, none, gzip, …) `repeats` times and each codec keeps
 * its fastest pass, so a burst of background load hurts every codec alike instead of one.
 */
import fs from 'node:fs';
import path from 'node:path';
import '../engine/format/codecs/index.js';
import { Log } from '../engine/log/log.js';
import { CompressionType, type CompressionName } from '../engine/format/compression.js';
import type { RecordInput } from '../engine/format/record-batch.js';
import { prng } from './datasets.js';
import { nowMs } from './types.js';

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
  /** Duration of the fastest read pass. */
  seconds: number;
  /** Bytes of the codec's `.log` files. */
  fileBytes: number;
  /** Record bytes / file bytes (how well the data compressed). */
  compressionRatio: number;
  /** Time to append and close the log (not the measured phase). */
  writeSeconds: number;
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

  const runs = new Map<CompressionName, { dir: string; writeSeconds: number; fileBytes: number; best?: { records: number; bytes: number; seconds: number } }>();
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
    runs.set(codec, { dir, writeSeconds: (nowMs() - t0) / 1000, fileBytes: logBytes(dir) });
    progress(++step / steps);
  }

  for (let pass = 0; pass < repeats; pass++) {
    for (const codec of codecs) {
      const run = runs.get(codec)!;
      const r = await readPass(run.dir);
      if (r.records !== records) throw new Error(`${codec}: read ${r.records} records, wrote ${records}`);
      if (!run.best || r.seconds < run.best.seconds) run.best = r;
      progress(++step / steps);
    }
  }

  const mbPerSec = (r: { bytes: number; seconds: number }) => r.bytes / 1e6 / Math.max(r.seconds, 1e-9);
  const baseline = runs.get('none')!.best!;
  const baselineMb = mbPerSec(baseline);
  return codecs.map((codec) => {
    const run = runs.get(codec)!;
    const best = run.best!;
    const mb = mbPerSec(best);
    return {
      name: `read-decode-${codec}`,
      codec,
      recordsPerSec: best.records / Math.max(best.seconds, 1e-9),
      mbPerSec: mb,
      baseline: codec === 'none' ? null : 'read-decode-none',
      ratioToBaseline: codec === 'none' ? null : mb / baselineMb,
      records: best.records,
      bytes: best.bytes,
      seconds: best.seconds,
      fileBytes: run.fileBytes,
      compressionRatio: best.bytes / Math.max(run.fileBytes, 1),
      writeSeconds: run.writeSeconds,
    };
  });
}
