/** Partition directory names: `<topic>-<partition>` (kafka-format.md §5.2). */
import path from 'node:path';
import { InvalidArgumentError, InvalidDirectoryError } from '../errors.js';

export interface TopicPartition {
  topic: string;
  partition: number;
}

const TOPIC_RE = /^[a-zA-Z0-9._-]{1,249}$/;

/** Parses a partition directory's name; undefined if it does not follow Kafka's layout. */
export function parseTopicPartition(dir: string): TopicPartition | undefined {
  const name = path.basename(path.resolve(dir));
  const dash = name.lastIndexOf('-');
  if (dash <= 0) return undefined;
  const topic = name.slice(0, dash);
  const part = name.slice(dash + 1);
  if (!/^\d{1,9}$/.test(part) || !TOPIC_RE.test(topic) || topic === '.' || topic === '..') return undefined;
  return { topic, partition: Number(part) };
}

export function requireTopicPartition(dir: string): TopicPartition {
  const tp = parseTopicPartition(dir);
  if (!tp) {
    throw new InvalidDirectoryError(
      `a partition directory must be named <topic>-<partition> as Kafka names them (for example ${path.basename(dir) || 'mylog'}-0); topic names use [a-zA-Z0-9._-]`,
      dir,
    );
  }
  return tp;
}

/** True when the partition number is written with leading zeros (`t-01`): Kafka never names a directory so. */
export function hasLeadingZeros(dir: string): boolean {
  const name = path.basename(path.resolve(dir));
  return /-0\d+$/.test(name);
}

/** logtool creates only Kafka's canonical name (`t-1`, never `t-01`): an InvalidDirectoryError otherwise. */
export function requireCanonicalNameToCreate(dir: string, tp: TopicPartition): void {
  if (hasLeadingZeros(dir)) {
    throw new InvalidDirectoryError(`will not create a partition directory with leading zeros; Kafka names partition ${tp.partition} of ${tp.topic} ${tp.topic}-${tp.partition}`, dir);
  }
}

/**
 * Checkpoints key a partition by `<topic> <partition number>`, so `t-1`, `t-01` and `t-000000001`
 * in one log directory would share (and overwrite) one recovery point and log start offset. Such a
 * directory is used only if it is the one directory there naming its partition: otherwise an
 * InvalidDirectoryError naming both. `siblings` are the names in the log directory.
 */
export function requireUnambiguousPartition(dir: string, tp: TopicPartition, siblings: readonly string[]): void {
  const own = path.basename(path.resolve(dir));
  for (const name of siblings) {
    if (name === own) continue;
    const other = parseTopicPartition(name);
    if (other && other.topic === tp.topic && other.partition === tp.partition) {
      throw new InvalidDirectoryError(
        `${own} and ${name} both name partition ${tp.partition} of topic ${tp.topic} and would share its checkpoint entries; keep one (Kafka's name is ${tp.topic}-${tp.partition})`,
        path.join(path.dirname(path.resolve(dir)), name),
      );
    }
  }
}

/** Kafka's limit on a topic name (Topic.MAX_NAME_LENGTH): 249 characters. */
export const MAX_TOPIC_NAME_LENGTH = 249;

/**
 * A topic name as Kafka's Topic.validate checks it: not empty, not `.` or `..`, at most 249
 * characters of `[a-zA-Z0-9._-]`. Anything else is an invalid-argument error (option `topic`), so a name can never reach outside
 * the log directory it is joined to (`../x`, `/abs`, `a/b`).
 */
export function requireValidTopicName(topic: string): void {
  const shown = JSON.stringify(topic.length > 60 ? `${topic.slice(0, 60)}…` : topic);
  if (topic.length === 0) throw new InvalidArgumentError(['topic'], 'a topic name cannot be empty');
  if (topic === '.' || topic === '..') throw new InvalidArgumentError(['topic'], `topic name ${shown} is not allowed (Kafka refuses "." and "..")`);
  if (topic.length > MAX_TOPIC_NAME_LENGTH) throw new InvalidArgumentError(['topic'], `topic name ${shown} is ${topic.length} characters long; Kafka allows at most ${MAX_TOPIC_NAME_LENGTH}`);
  if (!TOPIC_RE.test(topic)) throw new InvalidArgumentError(['topic'], `topic name ${shown} contains characters Kafka does not allow (only ASCII letters, digits, '.', '_' and '-')`);
}
