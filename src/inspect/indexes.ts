/**
 * Internals for forensic commands: index entries checked against the .log (Kafka's
 * kafka-dump-log.sh --index-sanity-check / --verify-index-only).
 */
export { type IndexMismatch, verifySegmentIndexes } from '../engine/recovery/index-verifier.js';
