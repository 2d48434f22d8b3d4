/**
 * logtool's public engine API, the package's one module. See README.md ("Library") for a tour.
 * It is put together from parts by job (src/api/*.ts) so that a command imports only the parts it
 * uses and starts no slower than before (issue 15); the package exports this module whole.
 */
import './engine/format/codecs/index.js';
export * from './api/format.js';
export * from './api/log.js';
export * from './api/logdir.js';
export * from './api/verify.js';
export * from './api/queue.js';
export * from './api/groups.js';
export * from './api/internal-topics.js';
export { Channel, type ChannelOptions, type ChannelCounters, type PutTransaction, type TakeTransaction } from './engine/queue/channel.js';
export { LogManager, type LogManagerOptions, type LoadProgressEvent } from './engine/logdir/log-manager.js';
export type { ScheduleEvent, ScheduleIntervals, ScheduledTaskName } from './engine/logdir/manager-schedule.js';
