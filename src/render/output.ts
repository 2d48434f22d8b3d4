/**
 * Output for pipes: lines are buffered and written with backpressure (await drain), and a closed
 * pipe (EPIPE, as with `| head`) ends the command quietly instead of throwing. The CLI never calls
 * process.exit(): it sets process.exitCode and lets stdout drain.
 */
import { Chalk, type ChalkInstance } from 'chalk';

const FLUSH_AT_BYTES = 64 * 1024;

export class Output {
  private readonly stream: NodeJS.WriteStream;
  private pending: string[] = [];
  private pendingBytes = 0;
  /** True once the reader of our stdout went away. */
  closed = false;

  constructor(stream: NodeJS.WriteStream = process.stdout) {
    this.stream = stream;
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') this.closed = true;
      else throw err;
    });
  }

  get isTTY(): boolean {
    return Boolean(this.stream.isTTY);
  }

  /** Queues one line; writes when the buffer is large. Await it in loops to respect backpressure. */
  async line(text: string): Promise<void> {
    if (this.closed) return;
    this.pending.push(text);
    this.pendingBytes += text.length + 1;
    if (this.pendingBytes >= FLUSH_AT_BYTES) await this.flush();
  }

  /** Writes what is queued; resolves once the stream can take more. */
  async flush(): Promise<void> {
    if (this.closed || this.pending.length === 0) return;
    const chunk = this.pending.join('\n') + '\n';
    this.pending = [];
    this.pendingBytes = 0;
    const ok = this.stream.write(chunk);
    if (!ok && !this.closed) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.stream.off('drain', done);
          this.stream.off('error', done);
          this.stream.off('close', done);
          resolve();
        };
        this.stream.once('drain', done);
        this.stream.once('error', done);
        this.stream.once('close', done);
      });
    }
  }

  /** Writes a JSON value as one line. */
  async json(value: unknown): Promise<void> {
    await this.line(JSON.stringify(value));
  }
}

/**
 * The colour level for a stream, the one rule for all output (text, tables, errors, warnings,
 * progress). FORCE_COLOR, when set, decides as chalk documents it and overrides every other check:
 * 0 or "false" off, 1/2/3 that level, "" or "true" level 1. Otherwise no colour when NO_COLOR is set
 * to anything but the empty string (no-color.org), off a terminal, or on TERM=dumb.
 */
export function colourLevel(stream: Pick<NodeJS.WriteStream, 'isTTY'> = process.stdout): 0 | 1 | 2 | 3 {
  const forced = forcedColourLevel(process.env.FORCE_COLOR);
  if (forced !== undefined) return forced;
  if (process.env.NO_COLOR) return 0;
  return stream.isTTY && process.env.TERM !== 'dumb' ? 1 : 0;
}

function forcedColourLevel(value: string | undefined): 0 | 1 | 2 | 3 | undefined {
  if (value === undefined) return undefined;
  if (value === '' || value === 'true') return 1;
  if (value === 'false') return 0;
  const n = Number.parseInt(value, 10);
  return Number.isNaN(n) ? undefined : (Math.max(0, Math.min(n, 3)) as 0 | 1 | 2 | 3);
}

/** A chalk for a stream at colourLevel(stream). */
export function colours(stream: Pick<NodeJS.WriteStream, 'isTTY'> = process.stdout): ChalkInstance {
  return new Chalk({ level: colourLevel(stream) });
}

let beforeStderrLine: (() => void) | undefined;

/** Set by a progress line on stderr: erases it before a warning or an error line is written. */
export function setBeforeStderrLine(fn: (() => void) | undefined): void {
  beforeStderrLine = fn;
}

/** Erases a progress line, if one is drawn, so a line written to stderr starts at column 0. */
export function clearStderrLine(): void {
  beforeStderrLine?.();
}

/** Warnings go to stderr, one line each. */
export function warn(message: string): void {
  clearStderrLine();
  const c = colours(process.stderr);
  process.stderr.write(`${c.yellow('warning:')} ${message}\n`);
}
