/**
 * The one progress renderer of the long commands (verify, recover, rebuild-index, compact,
 * retention, append, bench, and the log-directory runner): one line on stderr with a label, counts
 * done / total, rate and ETA when the total is known. Drawn only when stderr is a terminal and `CI`
 * is unset; nothing at all on a pipe. Colour follows colourLevel (NO_COLOR). Redraws at most
 * every REDRAW_INTERVAL_MS, and the line is erased when the command ends, so the command's own
 * output starts on a clean line. A warning written meanwhile (output.ts warn) erases it first.
 *
 * Driven by the command's calls, not only by a timer, so a synchronous scan (verify) still draws.
 */
import { colours, setBeforeStderrLine } from './output.js';

/** At most 10 redraws per second. */
export const REDRAW_INTERVAL_MS = 100;

/** What is counted: bytes print as KiB/MiB, the others as plain numbers with the unit's name. */
export type ProgressUnit = 'bytes' | 'records' | 'segments' | 'batches' | 'partitions';

export interface Progress {
  /** Changes the label (what is being done). */
  update(text: string): void;
  /** Sets the count done and, when known, the total (rate and ETA need the total). */
  count(done: number, total?: number): void;
  succeed(text?: string): void;
  stop(): void;
}

const silent: Progress = { update() {}, count() {}, succeed() {}, stop() {} };

export interface ProgressOptions {
  unit?: ProgressUnit;
  /** Where to draw; process.stderr unless a test gives another terminal stream. */
  stream?: NodeJS.WriteStream;
}

/** True when progress may be drawn on `stream`: a terminal, and not under CI. */
export function progressEnabled(stream: NodeJS.WriteStream = process.stderr): boolean {
  return Boolean(stream.isTTY) && !process.env.CI;
}

export function startProgress(text: string, enabled = true, options: ProgressOptions = {}): Progress {
  const stream = options.stream ?? process.stderr;
  if (!enabled || !progressEnabled(stream)) return silent;
  return new LineProgress(stream, text, options.unit ?? 'bytes');
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

class LineProgress implements Progress {
  private label: string;
  private done = 0;
  private total: number | undefined;
  private counted = false;
  private readonly startedMs = Date.now();
  private lastDrawMs = this.startedMs;
  private drawn = false;
  private frame = 0;
  private ended = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    label: string,
    private readonly unit: ProgressUnit,
  ) {
    this.label = label;
    // Keeps the line alive while an asynchronous command waits; never keeps the process alive.
    this.timer = setInterval(() => this.draw(), REDRAW_INTERVAL_MS);
    this.timer.unref();
    setBeforeStderrLine(() => this.erase());
  }

  update(text: string): void {
    this.label = text;
    this.draw();
  }

  count(done: number, total?: number): void {
    this.done = Math.max(0, done);
    this.total = total !== undefined && total >= 0 ? total : undefined;
    this.counted = true;
    this.draw();
  }

  succeed(text?: string): void {
    this.end();
    if (text) {
      const c = colours(this.stream);
      this.stream.write(`${c.green('✔')} ${text}\n`);
    }
  }

  stop(): void {
    this.end();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.timer);
    setBeforeStderrLine(undefined);
    this.erase();
  }

  private draw(): void {
    const now = Date.now();
    if (this.ended || now - this.lastDrawMs < REDRAW_INTERVAL_MS) return;
    this.lastDrawMs = now;
    const c = colours(this.stream);
    const spinner = c.cyan(SPINNER[this.frame++ % SPINNER.length]!);
    const counts = this.counted ? `: ${describeCounts(this.done, this.total, now - this.startedMs, this.unit)}` : '';
    this.stream.write(`\r${spinner} ${fitWidth(this.label, counts, this.stream.columns)}${ERASE_TO_END}`);
    this.drawn = true;
  }

  private erase(): void {
    if (!this.drawn) return;
    this.drawn = false;
    // On a dumb terminal there is no erase sequence: overwrite with spaces instead.
    this.stream.write(process.env.TERM === 'dumb' ? `\r${' '.repeat(Math.max(0, (this.stream.columns || 80) - 1))}\r` : `\r${ERASE_TO_END}`);
    this.lastDrawMs = 0; // the next draw may come at once
  }
}

const ERASE_TO_END = '\x1b[K';

/**
 * Label and counts cut to the terminal's width (a wrapped line could not be erased with \r): the
 * label gives way first, keeping its start and end (the verb and the partition's name).
 */
export function fitWidth(label: string, counts: string, columns: number | undefined): string {
  const max = Math.max(20, (columns || 80) - 3); // columns is 0 when the terminal does not say
  if (label.length + counts.length <= max) return label + counts;
  const room = max - counts.length - 1;
  if (room < 8) return `${(label + counts).slice(0, max - 1)}…`;
  const tail = Math.min(16, Math.floor(room / 2));
  return `${label.slice(0, room - tail)}…${label.slice(label.length - tail)}${counts}`;
}

/** "1.50 MiB of 4.00 MiB (37%), 2.10 MiB/s, ETA 2s", or without a total "1200 records, 800 records/s". */
export function describeCounts(done: number, total: number | undefined, elapsedMs: number, unit: ProgressUnit): string {
  const amount = (n: number) => (unit === 'bytes' ? formatBytes(n) : `${Math.round(n)} ${unit}`);
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const parts = [total !== undefined ? `${amount(done)} of ${amount(total)}${total > 0 ? ` (${Math.min(100, Math.floor((100 * done) / total))}%)` : ''}` : amount(done)];
  if (rate > 0) parts.push(`${amount(rate)}/s`);
  if (total !== undefined && rate > 0 && done < total) parts.push(`ETA ${formatDuration(((total - done) / rate) * 1000)}`);
  return parts.join(', ');
}

export function formatDuration(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${Math.round(n)} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`;
}
