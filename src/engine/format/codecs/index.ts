/**
 * Registers every compression codec with the registry. Importing this module (the engine's index
 * and entry-records.ts do) is what makes compressed batches readable and writable.
 */
import { CompressionType, registerCodec } from '../compression.js';
import { gzipCodec } from './gzip.js';
import { lz4Codec } from './lz4.js';
import { snappyCodec } from './snappy.js';
import { zstdCodec } from './zstd.js';

registerCodec(CompressionType.gzip, gzipCodec);
registerCodec(CompressionType.snappy, snappyCodec);
registerCodec(CompressionType.lz4, lz4Codec);
registerCodec(CompressionType.zstd, zstdCodec);

export { gzipCodec, lz4Codec, snappyCodec, zstdCodec };
