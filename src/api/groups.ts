/**
 * The public API's consumer groups: __consumer_offsets records (Kafka's GroupCoordinator record
 * schemas) decoded and the group state they build (Kafka's GroupMetadataManager, offline).
 */
export { decodeOffsetsRecord, type OffsetsRecord } from '../engine/format/internal/consumer-offsets.js';
export { GroupStateBuilder, type GroupState, type CommittedOffset } from '../engine/format/internal/group-state.js';
