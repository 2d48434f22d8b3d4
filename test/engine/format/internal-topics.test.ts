/**
 * Decoders of Kafka's internal topics (src/engine/format/internal): every `__consumer_offsets`
 * partition and every KRaft metadata log and snapshot in the fixtures decodes with no unknown
 * record; the committed offsets they leave agree with tables derived by hand
 * (internal-topics.expected.ts); hand-encoded records of every key/value version decode to the
 * JSON Kafka's converters print; garbage never crashes a decoder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Log } from '../../../src/engine/log/log.js';
import { EntryScanner } from '../../../src/engine/segment/file-records.js';
import { decodeEntryRecords } from '../../../src/engine/format/entry-records.js';
import { isControl } from '../../../src/engine/format/record-batch.js';
import { realIO } from '../../../src/engine/io.js';
import { CorruptDataError } from '../../../src/engine/errors.js';
import { decodeOffsets, decodeOffsetsRecord } from '../../../src/engine/format/internal/consumer-offsets.js';
import { decodeTransactionLog } from '../../../src/engine/format/internal/transaction-log.js';
import { decodeClusterMetadata, decodeMetadataRecord } from '../../../src/engine/format/internal/cluster-metadata.js';
import { GroupStateBuilder } from '../../../src/engine/format/internal/group-state.js';
import { KafkaDouble, kafkaJsonText } from '../../../src/engine/format/internal/schema.js';
import { internalDecoder, INTERNAL_TOPIC_KINDS } from '../../../src/engine/format/internal/index.js';
import { fixturesRoot, requireFixtures } from '../../helpers/fixtures.js';
import { EXPECTED_COMMITTED } from './internal-topics.expected.js';
import { h, str16 } from '../../helpers/kafka-internal.js';

const hasFixtures = requireFixtures(import.meta.url);

const segmentsRoot = path.join(fixturesRoot, 'segments');
const partitionsOf = (topic: string): string[] =>
  hasFixtures
    ? fs
        .readdirSync(segmentsRoot)
        .flatMap((c) => fs.readdirSync(path.join(segmentsRoot, c)).filter((d) => d.startsWith(`${topic}-`)).map((d) => `${c}/${d}`))
        .filter((p) => fs.readdirSync(path.join(segmentsRoot, p)).some((f) => f.endsWith('.log') && fs.statSync(path.join(segmentsRoot, p, f)).size > 0))
    : [];

async function recordsOf(partition: string) {
  const log = Log.open(path.join(segmentsRoot, partition), { readOnly: true });
  try {
    return [...log.read({ fromOffset: 0 })];
  } finally {
    await log.close();
  }
}

describe('__consumer_offsets in the fixtures', () => {
  const partitions = partitionsOf('__consumer_offsets');
  it('has the partitions the expected tables name', () => {
    expect(partitions.sort()).toEqual(Object.keys(EXPECTED_COMMITTED).sort());
  });

  it.each(partitions)('%s: every record decodes, none unknown', async (p) => {
    const records = await recordsOf(p);
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      const d = decodeOffsets(r);
      expect(d.problem, `${p} offset ${r.offset}: ${d.key}`).toBe(false);
      expect(d.key).toMatch(/^\{"type":"[012]","data":\{"group":/);
    }
  });

  it.each(partitions)('%s: committed offsets agree with the expected table', async (p) => {
    const b = new GroupStateBuilder();
    for (const r of await recordsOf(p)) b.apply(r.offset, r.key!, r.value);
    const got = Object.fromEntries(b.groups().map((g) => [g.group, Object.fromEntries(g.offsets.map((o) => [`${o.topic}-${o.partition}`, Number(o.offset)]))]));
    expect(got).toEqual(EXPECTED_COMMITTED[p]);
  });
});

describe('KRaft metadata in the fixtures', () => {
  const files = partitionsOf('__cluster_metadata').flatMap((p) =>
    fs
      .readdirSync(path.join(segmentsRoot, p))
      .filter((f) => f.endsWith('.log') || f.endsWith('.checkpoint'))
      .map((f) => path.join(p, f)),
  );
  const bootstrap = hasFixtures ? fs.readdirSync(segmentsRoot).map((c) => path.join(c, 'bootstrap.checkpoint')).filter((f) => fs.existsSync(path.join(segmentsRoot, f))) : [];

  it.each([...files.filter((f) => f.endsWith('.log')), ...files.filter((f) => f.endsWith('.checkpoint')).slice(0, 3), ...bootstrap])('%s: every metadata record decodes to a known type', (file) => {
    const full = path.join(segmentsRoot, file);
    const scanner = new EntryScanner({ io: realIO, path: full, endPosition: fs.statSync(full).size });
    const types = new Set<string>();
    for (const e of scanner.entries()) {
      if (e.header && isControl(e.header)) continue;
      for (const r of decodeEntryRecords(e)) {
        const d = decodeClusterMetadata(r);
        expect(d.problem, `${file} offset ${r.offset}: ${d.payload}`).toBe(false);
        types.add(String(d.json.type));
      }
    }
    expect(types.size).toBeGreaterThan(0);
    expect(types.has('UNKNOWN')).toBe(false);
  });
});

describe('__consumer_offsets records, hand-encoded', () => {
  const key1 = Buffer.concat([h('0001'), str16('g'), str16('t'), h('00000007')]);
  it('OffsetCommitValue v0, v1 (expireTimestamp) and v3 (leaderEpoch) print the fields of their version', () => {
    const v0 = Buffer.concat([h('0000 000000000000002a'), str16('m'), h('0000000000000064')]);
    expect(decodeOffsets({ offset: 0, key: key1, value: v0 }).payload).toBe('{"version":"0","data":{"offset":42,"metadata":"m","commitTimestamp":100}}');
    const v1 = Buffer.concat([h('0001 000000000000002a'), str16(''), h('0000000000000064 00000000000000c8')]);
    expect(decodeOffsets({ offset: 0, key: key1, value: v1 }).payload).toBe('{"version":"1","data":{"offset":42,"metadata":"","commitTimestamp":100,"expireTimestamp":200}}');
    const v3 = Buffer.concat([h('0003 000000000000002a 00000005'), str16(''), h('0000000000000064')]);
    expect(decodeOffsets({ offset: 0, key: key1, value: v3 }).payload).toBe('{"version":"3","data":{"offset":42,"leaderEpoch":5,"metadata":"","commitTimestamp":100}}');
    expect(decodeOffsets({ offset: 0, key: key1, value: null })).toMatchObject({ key: '{"type":"1","data":{"group":"g","topic":"t","partition":7}}', payload: '<DELETE>', problem: false });
    const key0 = Buffer.concat([h('0000'), key1.subarray(2)]); // OffsetCommitKey v0 (the oldest key version), same fields
    expect(decodeOffsets({ offset: 0, key: key0, value: v0 }).key).toBe('{"type":"0","data":{"group":"g","topic":"t","partition":7}}');
  });

  it('OffsetCommitValue v4 is flexible: compact metadata and a tagged-field section', () => {
    const v4 = h('0004 000000000000002a ffffffff 03 6162 0000000000000064 00');
    expect(decodeOffsets({ offset: 0, key: key1, value: v4 }).payload).toBe('{"version":"4","data":{"offset":42,"leaderEpoch":-1,"metadata":"ab","commitTimestamp":100}}');
  });

  it('GroupMetadataValue v0 with a member whose subscription is not the consumer protocol keeps the bytes (base64)', () => {
    const key = Buffer.concat([h('0002'), str16('grp')]);
    const member = Buffer.concat([str16('m1'), str16('c1'), str16('/h'), h('00002710 00000002 abcd 00000001 ff')]);
    const value = Buffer.concat([h('0000'), str16('connect'), h('00000003'), str16('range'), str16('m1'), h('00000001'), member]);
    expect(decodeOffsets({ offset: 9, key, value }).payload).toBe(
      '{"version":"0","data":{"protocolType":"connect","generation":3,"protocol":"range","leader":"m1","members":[{"memberId":"m1","clientId":"c1","clientHost":"/h","sessionTimeout":10000,"subscription":"q80=","assignment":"/w=="}]}}',
    );
  });

  it('an unknown record type or value version is reported, not a crash', () => {
    expect(decodeOffsets({ offset: 4, key: h('0063 0000'), value: null })).toMatchObject({ key: 'Unknown record type 99 at offset 4, skipping.', problem: true });
    const d = decodeOffsets({ offset: 5, key: key1, value: h('0009 00') });
    expect(d.problem).toBe(true);
    expect(d.key).toBe("Error at offset 5, skipping. Could not read record with version 9 from value's buffer due to: Can't read version 9 of OffsetCommitValue.");
    expect(decodeOffsets({ offset: 6, key: null, value: null }).problem).toBe(true);
  });

  it('a KIP-848 consumer-group record (type 3) decodes by its schema', () => {
    const d = decodeOffsetsRecord(Buffer.concat([h('0003'), str16('cg')]), h('0000 00000007 00'));
    expect(d).toMatchObject({ type: 3, name: 'ConsumerGroupMetadata', key: { groupId: 'cg' }, value: { epoch: 7 } });
  });
});

describe('__transaction_state and metadata records, hand-encoded', () => {
  it('TransactionLogValue v1 prints as TransactionLog.formatRecordKeyAndValue', () => {
    const key = Buffer.concat([h('0000'), str16('tx-1')]);
    // v1 (flexible): producerId 1000, epoch 2, timeout 60000, state 1 Ongoing, partitions [{t,[0,1]}], timestamps, no tags
    const value = h('0001 00000000000003e8 0002 0000ea60 01 02 0274 03 00000000 00000001 00 0000000000000064 0000000000000032 00');
    expect(decodeTransactionLog({ offset: 0, key, value })).toMatchObject({
      key: 'transaction_metadata::transactionalId=tx-1',
      // Scala HashSet order: TopicPartition hashes 1077 (t-0) and 1108 (t-1) fall in buckets 5 and 4 of 16.
      payload: 'producerId:1000,producerEpoch:2,state=Ongoing,partitions=[t-1,t-0],txnLastUpdateTimestamp=100,txnTimeoutMs=60000',
      problem: false,
    });
    expect(decodeTransactionLog({ offset: 0, key, value: null }).payload).toBe('<DELETE>');
    expect(decodeTransactionLog({ offset: 0, key: h('0005 0000'), value: null })).toMatchObject({ key: 'unknown::version=5', problem: true });
  });

  it('tagged fields: a known tag is printed (non-default), an unknown tag skipped', () => {
    const key = Buffer.concat([h('0000'), str16('tx')]);
    // TransactionLogValue v1, Empty, no partitions (compact 01), tags: 2 fields — tag 0
    // previousProducerId = 5 (8 bytes), tag 9 unknown (1 byte)
    const value = h('0001 0000000000000007 0001 0000ea60 00 01 00000000000000c8 0000000000000064 02 00 08 0000000000000005 09 01 ff');
    const d = decodeTransactionLog({ offset: 0, key, value });
    expect(d.problem).toBe(false);
    expect((d.json.value as { data: Record<string, unknown> }).data).toEqual({
      producerId: 7,
      previousProducerId: 5,
      producerEpoch: 1,
      transactionTimeoutMs: 60000,
      transactionStatus: 0,
      transactionPartitions: [],
      transactionLastUpdateTimestampMs: 200,
      transactionStartTimestampMs: 100,
    });
  });

  it('GroupMetadataValue v4 (flexible): compact strings, member structs with their own tag sections', () => {
    const key = Buffer.concat([h('0002'), str16('g')]);
    // protocolType "x", generation 1, protocol null (00), leader "m" , currentStateTimestamp 5,
    // one member: memberId "m", groupInstanceId null, clientId "c", clientHost "h", rebalance 1,
    // session 2, subscription 0x01, assignment empty, member tags 0; value tags 0
    const value = h('0004 0278 00000001 00 026d 0000000000000005 02 026d 00 0263 0268 00000001 00000002 0201 01 00 00');
    expect(decodeOffsets({ offset: 0, key, value }).payload).toBe(
      '{"version":"4","data":{"protocolType":"x","generation":1,"protocol":null,"leader":"m","currentStateTimestamp":5,"members":[{"memberId":"m","groupInstanceId":null,"clientId":"c","clientHost":"h","rebalanceTimeout":1,"sessionTimeout":2,"subscription":"AQ==","assignment":""}]}}',
    );
  });

  it('a metadata record type Kafka does not know is UNKNOWN with its type id', () => {
    expect(decodeMetadataRecord(h('01 63 00'))).toEqual({ typeId: 99, version: 0 });
    expect(decodeClusterMetadata({ offset: 3, key: null, value: h('01 63 00') })).toMatchObject({
      payload: 'Error at 3, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 99',
      json: { type: 'UNKNOWN', typeId: 99 },
      problem: true,
    });
    // Kafka's MetadataParseException messages: a body that ends early, bytes after the record, frame 0
    expect(decodeClusterMetadata({ offset: 4, key: null, value: h('01 02 00 05') })).toMatchObject({ payload: 'Error at 4, skipping. Failed to deserialize record with type 2', problem: true });
    expect(decodeClusterMetadata({ offset: 5, key: null, value: h('01 14 00 00 ff') }).payload).toBe('Error at 5, skipping. Found 1 byte(s) of garbage after 20');
    expect(decodeClusterMetadata({ offset: 6, key: null, value: h('00') }).payload).toMatch(/^Error at 6, skipping\. Could not deserialize metadata record with frame version 0\./);
    // TopicRecord v0: name "t", topic id, no tags
    const topic = Buffer.concat([h('01 02 00 02 74'), Buffer.alloc(16, 0xff), h('00')]);
    expect(decodeClusterMetadata({ offset: 3, key: null, value: topic }).payload).toBe('{"type":"TOPIC_RECORD","version":0,"data":{"name":"t","topicId":"_____________________w"}}');
  });
});

describe("kafkaJsonText prints as Jackson's ObjectNode.toString()", () => {
  it('escapes, int64 beyond 2^53, bytes as base64, doubles as Java prints them', () => {
    expect(kafkaJsonText({ s: 'a\u001f\n\\u00ab"', n: 2n ** 63n - 1n, b: Buffer.from([0xff, 0xfe]), d: new KafkaDouble(1), e: new KafkaDouble(1.5e10), z: null, a: [true, -1] })).toBe(
      '{"s":"a\\u001F\\n\\\\u00ab\\"","n":9223372036854775807,"b":"//4=","d":1.0,"e":1.5E10,"z":null,"a":[true,-1]}',
    );
  });
});

describe('garbage never crashes a decoder', () => {
  const bytes = fc.oneof(fc.constant(null), fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)));
  it.each(INTERNAL_TOPIC_KINDS)('%s: any key and value give a decode or a clean problem', (kind) => {
    const decode = internalDecoder(kind);
    fc.assert(
      fc.property(bytes, bytes, (key, value) => {
        const d = decode({ offset: 1, key, value });
        expect(typeof d.json).toBe('object');
        if (d.problem) expect(`${d.key ?? ''}${d.payload ?? ''}`.length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('a valid type and version prefix followed by garbage reaches deep into each schema and still never crashes', () => {
    const tail = fc.uint8Array({ maxLength: 96 }).map((a) => Buffer.from(a));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 16 }), fc.integer({ min: 0, max: 5 }), tail, tail, (type, version, k, v) => {
        const key = Buffer.concat([Buffer.from([0, type]), k]);
        const value = Buffer.concat([Buffer.from([0, version]), v]);
        expect(typeof decodeOffsets({ offset: 0, key, value }).json).toBe('object');
        const meta = decodeClusterMetadata({ offset: 0, key: null, value: Buffer.concat([Buffer.from([1, type + 10 * (version % 3), version]), v]) });
        expect(meta.problem || typeof meta.payload === 'string').toBe(true);
        expect(typeof decodeTransactionLog({ offset: 0, key: Buffer.concat([h('0000'), k]), value: Buffer.concat([Buffer.from([0, version % 2]), v]) }).json).toBe('object');
      }),
      { numRuns: 3000 },
    );
  });

  it('huge counts and lengths in a few bytes are refused before anything is allocated', () => {
    // GroupMetadataValue v0 whose member array claims 2^31-1 members
    const value = Buffer.concat([h('0000'), str16('consumer'), h('00000001 ffff ffff 7fffffff')]);
    expect(() => decodeOffsetsRecord(Buffer.concat([h('0002'), str16('g')]), value)).toThrow(CorruptDataError);
    // RegisterBrokerRecord v0 with a compact endpoint array of 2^28 items
    expect(() => decodeMetadataRecord(h('01 00 00 00000001 00000000000000000000000000000000 0000000000000001 8080808001'))).toThrow(CorruptDataError);
  });
});
