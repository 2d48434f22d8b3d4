/** Partition directory names: `<topic>-<partition>` (kafka-format.md §5.2). */
import path from 'node:path';
import { LogtoolError } from './errors.js';

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
    throw new LogtoolError(
      'usage',
      `a partition directory must be named <topic>-<partition> as Kafka names them (for example ${path.basename(dir) || 'mylog'}-0); topic names use [a-zA-Z0-9._-]`,
      { file: dir },
    );
  }
  return tp;
}
