/**
 * The public API's verifier: verifyLog, every CRC, offset and index check (kafka-dump-log.sh's
 * --verify-index-only and more), loaded only by the commands that verify.
 */
export { verifyLog, type VerifyReport, type VerifyProblem, type VerifyOptions } from '../engine/recovery/log-verifier.js';
