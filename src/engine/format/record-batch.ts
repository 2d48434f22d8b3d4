/**
 * RecordBatch v2 (magic 2): encode, decode, verify. Layout in ../shared/docs/kafka-format.md §2.
 * The header and its helpers live in batch-header.ts, encoding in batch-encode.ts, decoding in
 * batch-decode.ts; this module keeps the one import path the rest of the engine uses.
 */
export * from './batch-header.js';
export * from './batch-encode.js';
export * from './batch-decode.js';
