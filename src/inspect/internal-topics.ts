/**
 * Internals for forensic commands: internal-topic decoders by topic (Kafka's
 * kafka-dump-log.sh decoders), KRaft control records, Scala's hash-map order for printing.
 */
export { ScalaStringMap } from '../engine/format/internal/scala-hash-order.js';
export { describeKraftControl } from '../engine/format/kraft-control.js';
export { type DecodedInternal, type InternalRecord, type InternalTopicKind, internalControlDecoder, internalDecoder } from '../engine/format/internal/index.js';
