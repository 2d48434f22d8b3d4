/**
 * Dynamic topic configs as a KRaft broker knows them, read from its copy of `__cluster_metadata-0`
 * the way Kafka's metadata image is built (metadata/src/main/java/org/apache/kafka/image/):
 * TopicsDelta/TopicsImage from TopicRecord (name, topicId) and RemoveTopicRecord (topicId), and
 * ConfigurationsDelta/ConfigurationDelta/ConfigurationsImage from ConfigRecord (resourceType 2 =
 * TOPIC, 4 = BROKER with an empty name for the cluster default; a null value deletes the key) and
 * from RemoveTopicRecord (MetadataDelta.replay: the topic's configs are deleted with it).
 *
 * The loader (MetadataLoader / SnapshotFileReader) starts from the newest snapshot,
 * `<end offset>-<epoch>.checkpoint` (record batches holding every record below its end offset,
 * framed by SnapshotHeader/SnapshotFooter control batches), then replays the log's records at and
 * after that end offset. Only committed records count in Kafka; the high watermark is not kept on
 * disk, so in a single broker's copy every record of the log is taken (a broker's copy is at most
 * its uncommitted tail ahead). Metadata transactions (BeginTransactionRecord …) are applied as
 * written, aborted ones included. The log's replay stops at the first batch that does not check (a
 * torn tail, as Kafka's recovery would truncate it); a snapshot that does not check is an error. Read-only; memory holds one entry per topic and
 * config key, one batch at a time.
 */
import path from 'node:path';
import { realIO, type FileIO } from '../io.js';
import { CorruptDataError, LogtoolError } from '../errors.js';
import { EntryScanner, scanEndError, type ScanEnd } from '../segment/file-records.js';
import { entryRecords } from '../format/entry-records.js';
import { isControl } from '../format/record-batch.js';
import { decodeMetadataRecord } from '../format/internal/cluster-metadata.js';

/** ConfigResource.Type ids (clients/.../config/ConfigResource.java). */
export const CONFIG_RESOURCE_TOPIC = 2;
export const CONFIG_RESOURCE_BROKER = 4;

export type ConfigMap = Map<string, string>;

export interface ClusterMetadataConfigs {
  /** Every topic the metadata knows, by name, with its dynamic configs (Kafka's names, values as text; empty when none is set). */
  topics: Map<string, ConfigMap>;
  /** Dynamic broker configs by resource name: '' is the cluster-wide default, else a broker id. */
  brokers: Map<string, ConfigMap>;
  /** The snapshot started from, if any. */
  snapshot?: string;
  /** Records applied (snapshot and log). */
  records: number;
}

const SNAPSHOT_RE = /^(\d{20})-(\d{10})\.checkpoint$/;
const SEGMENT_RE = /^(\d{20})\.log$/;

/** The newest snapshot (highest end offset, then epoch), as Kafka's RaftLog.latestSnapshotId. */
function newestSnapshot(names: readonly string[]): { name: string; endOffset: number } | undefined {
  let best: { name: string; endOffset: number; epoch: number } | undefined;
  for (const name of names) {
    const m = SNAPSHOT_RE.exec(name);
    if (!m) continue;
    const endOffset = Number(m[1]);
    const epoch = Number(m[2]);
    if (!best || endOffset > best.endOffset || (endOffset === best.endOffset && epoch > best.epoch)) best = { name, endOffset, epoch };
  }
  return best;
}

/** Reads a `__cluster_metadata-0` directory read-only and returns the configs it holds. */
export function readClusterMetadataConfigs(metadataDir: string, io: FileIO = realIO): ClusterMetadataConfigs {
  const names = io.readdir(metadataDir);
  const image = new MetadataImageBuilder();
  const snapshot = newestSnapshot(names);
  if (snapshot) {
    // A snapshot is whole or useless (Kafka validates it before loading): one that does not read to its end is an error.
    const file = path.join(metadataDir, snapshot.name);
    const end = replayFile(file, 0, image, io);
    const err = scanEndError(file, end);
    if (err) throw err;
  }
  const fromOffset = snapshot?.endOffset ?? 0;
  const segments = names
    .map((n) => SEGMENT_RE.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ name: m[0], base: Number(m[1]) }))
    .sort((a, b) => a.base - b.base);
  for (let i = 0; i < segments.length; i++) {
    // A segment that ends before the snapshot's end offset holds nothing new.
    const next = segments[i + 1];
    if (next && next.base <= fromOffset) continue;
    if (replayFile(path.join(metadataDir, segments[i]!.name), fromOffset, image, io).kind !== 'end') break;
  }
  return { ...image.result(), ...(snapshot ? { snapshot: snapshot.name } : {}) };
}

/** Applies a file's records at or after `fromOffset`; how the scan ended (a log's torn tail ends the replay). */
function replayFile(file: string, fromOffset: number, image: MetadataImageBuilder, io: FileIO): ScanEnd {
  const scanner = new EntryScanner({ io, path: file, verifyCrc: true, chunkBytes: 256 * 1024 });
  for (const entry of scanner.entries()) {
    if (entry.lastOffset < fromOffset || (entry.header && isControl(entry.header))) continue;
    for (const r of entryRecords(entry, { filePosition: entry.position })) {
      if (r.offset < fromOffset) continue;
      if (r.value === null) throw new CorruptDataError(`metadata record at offset ${r.offset} has no value`, entry.position, file);
      let rec;
      try {
        rec = decodeMetadataRecord(r.value);
      } catch (err) {
        if (!(err instanceof LogtoolError)) throw err;
        throw new CorruptDataError(`metadata record at offset ${r.offset} does not decode: ${err.message}`, entry.position, file);
      }
      image.replay(rec.type, rec.data);
    }
  }
  return scanner.end;
}

type RecordData = { [field: string]: unknown } | undefined;

/** TopicsDelta + ConfigurationsDelta, keeping only names and configs. */
class MetadataImageBuilder {
  private readonly topicNameById = new Map<string, string>();
  private readonly topicConfigs = new Map<string, ConfigMap>();
  private readonly brokerConfigs = new Map<string, ConfigMap>();
  private records = 0;

  replay(type: string | undefined, data: RecordData): void {
    this.records++;
    if (type === 'TOPIC_RECORD') this.topic(String(data!.name), String(data!.topicId));
    else if (type === 'REMOVE_TOPIC_RECORD') this.removeTopic(String(data!.topicId));
    else if (type === 'CONFIG_RECORD') this.config(Number(data!.resourceType), String(data!.resourceName), String(data!.name), data!.value as string | null);
  }

  private topic(name: string, topicId: string): void {
    this.topicNameById.set(topicId, name);
    if (!this.topicConfigs.has(name)) this.topicConfigs.set(name, new Map());
  }

  private removeTopic(topicId: string): void {
    const name = this.topicNameById.get(topicId);
    if (name === undefined) return;
    this.topicNameById.delete(topicId);
    this.topicConfigs.delete(name);
  }

  /** ConfigurationDelta.replay: a value sets the key, null deletes it. Configs of other resource types are not kept. */
  private config(resourceType: number, resourceName: string, key: string, value: string | null): void {
    const byName = resourceType === CONFIG_RESOURCE_TOPIC ? this.topicConfigs : resourceType === CONFIG_RESOURCE_BROKER ? this.brokerConfigs : undefined;
    if (!byName) return;
    let configs = byName.get(resourceName);
    if (value === null) {
      configs?.delete(key);
      return;
    }
    // A topic's configs may precede its TopicRecord (the controller writes them in one batch).
    if (!configs) byName.set(resourceName, (configs = new Map()));
    configs.set(key, value);
  }

  result(): { topics: Map<string, ConfigMap>; brokers: Map<string, ConfigMap>; records: number } {
    // A config set for a name no TopicRecord created (or whose topic was removed) is no topic.
    const known = new Set(this.topicNameById.values());
    const topics = new Map([...this.topicConfigs].filter(([name]) => known.has(name)));
    return { topics, brokers: this.brokerConfigs, records: this.records };
  }
}
