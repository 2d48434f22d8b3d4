/**
 * A channel put commit as batches (channel.ts): one v2 record batch when the staged records fit
 * max.message.bytes (kafka-format.md §2; Kafka's LogValidator limit), else a logtool transaction
 * as Kafka's transactional producer writes one (§2.4; partition-state/log-transaction.ts):
 * transactional batches of one producer, made durable, then a COMMIT marker — so that a
 * read_committed reader sees all of the commit or none of it, whatever a crash cuts.
 */
import type { AppendResult, Log } from '../log/log.js';
import { encodeBatch, type RecordInput } from '../format/record-batch.js';
import { LogTransaction } from '../partition-state/log-transaction.js';

/** Size of a COMMIT marker batch (kafka-format.md §19 B: one control record). */
export const MARKER_BATCH_BYTES = 78;

export interface EncodedChunk {
  records: readonly RecordInput[];
  /** The chunk encoded at offset 0 (the log rewrites the base offset): its size on disk. */
  batch: Buffer;
}

/**
 * The records as batches within `maxMessageBytes`, in order: one when they fit (encoded once),
 * else halves, each halved again until it fits. A single record above the limit stays one batch,
 * which the log refuses naming the limit.
 */
export function splitIntoBatches(records: readonly RecordInput[], opts: { compression?: number; logAppendTime?: boolean; maxMessageBytes: number }): EncodedChunk[] {
  const out: EncodedChunk[] = [];
  const place = (rs: readonly RecordInput[]): void => {
    const batch = encodeBatch(rs, { baseOffset: 0, compression: opts.compression, logAppendTime: opts.logAppendTime });
    if (batch.length <= opts.maxMessageBytes || rs.length === 1) {
      out.push({ records: rs, batch });
      return;
    }
    const half = Math.ceil(rs.length / 2);
    place(rs.slice(0, half));
    place(rs.slice(half));
  };
  place(records);
  return out;
}

/**
 * Appends the chunks as one logtool transaction: its batches at once (consecutive offsets), then,
 * once they are durable, the COMMIT marker, durable. On a failure the transaction is aborted
 * (best effort: the first error is the one reported; a crash leaves it to endDanglingTransactions).
 */
export async function commitAsTransaction(log: Log, chunks: readonly (readonly RecordInput[])[], compression?: number): Promise<AppendResult> {
  const tx = await LogTransaction.begin(log);
  let first: { baseOffset: number } | undefined;
  let last: { lastOffset: number } | undefined;
  try {
    const appends = chunks.map((rs) => tx.append(rs, { compression }));
    for (const a of appends) {
      const r = await a;
      first ??= r;
      last = r;
    }
    await tx.commit();
  } catch (e) {
    await tx.abort().catch(() => undefined);
    throw e;
  }
  return { baseOffset: first!.baseOffset, lastOffset: last!.lastOffset, count: chunks.reduce((n, rs) => n + rs.length, 0), status: 'flushed' };
}
