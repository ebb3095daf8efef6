import * as React from 'react';

import { ServerConnection } from '@jupyterlab/services';

import { fmtTime, parseTime, sameDay } from '../format';
import { useWidth } from '../hooks';
import { fetchUsage } from './api';
import { IUsagePoint } from './types';

const PANEL_H = 44;
const GAP = 16;
const LEFT = 4;

interface ISeries {
  key: 'busy_cpus' | 'busy_gpus' | 'pending';
  label: string;
  /** The y scale's top: the site's total when known, else the series' maximum. */
  total: number | null;
}

function path(
  points: { t: number; v: number }[],
  x: (t: number) => number,
  y: (v: number) => number
): string {
  return points.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join('');
}

/** Busy CPUs, busy GPUs and pending depth of one site over the last `hours`:
 * `[data-diamond-util-chart=SITE]`, inline SVG, one panel per series. */
export function UsageChart(props: {
  site: string;
  hours: number;
  totals: { cpus: number | null; gpus: number | null };
  settings: ServerConnection.ISettings;
  /** Changes when the dashboard was read again: the series is read again too. */
  version: string;
  timeZone: string;
}): JSX.Element {
  const { site, hours, totals, settings, version, timeZone } = props;
  const [points, setPoints] = React.useState<IUsagePoint[] | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  const box = React.useRef<HTMLDivElement>(null);
  const width = useWidth(box, 480, 200);
  React.useEffect(() => {
    let live = true;
    fetchUsage(site, hours, settings)
      .then(r => {
        if (live) {
          setPoints(r.points ?? []);
          setError(null);
        }
      })
      .catch(e => {
        if (live) {
          setError(String(e?.message ?? e));
        }
      });
    return () => {
      live = false;
    };
  }, [site, hours, settings, version]);

  const now = Date.now();
  const from = now - hours * 3600_000;
  const series: ISeries[] = [
    { key: 'busy_cpus', label: 'Busy CPUs', total: totals.cpus },
    { key: 'busy_gpus', label: 'Busy GPUs', total: totals.gpus },
    { key: 'pending', label: 'Pending jobs', total: null }
  ].filter(
    s => s.key !== 'busy_gpus' || (totals.gpus ?? 0) > 0 || (points ?? []).some(p => (p.busy_gpus ?? 0) > 0)
  ) as ISeries[];
  const parsed = (points ?? [])
    .map(p => ({ p, t: typeof p.t === 'number' ? p.t * 1000 : parseTime(p.t) }))
    .filter((q): q is { p: IUsagePoint; t: number } => q.t !== null && q.t >= from)
    // a site whose clock runs ahead stamps its latest points in our future: drawn at now
    .map(q => ({ p: q.p, t: Math.min(q.t, now) }))
    .sort((a, b) => a.t - b.t);
  const W = width;
  const x = (t: number) => LEFT + ((t - from) / (now - from)) * (W - LEFT - 4);
  const height = series.length * (PANEL_H + GAP) + 14;
  const summary: string[] = [];
  const panels = series.map((s, i) => {
    const values = parsed
      .filter(q => q.p[s.key] !== null && q.p[s.key] !== undefined)
      .map(q => ({ t: q.t, v: q.p[s.key] as number }));
    const max = Math.max(1, s.total ?? 0, ...values.map(v => v.v));
    const top = i * (PANEL_H + GAP) + GAP;
    const y = (v: number) => top + PANEL_H - (v / max) * PANEL_H;
    const latest = values.length ? values[values.length - 1].v : null;
    const peak = values.length ? Math.max(...values.map(v => v.v)) : null;
    summary.push(
      latest === null
        ? `${s.label.toLowerCase()}: no data`
        : `${s.label.toLowerCase()} now ${latest}${s.total ? ` of ${s.total}` : ''} (peak ${peak})`
    );
    const line = path(values, x, y);
    const area =
      values.length > 1
        ? `${line}L${x(values[values.length - 1].t).toFixed(1)},${top + PANEL_H}L${x(values[0].t).toFixed(1)},${top + PANEL_H}Z`
        : '';
    return (
      <g key={s.key} data-diamond-series={s.key} data-diamond-latest={latest ?? undefined}>
        <text x={LEFT} y={top - 4} className="jp-diamond-chart-label">
          {s.label}
          {latest !== null ? `: ${latest}${s.total ? ` / ${s.total}` : ''}` : ': —'}
        </text>
        <text x={W - 4} y={top - 4} textAnchor="end" className="jp-diamond-chart-label">
          max {max}
        </text>
        <line x1={LEFT} x2={W - 4} y1={top + PANEL_H} y2={top + PANEL_H} className="jp-diamond-chart-base" />
        <line x1={LEFT} x2={W - 4} y1={top} y2={top} className="jp-diamond-chart-grid" />
        {area && <path d={area} className={`jp-diamond-chart-area jp-diamond-chart-${s.key}`} />}
        {line && <path d={line} className={`jp-diamond-chart-line jp-diamond-chart-${s.key}`} />}
        {values.length === 1 && (
          <circle cx={x(values[0].t)} cy={y(values[0].v)} r={2.5} className={`jp-diamond-chart-dot jp-diamond-chart-${s.key}`} />
        )}
      </g>
    );
  });
  const label = `Usage of ${site} over the last ${hours} h: ${summary.join('; ')}`;
  return (
    <div
      ref={box}
      className="jp-diamond-util"
      data-diamond-util-chart={site}
      data-diamond-points={parsed.length}
    >
      {error ? (
        <p className="jp-diamond-muted">Usage history unavailable: {error}</p>
      ) : (
        <svg width={W} height={height} viewBox={`0 0 ${W} ${height}`} role="img" aria-label={label}>
          <title>{label}</title>
          {panels}
          <text x={LEFT} y={height - 2} className="jp-diamond-chart-label">
            {fmtTime(from, timeZone, hours >= 24 || !sameDay(from, now, timeZone))}
          </text>
          <text x={W - 4} y={height - 2} textAnchor="end" className="jp-diamond-chart-label">
            now {fmtTime(now, timeZone, false)}
          </text>
        </svg>
      )}
      {points !== null && parsed.length === 0 && !error && (
        <p className="jp-diamond-muted">No samples in the last {hours} h yet.</p>
      )}
    </div>
  );
}
