/**
 * The one progress line on stderr and the lines written around it: a progress renderer registers
 * how to erase itself, and every warning or error line erases it first. Apart from output.ts so
 * that the CLI's error path (program.ts) does not load chalk at start-up.
 */
let beforeStderrLine: (() => void) | undefined;

/** Set by a progress line on stderr: erases it before a warning or an error line is written. */
export function setBeforeStderrLine(fn: (() => void) | undefined): void {
  beforeStderrLine = fn;
}

/** Erases a progress line, if one is drawn, so a line written to stderr starts at column 0. */
export function clearStderrLine(): void {
  beforeStderrLine?.();
}
