/** Tables for humans on a terminal; tab-separated plain rows when piped. */
import Table from 'cli-table3';

export function renderTable(head: string[], rows: (string | number)[][], tty: boolean): string {
  if (!tty) return [head.join('\t'), ...rows.map((r) => r.join('\t'))].join('\n');
  const t = new Table({ head, style: { head: ['cyan'], border: [] } });
  for (const r of rows) t.push(r.map(String));
  return t.toString();
}
