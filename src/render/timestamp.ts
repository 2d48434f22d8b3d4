/**
 * Timestamps for people and for JSON. A Kafka timestamp is any int64 (Timestamp in
 * record-batch.ts): ISO-8601 only when a JavaScript Date can hold it, the integer otherwise, never
 * a crash ("Invalid time value") nor a rounded number.
 */
import type { Timestamp } from '../engine/format/record-batch.js';

/** Largest |ms| a Date holds (ECMAScript: ±8.64e15 ms, ±100,000,000 days around 1970). */
const MAX_DATE_MS = 8.64e15;

/** ISO-8601 for a non-negative timestamp a Date can hold; the exact integer otherwise (−1: no timestamp). */
export function formatTimestamp(ts: Timestamp): string {
  return typeof ts === 'number' && ts >= 0 && ts <= MAX_DATE_MS ? new Date(ts).toISOString() : integerText(ts);
}

/** A timestamp in JSON, exactly: a number within ±2^53, a string beyond (JSON numbers lose precision there). */
export function timestampJson(ts: Timestamp): number | string {
  return typeof ts === 'number' && Number.isSafeInteger(ts) ? ts : integerText(ts);
}

/** All the digits (String(2 ** 60) would print the shortest round-trip form, 1152921504606847000). */
function integerText(ts: Timestamp): string {
  return typeof ts === 'number' && Number.isInteger(ts) ? BigInt(ts).toString() : String(ts);
}
