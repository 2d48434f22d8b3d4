// Prints the README's Benchmarks table (Markdown) from a saved `bench --json` run:
//   node dist/bin/logtool.cjs bench --json > bench.json && node scripts/bench-table.mjs bench.json
// One row per scenario that has a baseline: its result and the baseline's on the judged metric, the
// ratio, the target and whether it was met (bare baselines are left out). A compressed read also gets
// a row against its codec library's own decompression of the same payloads (issue 15: ≥ 0.83).
import { readFileSync } from 'node:fs';
const j = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const by = new Map(j.scenarios.map((s) => [s.name, s]));
const rate = (v) => (v >= 1e6 ? `${(v / 1e6).toFixed(2)} M/s` : v >= 1e3 ? `${(v / 1e3).toFixed(1)} k/s` : `${Math.round(v)}/s`);
const val = (s, m) => {
  if (m === 'recordsPerSec') return rate(s.recordsPerSec);
  if (m === 'mbPerSec') return `${s.mbPerSec.toFixed(1)} MB/s`;
  if (m === 'p50Ms' || m === 'p99Ms') return `${s[m].toFixed(3)} ms ${m === 'p99Ms' ? 'p99' : 'p50'}`;
  if (m === 'peakRssMB') return `${Math.round(s.peakRssMB)} MiB`;
  return '';
};
const tgt = (t) => {
  if (!t) return '—';
  const p = [];
  if (t.ratioAtLeast !== undefined) p.push(`≥ ${t.ratioAtLeast}`);
  if (t.ratioAtMost !== undefined) p.push(`≤ ${t.ratioAtMost}×`);
  if (t.recordsPerSecAtLeast !== undefined) p.push(`≥ ${t.recordsPerSecAtLeast / 1e6} M rec/s`);
  if (t.peakRssMBAtMost !== undefined) p.push(`≤ ${t.peakRssMBAtMost} MiB`);
  return p.join(', ');
};
console.log('| scenario | result | baseline (same run) | ratio | target | met |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const s of j.scenarios) {
  if (!s.baseline) continue;
  const b = by.get(s.baseline);
  const m = s.ratioMetric ?? 'recordsPerSec';
  const isMem = m === 'peakRssMB' || (s.target && s.target.peakRssMBAtMost !== undefined);
  const mm = isMem ? 'peakRssMB' : m;
  const ratio = isMem ? '—' : m.endsWith('Ms') ? `${s.ratioToBaseline.toFixed(2)}×` : s.ratioToBaseline.toFixed(2);
  const met = s.target ? (s.meetsTarget ? 'yes' : '**no**') : '';
  console.log(`| ${s.name} | ${val(s, mm)} | ${s.baseline} ${b ? val(b, mm) : ''} | ${ratio} | ${tgt(s.target)} | ${met} |`);
  if (typeof s.readDecodeToLibrary === 'number' && typeof s.libraryMbPerSec === 'number') {
    const codec = s.name.replace(/^read-decode-/, '');
    const ok = s.readDecodeToLibrary >= 0.83;
    console.log(`| ${s.name} (vs library) | ${val(s, 'mbPerSec')} | ${codec} library ${s.libraryMbPerSec.toFixed(1)} MB/s | ${s.readDecodeToLibrary.toFixed(2)} | ≥ 0.83 | ${ok ? 'yes' : '**no**'} |`);
  }
}
