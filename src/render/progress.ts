/** A spinner on a terminal (stderr), nothing otherwise — CI logs and pipes stay clean. */
import ora, { type Ora } from 'ora';
import { colourLevel } from './output.js';

export interface Progress {
  update(text: string): void;
  succeed(text?: string): void;
  stop(): void;
}

const silent: Progress = { update() {}, succeed() {}, stop() {} };

export function startProgress(text: string, enabled = true): Progress {
  if (!enabled || !process.stderr.isTTY || process.env.CI) return silent;
  // The spinner's colour follows the same rule as all other output (ora's chalk ignores NO_COLOR).
  const spinner: Ora = ora({ text, stream: process.stderr, color: colourLevel(process.stderr) > 0 ? 'cyan' : false }).start();
  let last = 0;
  return {
    update(t) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      spinner.text = t;
    },
    succeed(t) {
      spinner.succeed(t);
    },
    stop() {
      spinner.stop();
    },
  };
}
