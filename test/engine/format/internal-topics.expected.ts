/**
 * Committed offsets per group in every `__consumer_offsets` partition of the fixtures that holds
 * records: { "<case>/<partition>": { <group>: { "<topic>-<partition>": <committed offset> } } }.
 * A group listed with {} has live GroupMetadata and no live offset.
 *
 * Derived by hand from the bytes (xxd of the .log files, fields read per Kafka's
 * OffsetCommitKey/OffsetCommitValue/GroupMetadataKey/GroupMetadataValue schemas; kafkajs has no
 * decoder for these), independently of logtool's decoder:
 * - zk-multisegment-yuanliubei-2022/__consumer_offsets-17: offset 56 (00000000000000000000.log,
 *   byte 0x3d) key 0001 000c "DemoConsumer" 0006 "topic1" 00000000 = OffsetCommitKey v1
 *   (DemoConsumer, topic1, 0), value 0003 00000000002949f4 ffffffff 0000 0000017de298add2 =
 *   OffsetCommitValue v3 offset 2705908 (below topic1-0's high watermark 2722402); offset 57 GroupMetadataKey "DemoConsumer" with a v2 value
 *   (protocolType "consumer", generation 5, no members); segment 58 holds one batch of two records
 *   whose values are varint -1 (0x01): tombstones for that offset key (offset 58) and for the group
 *   (offset 59). So nothing is left: {}.
 * - kraft-multisegment-rupia-2026/__consumer_offsets-44: offset 6 OffsetCommitKey v1
 *   (rupia-transaction-group, topic_transactions, 0) with a flexible v4 value 0004
 *   0000000000000005 ffffffff 01 0000019b26e16d9a 00 (offset 5, compact empty metadata, no tagged
 *   fields); offset 8 GroupMetadata v3; segment 9: tombstones for both (offsets 9, 10). So {}.
 * - kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-29: offsets 3 and 4 are
 *   OffsetCommitKey v1 (myGroup2, stock-trades, 0) with v3 values 0x01f4 = 500 and then
 *   0x029b = 667 (the values start at bytes 0x38b and 0x405); offsets 0–2 and 5–7 are GroupMetadata v3 values of
 *   myGroup2 (the last: generation 5, protocol null, no members); no tombstone. So
 *   myGroup2 stock-trades-0 = 667.
 * The other entries were produced by logtool's decoder and checked against the broker's own text
 * files where the consumers had caught up: volodymyrzee's first_topic 0/1/2 = 11/12/18,
 * mashakosher's jwtCheckRequest 0/1/2 = 9/4/25, jwtCheckAnswer 0/2 = 10/25, seasons-0 = 61 and
 * erickimm's stock-trades-0 = 5579 equal those partitions' replication-offset-checkpoint (high
 * watermark) entries. They guard against regressions.
 */
export const EXPECTED_COMMITTED: Record<string, Record<string, Record<string, number>>> = {
  "cp512-lz4-logappendtime-mscaldas-2019/__consumer_offsets-0": {},
  "cp512-lz4-logappendtime-mscaldas-2019/__consumer_offsets-13": {"_confluent-controlcenter-5-1-2-1-command":{"_confluent-command-0":2}},
  "cp512-lz4-logappendtime-mscaldas-2019/__consumer_offsets-29": {"schema-registry":{}},
  "cp512-lz4-logappendtime-mscaldas-2019/__consumer_offsets-37": {"compose-connect-group":{}},
  "cp512-lz4-logappendtime-mscaldas-2019/__consumer_offsets-9": {"_confluent-controlcenter-5-1-2-1":{"_confluent-controlcenter-5-1-2-1-actual-group-consumption-rekey-0":11,"_confluent-controlcenter-5-1-2-1-expected-group-consumption-rekey-0":11,"_confluent-controlcenter-5-1-2-1-monitoring-message-rekey-0":11,"_confluent-controlcenter-5-1-2-1-monitoring-trigger-event-rekey-0":22,"_confluent-metrics-0":0,"_confluent-metrics-1":0,"_confluent-metrics-2":0,"_confluent-metrics-3":0,"_confluent-metrics-4":0,"_confluent-metrics-5":0,"_confluent-metrics-6":0,"_confluent-metrics-7":0,"_confluent-metrics-8":0,"_confluent-metrics-9":0,"_confluent-metrics-10":0,"_confluent-metrics-11":0,"_confluent-monitoring-0":10}},
  "kraft-confluentgo-mashakosher-2025/__consumer_offsets-10": {},
  "kraft-confluentgo-mashakosher-2025/__consumer_offsets-12": {},
  "kraft-confluentgo-mashakosher-2025/__consumer_offsets-15": {"authService":{"dailyTasks-0":9,"gameSettings-0":2,"jwtCheckRequest-0":9,"jwtCheckRequest-1":4,"jwtCheckRequest-2":25,"seasons-0":61}},
  "kraft-confluentgo-mashakosher-2025/__consumer_offsets-2": {"adminServiceBecomingAnswer":{"jwtCheckAnswer-0":10,"jwtCheckAnswer-2":25}},
  "kraft-idempotent-ldipoc-2026/__consumer_offsets-6": {"DEVSmileCDR":{"Retry.TestTopicPatient-0":0,"TestTopicPatient-0":3,"batch2.work.notification.SHR_PROD.persistence-0":0,"subscription.matching.SHR_PROD.persistence-0":0}},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-16": {"groupId2":{"my-topic-0":0}},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-17": {"myGroup":{"stock-trades-0":5579}},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-18": {"groupId":{"stock-trades-0":667,"testing-0":42}},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-19": {},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-29": {"myGroup2":{"stock-trades-0":667}},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-30": {},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-32": {},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-36": {},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-39": {},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-44": {},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-48": {},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-49": {},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-6": {},
  "kraft-idempotent-multisegment-erickimm-2025/__consumer_offsets-9": {},
  "kraft-multisegment-rupia-2026/__consumer_offsets-31": {"console-consumer-7889":{}},
  "kraft-multisegment-rupia-2026/__consumer_offsets-44": {},
  "zk-2.8-snappy-seanorth-2022/__consumer_offsets-16": {"simple-consumer-example":{"some-topic-0":8,"test-topic-0":0}},
  "zk-cleanshutdown-volodymyrzee-2020/__consumer_offsets-12": {"my-second-application":{"first_topic-0":11,"first_topic-1":12,"first_topic-2":18}},
  "zk-cleanshutdown-volodymyrzee-2020/__consumer_offsets-17": {},
  "zk-cleanshutdown-volodymyrzee-2020/__consumer_offsets-18": {"my-first-application":{"first_topic-0":11,"first_topic-1":12,"first_topic-2":18}},
  "zk-cleanshutdown-volodymyrzee-2020/__consumer_offsets-32": {"my-firstd-application":{"first_topic-0":11,"first_topic-1":12,"first_topic-2":18}},
  "zk-cleanshutdown-volodymyrzee-2020/__consumer_offsets-33": {},
  "zk-gzip-mixed-macsakini-2023/__consumer_offsets-11": {"console-consumer-16210":{}},
  "zk-gzip-mixed-macsakini-2023/__consumer_offsets-13": {"console-consumer-79790":{}},
  "zk-multisegment-yuanliubei-2022/__consumer_offsets-17": {},
};
