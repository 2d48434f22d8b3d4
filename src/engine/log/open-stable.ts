/**
 * A read-only open that never observes a half-done segment replacement or deletion by a writer in
 * another process: the reader side of the generation seqlock (cleaner/generation.ts; Kafka's
 * readers rely on the broker's in-memory segment map instead, which another process cannot share).
 */
import path from 'node:path';
import { realIO, type FileIO } from '../io.js';
import { LogtoolError } from '../errors.js';
import { readGeneration, sleepSync } from '../cleaner/generation.js';

/** What the attempts open and close (a Log). */
export interface Closable {
  close(): Promise<void>;
}

/**
 * The seqlock's retry rule, shared by the async and the sync form: yields how long to wait before
 * trying again, returns the opened log once no change began or ended during its open.
 */
export function* stableOpenAttempts<L extends Closable>(io: FileIO, dir: string, resolvedDir: string, timeoutMs: number, open: () => L): Generator<number, L, void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const g1 = readGeneration(io, resolvedDir);
    if (g1.busy && Date.now() < deadline) {
      yield 2;
      continue;
    }
    let log: L | undefined;
    let error: unknown;
    try {
      log = open();
    } catch (e) {
      error = e;
    }
    const g2 = readGeneration(io, resolvedDir);
    if (g2.value === g1.value && !g2.busy) {
      if (error) throw error;
      return log!;
    }
    void log?.close();
    if (Date.now() >= deadline) {
      if (error) throw error;
      throw new LogtoolError('io', `the directory kept changing for ${timeoutMs} ms; could not open a stable view`, { file: dir });
    }
  }
}

/** Log.openStable's attempts: each opens `dir` read-only with `options` (io defaults to realIO). */
export function readOnlyOpenAttempts<L extends Closable, O extends { io?: FileIO }>(dir: string, options: O, timeoutMs: number, open: (dir: string, options: O & { readOnly: true }) => L): Generator<number, L, void> {
  return stableOpenAttempts(options.io ?? realIO, dir, path.resolve(dir), timeoutMs, () => open(dir, { ...options, readOnly: true }));
}

/** Runs the attempts waiting on timers between them: the event loop keeps serving other callers (Log.openStable). */
export async function untilStable<L>(attempts: Generator<number, L, void>): Promise<L> {
  for (let step = attempts.next(); ; step = attempts.next()) {
    if (step.done) return step.value;
    await new Promise((r) => setTimeout(r, step.value));
  }
}

/** Runs the attempts blocking the thread between them (Atomics.wait): for a command's synchronous open (Log.openStableSync). */
export function untilStableSync<L>(attempts: Generator<number, L, void>): L {
  for (let step = attempts.next(); ; step = attempts.next()) {
    if (step.done) return step.value;
    sleepSync(step.value);
  }
}
