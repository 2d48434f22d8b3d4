/**
 * The public API's consumer positions (Kafka's committed offsets, per group, for one partition).
 */
export { ConsumerPositions, CONSUMER_OFFSETS_CHECKPOINT, type ConsumerPosition, type CommitPositionOptions, type ResumePosition } from '../engine/queue/consumer-positions.js';
