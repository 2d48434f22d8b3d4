/**
 * Internals for commands: consumer group name rules (Kafka's group id, as stored in the checkpoint).
 */
export { validateGroupName } from '../engine/queue/consumer-positions.js';
