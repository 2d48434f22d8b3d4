/**
 * Internals for `transactions abort`: ending an open transaction with an ABORT marker (Kafka's
 * WriteTxnMarkers, as kafka-transactions.sh abort does).
 */
export { abortTarget, abortTransaction } from '../engine/partition-state/abort-transaction.js';
