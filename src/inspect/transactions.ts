/**
 * Internals for commands: logtool's transactions (Kafka's transactional producer: one producer id,
 * its batches and the COMMIT/ABORT marker), and the ones a crash left open.
 */
export { LogTransaction, endDanglingTransactions, isLogtoolProducerId } from '../engine/partition-state/log-transaction.js';
