/**
 * `bench --report bench.html`: one self-contained page (no network, no script, the data inline as
 * JSON too) that people would rather look at than read (issue 15): per scenario a bar beside its
 * baseline (and the saved run's, with --compare) with the ratio and target; latency percentiles
 * p50/p99/p999 on a log scale; the latency histogram of the sync scenarios (each sync append waits
 * for an fdatasync); peak memory; the machine. Plain SVG: every bar carries its number in
 * data-value, so a test can check the page shows the run's numbers.
 */
import type { ComparisonRow } from './compare.js';
import { describeTarget, type BenchReport } from './runner.js';
import type { RatioMetric, ScenarioReport } from './types.js';

const esc = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => '&#' + c.charCodeAt(0) + ';');
/** An SVG tooltip. */
const title = (text: string): string => '<title>' + esc(text) + '</title>';

function machineLine(m: BenchReport['machine']): string {
  const rounds = m.repeat === 1 ? '1 round' : m.repeat + ' rounds';
  return `${m.cpus} × ${m.cpuModel}, ${m.memoryGB} GB, ${m.platform} ${m.arch} ${m.kernel}, Node ${m.node}; scratch ${m.scratchDir} (${m.fsType}); ${m.quick ? 'quick, ' : ''}${m.records} records, ≤ ${m.durationMs} ms per scenario, median of ${rounds}, ratios paired per round`;
}

const fmt = (x: number | null | undefined, digits = 3): string => {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const a = Math.abs(x);
  return a >= 1000 ? Math.round(x).toLocaleString('en-US') : a >= 1 ? x.toFixed(Math.min(digits, 2)) : x.toPrecision(digits);
};

const UNIT: Record<RatioMetric, string> = { recordsPerSec: 'records/s', mbPerSec: 'MB/s', p50Ms: 'ms (p50)', p99Ms: 'ms (p99)', peakRssMB: 'MiB peak RSS' };
const COLOUR = { scenario: '#3b6fd8', baseline: '#9aa4b2', saved: '#e0a030', p50: '#3b6fd8', p99: '#d8843b', p999: '#c0392b', bad: '#c0392b', good: '#2e8b57' };

/** Horizontal bars, one per row, scaled to the largest; each bar carries data-value. */
function bars(rows: { label: string; value: number; colour: string; kind: string; scenario: string; metric: string }[], unit: string): string {
  const max = Math.max(...rows.map((r) => (Number.isFinite(r.value) ? r.value : 0)), 1e-12);
  const rowH = 18;
  const labelW = 230;
  const barW = 360;
  const h = rows.length * rowH + 4;
  const items = rows.map((r, i) => {
    const w = Number.isFinite(r.value) && r.value > 0 ? Math.max(1, (r.value / max) * barW) : 0;
    const y = i * rowH + 2;
    return (
      `<text x="${labelW - 6}" y="${y + 12}" text-anchor="end">${esc(r.label)}</text>` +
      `<rect x="${labelW}" y="${y}" width="${w.toFixed(1)}" height="${rowH - 4}" fill="${r.colour}" data-scenario="${esc(r.scenario)}" data-kind="${r.kind}" data-metric="${r.metric}" data-value="${r.value}">${title(r.label + ': ' + fmt(r.value) + ' ' + unit)}</rect>` +
      `<text x="${(labelW + w + 6).toFixed(1)}" y="${y + 12}">${esc(fmt(r.value))} ${esc(unit)}</text>`
    );
  });
  return `<svg width="${labelW + barW + 160}" height="${h}" role="img">${items.join('')}</svg>`;
}

function scenarioSection(s: ScenarioReport, byName: Map<string, ScenarioReport>, saved: ComparisonRow | undefined): string {
  const metric = s.ratioMetric ?? 'recordsPerSec';
  const base = s.baseline ? byName.get(s.baseline) : undefined;
  const rows = [{ label: s.name, value: s[metric], colour: COLOUR.scenario, kind: 'scenario', scenario: s.name, metric }];
  if (base) rows.push({ label: `baseline: ${base.name}`, value: base[metric], colour: COLOUR.baseline, kind: 'baseline', scenario: s.name, metric });
  if (saved?.before !== null && saved?.before !== undefined) rows.push({ label: 'saved run', value: saved.before, colour: COLOUR.saved, kind: 'saved', scenario: s.name, metric });
  const met = s.meetsTarget === null ? '' : `<span style="color:${s.meetsTarget ? COLOUR.good : COLOUR.bad}">${s.meetsTarget ? 'met' : 'not met'}</span>`;
  const ratio = s.ratioToBaseline === null ? '' : `ratio <b data-ratio="${s.ratioToBaseline}">${esc(fmt(s.ratioToBaseline))}×</b>`;
  const target = s.target ? ` · target ${esc(describeTarget(s.target))} ${met}` : '';
  const before = saved?.ratioBefore !== null && saved?.ratioBefore !== undefined ? ` · saved run ${esc(fmt(saved.ratioBefore))}×` : '';
  return `<section class="scenario" id="s-${esc(s.name)}"><h3>${esc(s.name)}</h3><p class="what">${esc(String(s.description ?? ''))}</p><p>${ratio}${before}${target}</p>${bars(rows, UNIT[metric])}</section>`;
}

/** p50/p99/p999 per scenario on a log scale (latencies span µs to seconds). */
function percentiles(scenarios: ScenarioReport[]): string {
  const rows = scenarios.filter((s) => s.ops > 1);
  const all = rows.flatMap((s) => [s.p50Ms, s.p99Ms, s.p999Ms]).filter((x) => x > 0);
  if (all.length === 0) return '<p>no per-operation latencies in this run</p>';
  const lo = Math.log10(Math.min(...all)) - 0.1;
  const hi = Math.log10(Math.max(...all)) + 0.1;
  const labelW = 230;
  const plotW = 420;
  const rowH = 16;
  const x = (ms: number): number => labelW + ((Math.log10(Math.max(ms, 10 ** lo)) - lo) / (hi - lo)) * plotW;
  const items = rows.map((s, i) => {
    const y = i * rowH + 14;
    const dots = (['p50Ms', 'p99Ms', 'p999Ms'] as const)
      .map((p) => `<circle cx="${x(s[p]).toFixed(1)}" cy="${y - 4}" r="4" fill="${p === 'p50Ms' ? COLOUR.p50 : p === 'p99Ms' ? COLOUR.p99 : COLOUR.p999}" data-scenario="${esc(s.name)}" data-metric="${p}" data-value="${s[p]}">${title(s.name + ' ' + p.slice(0, -2) + ' ' + fmt(s[p]) + ' ms (' + s.opUnit + ')')}</circle>`)
      .join('');
    return `<text x="${labelW - 8}" y="${y}" text-anchor="end">${esc(s.name)}</text><line x1="${x(s.p50Ms).toFixed(1)}" x2="${x(s.p999Ms).toFixed(1)}" y1="${y - 4}" y2="${y - 4}" stroke="#bbb"/>${dots}`;
  });
  const ticks: string[] = [];
  for (let e = Math.ceil(lo); e <= Math.floor(hi); e++) ticks.push(`<line x1="${x(10 ** e)}" x2="${x(10 ** e)}" y1="0" y2="${rows.length * rowH + 6}" stroke="#eee"/><text x="${x(10 ** e)}" y="${rows.length * rowH + 20}" text-anchor="middle">${esc(fmt(10 ** e))} ms</text>`);
  return `<p><span style="color:${COLOUR.p50}">● p50</span> <span style="color:${COLOUR.p99}">● p99</span> <span style="color:${COLOUR.p999}">● p999</span> (log scale)</p><svg width="${labelW + plotW + 40}" height="${rows.length * rowH + 28}" role="img">${ticks.join('')}${items.join('')}</svg>`;
}

/** Latency histograms (log2 buckets, see LatencyRecorder.histogram) of the sync scenarios and their baselines. */
function histograms(scenarios: ScenarioReport[]): string {
  const sync = scenarios.filter((s) => /fdatasync|^sync-|^durable-/.test(s.name) && Array.isArray((s.latencyHistogram as { counts?: unknown } | undefined)?.counts));
  if (sync.length === 0) return '<p>no latency histogram recorded in this run</p>';
  return sync
    .map((s) => {
      const h = s.latencyHistogram as { fromMs: number; counts: number[] };
      const max = Math.max(...h.counts, 1);
      const w = 14;
      const cols = h.counts.map((c, i) => {
        const bh = (c / max) * 80;
        const upper = h.fromMs * 2 ** (i + 1);
        return `<rect x="${i * w + 40}" y="${(90 - bh).toFixed(1)}" width="${w - 2}" height="${bh.toFixed(1)}" fill="${COLOUR.scenario}" data-scenario="${esc(s.name)}" data-metric="histogram" data-value="${c}">${title('≤ ' + fmt(upper) + ' ms: ' + c)}</rect>`;
      });
      return `<figure><figcaption>${esc(s.name)} — ${esc(s.opUnit)}; buckets double from ${esc(fmt(h.fromMs))} ms</figcaption><svg width="${h.counts.length * w + 60}" height="110" role="img">${cols.join('')}<text x="40" y="104">${esc(fmt(h.fromMs))} ms</text><text x="${h.counts.length * w + 40}" y="104" text-anchor="end">${esc(fmt(h.fromMs * 2 ** h.counts.length))} ms</text></svg></figure>`;
    })
    .join('');
}

export function renderReportHtml(report: BenchReport, comparison?: ComparisonRow[]): string {
  const byName = new Map(report.scenarios.map((s) => [s.name, s]));
  const saved = new Map((comparison ?? []).map((c) => [c.name, c]));
  const m = report.machine;
  const judged = report.scenarios.filter((s) => s.kind === 'scenario');
  const memory = report.scenarios.map((s) => ({ label: s.name, value: s.peakRssMB, colour: s.target?.peakRssMBAtMost !== undefined && s.peakRssMB > s.target.peakRssMBAtMost ? COLOUR.bad : COLOUR.scenario, kind: 'memory', scenario: s.name, metric: 'peakRssMB' }));
  const data = JSON.stringify({ ...report, ...(comparison ? { comparison } : {}) }).replace(/</g, '\\u003c');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>logtool bench</title>
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; } h3 { font-size: 1em; margin: 0.8em 0 0.1em; }
.what { color: #666; margin: 0; } svg text { font: 11px system-ui, sans-serif; fill: #333; } section.scenario p { margin: 0.1em 0; }
figure { display: inline-block; margin: 0.5em 1.5em 0.5em 0; } figcaption { font-size: 11px; color: #555; }
</style>
</head>
<body>
<h1>logtool bench</h1>
<p id="machine">${esc(machineLine(m))}</p>
<p>Each scenario is judged by its ratio to a baseline measured in the same run; absolute numbers depend on the machine.${comparison ? ' The saved run is the one given to --compare.' : ''}</p>
<h2>Scenarios against their baselines</h2>
${judged.map((s) => scenarioSection(s, byName, saved.get(s.name))).join('\n')}
<h2>Latency percentiles</h2>
${percentiles(report.scenarios)}
<h2>Latency of the sync scenarios (each append waits for an fdatasync)</h2>
${histograms(report.scenarios)}
<h2>Peak memory (RSS of the measured process)</h2>
${bars(memory, 'MiB')}
<script type="application/json" id="bench-data">${data}</script>
</body>
</html>
`;
}
