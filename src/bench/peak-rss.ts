/**
 * Preloaded (`node --import`) into a child the bench measures as a whole process (processes.ts):
 * on exit, writes the process's peak resident set in KiB (getrusage's ru_maxrss) to the file named
 * by LOGTOOL_BENCH_PEAK_RSS_FILE. Node offers no child's rusage, so the child reports its own.
 */
import fs from 'node:fs';

const file = process.env.LOGTOOL_BENCH_PEAK_RSS_FILE;
if (file) process.on('exit', () => fs.writeFileSync(file, String(process.resourceUsage().maxRSS)));
