/**
 * Helpers for the cleaner tests: building logs from a list of batches, reading everything back
 * (our reader and kafkajs's own RecordBatch decoder), checking every CRC, fingerprinting a
 * directory (to prove "nothing changed"), and a model of what compaction must keep.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Log } from '../../../src/engine/log/log.js';
import type { LogConfig } from '../../../src/engine/config.js';
import { EntryScanner } from '../../../src/engine/segment/file-records.js';
import { realIO } from '../../../src/engine/io.js';
import { computeBatchCrc, type RecordInput } from '../../../src/engine/format/record-batch.js';
import '../../../src/engine/format/codecs/index.js';
import type { AppendOptions } from '../../../src/engine/log/log.js';
import type { SwapStep } from '../../../src/engine/cleaner/swap.js';

const require = createRequire(import.meta.url);
const KafkaDecoder = require('kafkajs/src/protocol/decoder');
const kafkaDecodeBatch: (d: unknown) => Promise<KafkaBatch> = require('kafkajs/src/protocol/recordBatch/v0/decoder');

// kafkajs ships gzip only: plug in independent decoders for the other codecs (decoding is all we need).
type KafkajsCodec = { compress(e: { buffer: Buffer }): Promise<Buffer>; decompress(b: Buffer): Promise<Buffer> };
const kafkajs: { CompressionCodecs: Record<number, () => KafkajsCodec>; CompressionTypes: Record<string, number> } = require('kafkajs');
const noCompress = async (): Promise<Buffer> => {
  throw new Error('not needed');
};
kafkajs.CompressionCodecs[kafkajs.CompressionTypes.Snappy!] = require('kafkajs-snappy');
kafkajs.CompressionCodecs[kafkajs.CompressionTypes.LZ4!] = () => ({ compress: noCompress, decompress: async (b) => Buffer.from((require('lz4js') as { decompress(b: Uint8Array): Uint8Array }).decompress(b)) });
kafkajs.CompressionCodecs[kafkajs.CompressionTypes.ZSTD!] = () => ({ compress: noCompress, decompress: async (b) => Buffer.from((require('fzstd') as { decompress(b: Uint8Array): Uint8Array }).decompress(b)) });

export interface KafkaBatch {
  firstOffset: string;
  lastOffsetDelta: number;
  firstTimestamp: string;
  maxTimestamp: string;
  producerId: string;
  producerEpoch: number;
  firstSequence: number;
  inTransaction: boolean;
  isControlBatch: boolean;
  partitionLeaderEpoch: number;
  records: { offset: string; timestamp: string; key: Buffer | null; value: Buffer | null }[];
}

export interface Rec {
  offset: number;
  key: string | null;
  value: string | null;
  timestamp: number | bigint;
}

/** A batch to write: its records, and the batch fields an append may set. */
export interface BatchSpec extends Pick<AppendOptions, 'compression' | 'producerId' | 'producerEpoch' | 'baseSequence' | 'transactional' | 'control'> {
  records: { key: string | null; value: string | null; timestamp?: number }[];
}

const toInput = (r: BatchSpec['records'][number]): RecordInput => ({
  key: r.key === null ? null : Buffer.from(r.key),
  value: r.value === null ? null : Buffer.from(r.value),
  timestamp: r.timestamp,
});

/** Appends the batches (in order) to a new log; returns the records as written. */
export async function buildLog(dir: string, batches: BatchSpec[], config: Partial<LogConfig> = {}): Promise<Rec[]> {
  const log = Log.open(dir, { config: { flushMode: 'async', ...config } });
  const out: Rec[] = [];
  try {
    for (const b of batches) {
      const res = await log.append(b.records.map(toInput), {
        compression: b.compression,
        producerId: b.producerId,
        producerEpoch: b.producerEpoch,
        baseSequence: b.baseSequence,
        transactional: b.transactional,
        control: b.control,
      });
      if (!b.control) b.records.forEach((r, i) => out.push({ offset: res.baseOffset + i, key: r.key, value: r.value, timestamp: r.timestamp ?? -1 }));
    }
  } finally {
    await log.close();
  }
  return out;
}

/** Every (non-control) record of the log, read with logtool's reader. */
export function readAll(dir: string): Rec[] {
  const log = Log.open(dir, { readOnly: true });
  try {
    return [...log.read()].map((r) => ({ offset: r.offset, key: r.key === null ? null : r.key.toString(), value: r.value === null ? null : r.value.toString(), timestamp: r.timestamp }));
  } finally {
    void log.close();
  }
}

/** Raw batches of every segment (bytes), in log order. */
export function rawBatches(dir: string): { file: string; position: number; bytes: Buffer }[] {
  const out: { file: string; position: number; bytes: Buffer }[] = [];
  const logs = fs.readdirSync(dir).filter((n) => /^\d{20}\.log$/.test(n)).sort();
  for (const n of logs) {
    const file = path.join(dir, n);
    const scanner = new EntryScanner({ io: realIO, path: file });
    for (const e of scanner.entries()) out.push({ file, position: e.position, bytes: Buffer.from(e.buf.subarray(e.bufPos, e.bufPos + e.size)) });
    if (scanner.end.kind !== 'end') throw new Error(`${file}: ${scanner.end.reason}`);
  }
  return out;
}


/** Throws unless every batch's stored CRC-32C matches its bytes. Returns the number of batches. */
export function checkAllCrcs(dir: string): number {
  const batches = rawBatches(dir);
  for (const b of batches) {
    const stored = b.bytes.readUInt32BE(17);
    const computed = computeBatchCrc(b.bytes, 0, b.bytes.length);
    if (stored !== computed) throw new Error(`${b.file} at ${b.position}: CRC ${stored} != ${computed}`);
  }
  return batches.length;
}

/** Decodes every batch with kafkajs 2.2.4's own RecordBatch decoder. */
export async function kafkajsDecodeAll(dir: string): Promise<KafkaBatch[]> {
  const out: KafkaBatch[] = [];
  for (const b of rawBatches(dir)) out.push(await kafkaDecodeBatch(new KafkaDecoder(b.bytes)));
  return out;
}

/** Records as kafkajs sees them (control batches skipped). */
export function kafkajsRecords(batches: KafkaBatch[], enc: BufferEncoding = 'utf8'): Rec[] {
  const out: Rec[] = [];
  for (const b of batches) {
    if (b.isControlBatch) continue;
    for (const r of b.records) out.push({ offset: Number(r.offset), key: r.key === null ? null : r.key.toString(enc), value: r.value === null ? null : r.value.toString(enc), timestamp: Number(r.timestamp) });
  }
  return out;
}

/** name → sha256 of every file under dir (recursively): equal fingerprints = nothing changed. */
export function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const n of fs.readdirSync(d).sort()) {
      const p = path.join(d, n);
      const st = fs.statSync(p);
      if (st.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/**
 * What one compaction of the range [0, upTo) must leave (no transactions, first cleaning): the
 * latest record per key below upTo (tombstones included: their horizon starts now), and every
 * record from upTo on.
 */
export function modelCompaction(records: Rec[], upTo: number): Rec[] {
  const latest = new Map<string, number>();
  for (const r of records) if (r.offset < upTo && r.key !== null) latest.set(r.key, r.offset);
  return records.filter((r) => r.offset >= upTo || (r.key !== null && latest.get(r.key) === r.offset));
}

export const strip = (rs: Rec[]) => rs.map((r) => `${r.offset}|${r.key}|${r.value}`);

export function copyDir(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true });
  for (const n of fs.readdirSync(from)) fs.copyFileSync(path.join(from, n), path.join(to, n));
}

class SimulatedCrash extends Error {}

/**
 * Compacts dir, stopping right after step number stopAt (−1: never) of the swap protocol as a
 * crash would: the process's state is dropped (Log.abandon: no flush, no close). Returns the
 * steps seen.
 */
export async function compactStoppingAt(dir: string, stopAt: number, config: Partial<LogConfig>, nowMs: number): Promise<SwapStep[]> {
  const steps: SwapStep[] = [];
  const log = Log.open(dir, { config });
  try {
    await log.compact({
      nowMs,
      deleteDelayMs: 0,
      onStep: (s) => {
        steps.push(s);
        if (steps.length - 1 === stopAt) throw new SimulatedCrash(`stopped after ${s.phase}`);
      },
    });
    await log.close();
  } catch (e) {
    if (!(e instanceof SimulatedCrash)) throw e;
    log.abandon();
  }
  return steps;
}
