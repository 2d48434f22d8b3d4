/**
 * Whether a path names a log directory or a partition directory, and where `append --topic
 * --partition` puts a partition in a log directory: apart from logdir-runner.ts so that a command
 * taking one partition (append) classifies its path without loading the runner's tables and
 * worker pool.
 */
import path from 'node:path';
import { realIO, type FileIO, LogtoolError } from '../api/format.js';
import { parseTopicPartition, requireValidTopicName } from '../inspect/log.js';
import { isBrokerLogDir } from '../inspect/logdir.js';
import { LOG_SUFFIX } from '../inspect/format.js';

/**
 * A path is a partition directory when its name parses as `<topic>-<partition>` (as before log
 * directories were taken), unless it exists and is plainly a log directory: it holds
 * meta.properties, or partition directories and no segment.
 */
export function isLogDirPath(given: string, io: FileIO = realIO): boolean {
  const resolved = path.resolve(given);
  if (!parseTopicPartition(resolved)) return true;
  if (io.stat(resolved)?.isDirectory !== true) return false;
  if (isBrokerLogDir(resolved, io)) return true;
  const names = io.readdir(resolved);
  if (names.some((n) => n.endsWith(LOG_SUFFIX))) return false;
  return names.some((n) => parseTopicPartition(n) !== undefined && io.stat(path.join(resolved, n))?.isDirectory === true);
}

/**
 * Where `append --topic T --partition N <logdir>` puts a partition: `<logdir>/<T>-<N>`, Kafka's
 * name, after checking T as Kafka does so that nothing is created outside the log directory. With
 * several log directories the manager's rule (the one holding the fewest partitions) will choose;
 * with one, it is there. A path that is itself a partition directory is a usage error.
 */
export function partitionDirIn(logDir: string, topic: string | undefined, partition: number | undefined, io: FileIO = realIO): string {
  if (topic === undefined || partition === undefined) throw new LogtoolError('usage', '--topic and --partition name the partition together: give both', { file: logDir });
  requireValidTopicName(topic);
  const resolved = path.resolve(logDir);
  if (io.stat(resolved)?.isDirectory === true && !isLogDirPath(resolved, io)) {
    throw new LogtoolError('usage', 'is a partition directory; --topic and --partition name a partition inside a log directory', { file: logDir });
  }
  return path.join(logDir, `${topic}-${partition}`);
}
