/**
 * Tables for humans on a terminal; tab-separated plain rows when piped. Colour (the header) follows
 * colours() like every other output, never cli-table3's own detection, which ignores NO_COLOR.
 */
import Table from 'cli-table3';
import type { ChalkInstance } from 'chalk';
import { colours } from './output.js';

export function renderTable(head: string[], rows: (string | number)[][], tty: boolean, c: ChalkInstance = colours()): string {
  if (!tty) return [head.join('\t'), ...rows.map((r) => r.join('\t'))].join('\n');
  const t = new Table({ head: head.map((h) => c.cyan(h)), style: { head: [], border: [] } });
  for (const r of rows) t.push(r.map(String));
  return t.toString();
}
