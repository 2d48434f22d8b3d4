/**
 * When output is coloured: one rule for every stream, apart from chalk so that the CLI's error line
 * (program.ts) can follow it without loading chalk at start-up.
 */

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
