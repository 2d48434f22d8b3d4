/**
 * Output for pipes: lines are buffered and written with backpressure (await drain), and a closed
 * pipe (EPIPE, as with `| head`) ends the command quietly instead of throwing. The CLI never calls
 * process.exit(): it sets process.exitCode and lets stdout drain.
 */
import { Chalk, type ChalkInstance } from 'chalk';
import { colourLevel } from './colour-level.js';
import { clearStderrLine } from './stderr-line.js';

export { colourLevel };

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

/** A chalk for a stream at colourLevel(stream). */
export function colours(stream: Pick<NodeJS.WriteStream, 'isTTY'> = process.stdout): ChalkInstance {
  return new Chalk({ level: colourLevel(stream) });
}

export { clearStderrLine, setBeforeStderrLine } from './stderr-line.js';

/** Warnings go to stderr, one line each. */
export function warn(message: string): void {
  clearStderrLine();
  const c = colours(process.stderr);
  process.stderr.write(`${c.yellow('warning:')} ${message}\n`);
}
