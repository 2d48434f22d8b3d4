/**
 * Internals for the compact command: the cleaner (Kafka's LogCleaner) and its limits.
 */
export { type CleanProgress, type CleanReport, DEFAULT_CLEANER_MEMORY_BYTES, KeylessRecordsError } from '../engine/cleaner/cleaner.js';
