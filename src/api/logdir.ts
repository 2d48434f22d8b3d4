/**
 * The public API's broker lock: a log directory's `.lock`, taken as a Kafka broker takes it
 * (flock). Loads no log: every writing command takes it first (commands/broker-lock.ts).
 */
export { BrokerLock } from '../engine/logdir/broker-lock.js';
