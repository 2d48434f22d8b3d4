/**
 * Committed offsets and classic group metadata as a `__consumer_offsets` partition leaves them,
 * folded in log order the way Kafka's coordinator loads the partition (GroupMetadataManager /
 * GroupCoordinatorShard replay): the latest OffsetCommit value per (group, topic, partition) wins,
 * an OffsetCommit tombstone removes that offset, the latest GroupMetadata value per group wins and
 * its tombstone removes the group's metadata (its offsets have tombstones of their own). Records of
 * the KIP-848 and share-group types carry no committed offsets and are counted, not folded.
 * Transactional offset commits (TxnOffsetCommit) are held per producer until the producer's
 * COMMIT marker applies them in order, or its ABORT marker drops them (GroupMetadataManager's
 * pendingTransactionalOffsetCommits); a transaction still open at the end applies nothing.
 */
import { decodeOffsetsRecord } from './consumer-offsets.js';

export interface CommittedOffset {
  topic: string;
  partition: number;
  offset: number | bigint;
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: number | bigint;
  /** Offset of the record in __consumer_offsets that holds this commit. */
  recordOffset: number;
}

export interface GroupState {
  group: string;
  /** From the latest GroupMetadata value, absent when there is none (or it was deleted). */
  protocolType?: string;
  protocol?: string | null;
  generation?: number;
  members?: number;
  offsets: CommittedOffset[];
}

/** Folds records one at a time; `groups()` returns the state so far, sorted. */
export class GroupStateBuilder {
  private readonly offsets = new Map<string, Map<string, CommittedOffset>>();
  private readonly metadata = new Map<string, { protocolType: string; protocol: string | null; generation: number; members: number }>();
  /** Records of record types that hold no committed offsets (KIP-848, share groups). */
  otherRecords = 0;
  private readonly pending = new Map<string, { recordOffset: number; key: Buffer; value: Buffer | null }[]>();

  /** A record of a transactional batch: held until its producer's marker. */
  applyTransactional(producerId: number | bigint, recordOffset: number, key: Buffer, value: Buffer | null): void {
    const id = String(producerId);
    const list = this.pending.get(id) ?? [];
    list.push({ recordOffset, key, value });
    this.pending.set(id, list);
  }

  /** A producer's COMMIT (commit true) or ABORT marker. */
  endTransaction(producerId: number | bigint, commit: boolean): void {
    const id = String(producerId);
    const list = this.pending.get(id) ?? [];
    this.pending.delete(id);
    if (commit) for (const r of list) this.apply(r.recordOffset, r.key, r.value);
  }

  /** Applies one record; throws what decodeOffsetsRecord throws for a record that does not decode. */
  apply(recordOffset: number, key: Buffer, value: Buffer | null): void {
    const d = decodeOffsetsRecord(key, value);
    const group = String(d.key.group ?? d.key.groupId);
    if (d.name === 'OffsetCommit') {
      const id = `${String(d.key.topic)}\u0000${String(d.key.partition)}`;
      const byTp = this.offsets.get(group) ?? new Map<string, CommittedOffset>();
      this.offsets.set(group, byTp);
      if (d.value === null) {
        byTp.delete(id);
        return;
      }
      const v = d.value;
      byTp.set(id, {
        topic: d.key.topic as string,
        partition: d.key.partition as number,
        offset: v.offset as number | bigint,
        leaderEpoch: (v.leaderEpoch as number | undefined) ?? -1,
        metadata: (v.metadata as string | null) ?? '',
        commitTimestamp: v.commitTimestamp as number | bigint,
        recordOffset,
      });
    } else if (d.name === 'GroupMetadata') {
      if (d.value === null) {
        this.metadata.delete(group);
        return;
      }
      const v = d.value;
      const members = Array.isArray(v.members) ? v.members.length : 0;
      this.metadata.set(group, { protocolType: v.protocolType as string, protocol: v.protocol as string | null, generation: v.generation as number, members });
    } else {
      this.otherRecords++;
    }
  }

  groups(): GroupState[] {
    const names = new Set([...this.metadata.keys(), ...[...this.offsets].filter(([, m]) => m.size > 0).map(([g]) => g)]);
    return [...names].sort().map((group) => {
      const offsets = [...(this.offsets.get(group)?.values() ?? [])].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
      const meta = this.metadata.get(group);
      return meta ? { group, ...meta, offsets } : { group, offsets };
    });
  }
}

