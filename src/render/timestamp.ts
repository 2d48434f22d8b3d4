/**
 * Timestamps for people and for JSON. A Kafka timestamp is any int64 (Timestamp in
 * record-batch.ts): ISO-8601 only when a JavaScript Date can hold it, the integer otherwise, never
 * a crash ("Invalid time value") nor a rounded number.
 */
import type { Timestamp } from '../engine/format/record-batch.js';

/** Largest |ms| a Date holds (ECMAScript: ±8.64e15 ms, ±100,000,000 days around 1970). */
const MAX_DATE_MS = 8.64e15;

/** The second whose ISO-8601 text (without "mmmZ") formatTimestamp made last: a log's records mostly share it. */
let lastSecond = -1;
let lastSecondText = '';

/** ISO-8601 for a non-negative timestamp a Date can hold; the exact integer otherwise (−1: no timestamp). */
export function formatTimestamp(ts: Timestamp): string {
  if (typeof ts !== 'number' || !(ts >= 0 && ts <= MAX_DATE_MS)) return integerText(ts);
  if (!Number.isInteger(ts)) return new Date(ts).toISOString();
  // toISOString always ends in "mmmZ": one Date per second of timestamps, not one per record.
  const second = Math.floor(ts / 1000);
  if (second !== lastSecond) {
    lastSecondText = new Date(second * 1000).toISOString().slice(0, -4);
    lastSecond = second;
  }
  const ms = ts - second * 1000;
  return `${lastSecondText}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
}

/** A timestamp in JSON, exactly: a number within ±2^53, a string beyond (JSON numbers lose precision there). */
export function timestampJson(ts: Timestamp): number | string {
  return typeof ts === 'number' && Number.isSafeInteger(ts) ? ts : integerText(ts);
}

/** All the digits (String(2 ** 60) would print the shortest round-trip form, 1152921504606847000). */
function integerText(ts: Timestamp): string {
  return typeof ts === 'number' && Number.isInteger(ts) ? BigInt(ts).toString() : String(ts);
}
