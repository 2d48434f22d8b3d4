/**
 * Hand-encoding of Kafka's internal-topic records for tests: hex bytes, classic int16-length
 * strings, and __consumer_offsets OffsetCommitKey v1 / OffsetCommitValue v3
 * (group-coordinator/src/main/resources/common/message/OffsetCommit{Key,Value}.json).
 */
export const h = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
export const str16 = (s: string): Buffer => Buffer.concat([h(Buffer.byteLength(s).toString(16).padStart(4, '0')), Buffer.from(s)]);
export const commitKey = (group: string, topic: string, partition: number): Buffer => Buffer.concat([h('0001'), str16(group), str16(topic), h(partition.toString(16).padStart(8, '0'))]);
/** OffsetCommitValue v3: offset, leader epoch −1, empty metadata, commit timestamp 1000. */
export const commitValue = (offset: number): Buffer => Buffer.concat([h('0003'), h(offset.toString(16).padStart(16, '0')), h('ffffffff'), str16(''), h('00000000000003e8')]);
