import * as React from 'react';

import { fmtDuration, fmtPredictedStart, fmtTime, parseTime, sameDay } from '../format';
import { IJob, TERMINAL_STATES } from '../types';
import { JobDetails } from '../components/Placement';
import { IWorkflow } from '../components/Workflows';
import { useWidth } from '../hooks';

const ROW_H = 22;
const AXIS_H = 20;
const LABEL_W = 420;
const ZOOMS = [1, 2, 4, 8, 16, 32, 64];
/** Jobs on the timeline: every unfinished one and the latest finished ones up to this. */
const MAX_ROWS = 200;

/** Why the job runs where it does, in a few words (the tooltip has every site's offer). */
export function placementReason(job: IJob): string {
  const pl = job.placement;
  const ranked = pl?.ranked ?? [];
  if (!pl || ranked.length === 0 || pl.policy === 'explicit') {
    return `${job.site}: chosen by you`;
  }
  const chosen = ranked.find(v => v.site === job.site);
  const others = ranked.filter(v => v.site !== job.site);
  const ruledOut = others.filter(v => !v.feasible).length;
  const bits = [
    `placed by ${pl.policy ? `policy ${pl.policy}` : 'diamond'}`,
    chosen?.partition ? `partition ${chosen.partition}` : null,
    others.length
      ? `best of ${ranked.length - ruledOut} sites${ruledOut ? `, ${ruledOut} ruled out` : ''}`
      : 'the only site'
  ];
  return bits.filter(Boolean).join(' · ');
}

interface ILane {
  group: string;
  job: IJob;
  submitted: number;
  started: number | null;
  ended: number | null;
  predicted: number | null;
  bound: number | null;
}

/** Lanes: the jobs of each workflow together (in step order), then each site's. */
function lanes(jobs: IJob[], workflows: IWorkflow[]): ILane[] {
  const stepOf = new Map<string, string>();
  for (const wf of workflows) {
    for (const s of wf.steps) {
      if (s.job) {
        stepOf.set(s.job, `workflow ${wf.name ?? wf.id}`);
      }
    }
  }
  let finished = 0;
  const out: ILane[] = [];
  for (const job of jobs) {
    const done = TERMINAL_STATES.has(job.state);
    if (done && finished >= MAX_ROWS / 2) {
      continue;
    }
    const submitted = parseTime(job.submitted_at) ?? parseTime(job.started_at);
    if (submitted === null) {
      continue;
    }
    finished += done ? 1 : 0;
    out.push({
      group: stepOf.get(job.id) ?? `site ${job.site}`,
      job,
      submitted,
      started: parseTime(job.started_at),
      ended: parseTime(job.ended_at),
      predicted: parseTime(job.predicted_start?.at),
      bound: parseTime(job.predicted_start?.bound)
    });
    if (out.length >= MAX_ROWS) {
      break;
    }
  }
  out.sort((a, b) => a.group.localeCompare(b.group) || a.submitted - b.submitted);
  return out;
}

/** Axis ticks about every 120 px: a round step of seconds to days. */
function ticks(from: number, to: number, width: number): number[] {
  const steps = [60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400].map(
    s => s * 1000
  );
  const want = ((to - from) / Math.max(1, width)) * 120;
  const step = steps.find(s => s >= want) ?? steps[steps.length - 1];
  const out: number[] = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) {
    out.push(t);
  }
  return out;
}

/**
 * The user's jobs and workflows across sites on one wide, zoomable time axis: queued then
 * running, the predicted start (◆, with its 90% bound as a whisker) beside the actual one,
 * and the placement reason. Zoom with the buttons, Ctrl+wheel or +/- on a focused bar.
 */
export function Gantt(props: {
  jobs: IJob[];
  workflows: IWorkflow[];
  timeZone: string;
}): JSX.Element {
  const { jobs, workflows, timeZone } = props;
  const [zoom, setZoom] = React.useState(0);
  const [hover, setHover] = React.useState<string | null>(null);
  const [, setTick] = React.useState(0);
  const box = React.useRef<HTMLDivElement>(null);
  const laneBox = React.useRef<HTMLDivElement>(null);
  const width = useWidth(box, 900, 200) - LABEL_W - 8;
  const rows = React.useMemo(() => lanes(jobs, workflows), [jobs, workflows]);
  const active = rows.some(r => !TERMINAL_STATES.has(r.job.state));
  React.useEffect(() => {
    if (!active) {
      return;
    }
    const t = window.setInterval(() => setTick(x => x + 1), 5000);
    return () => window.clearInterval(t);
  }, [active]);
  const now = Date.now();
  let from = now;
  let to = now;
  for (const r of rows) {
    from = Math.min(from, r.submitted);
    to = Math.max(to, r.ended ?? now, r.bound ?? r.predicted ?? now);
  }
  const span = Math.max(60_000, to - from);
  from -= span * 0.02;
  to += span * 0.04;
  const W = Math.max(200, width) * ZOOMS[zoom];
  const x = (t: number) => ((t - from) / (to - from)) * W;

  const setZoomKeepingNow = (z: number) => {
    const next = Math.max(0, Math.min(ZOOMS.length - 1, z));
    const node = laneBox.current;
    const frac = node ? (x(now) - node.scrollLeft) / Math.max(1, node.clientWidth) : 1;
    setZoom(next);
    requestAnimationFrame(() => {
      if (node) {
        const nx = ((now - from) / (to - from)) * Math.max(200, width) * ZOOMS[next];
        node.scrollLeft = Math.max(0, nx - frac * node.clientWidth);
      }
    });
  };
  React.useEffect(() => {
    const node = laneBox.current;
    if (node) {
      node.scrollLeft = node.scrollWidth; // start at "now"
    }
  }, [rows.length > 0]);

  if (rows.length === 0) {
    return <p className="jp-diamond-muted">No jobs of yours yet.</p>;
  }
  const height = rows.length * ROW_H + AXIS_H;
  const hovered = hover ? rows.find(r => r.job.id === hover)?.job : undefined;
  let lastGroup = '';
  return (
    <div
      ref={box}
      className="jp-diamond-dgantt"
      data-diamond-gantt=""
      data-diamond-zoom={ZOOMS[zoom]}
      onWheel={e => {
        if (e.ctrlKey) {
          e.preventDefault();
          setZoomKeepingNow(zoom + (e.deltaY < 0 ? 1 : -1));
        }
      }}
      onKeyDown={e => {
        if (e.key === '+' || e.key === '=') {
          setZoomKeepingNow(zoom + 1);
        } else if (e.key === '-') {
          setZoomKeepingNow(zoom - 1);
        } else if (e.key === 'Escape' && hover !== null) {
          // hide the tooltip, keep the focus on its bar (JupyterLab would move it away)
          e.preventDefault();
          e.stopPropagation();
          setHover(null);
        }
      }}
    >
      <div className="jp-diamond-zoom" role="group" aria-label="Timeline zoom">
        <button className="jp-diamond-icon-button" aria-label="Zoom out" disabled={zoom === 0} onClick={() => setZoomKeepingNow(zoom - 1)}>
          −
        </button>
        <span aria-live="polite">
          ×{ZOOMS[zoom]} · {fmtDuration((to - from) / 1000 / ZOOMS[zoom])} across the view
        </span>
        <button className="jp-diamond-icon-button" aria-label="Zoom in" disabled={zoom === ZOOMS.length - 1} onClick={() => setZoomKeepingNow(zoom + 1)}>
          +
        </button>
      </div>
      <div className="jp-diamond-dgantt-body">
        <div className="jp-diamond-dgantt-labels" style={{ width: LABEL_W }}>
          <div style={{ height: AXIS_H }} />
          {rows.map(r => {
            const head = r.group !== lastGroup;
            lastGroup = r.group;
            return (
              <div
                key={r.job.id}
                className={`jp-diamond-dgantt-label${head ? ' jp-diamond-dgantt-group' : ''}`}
                style={{ height: ROW_H }}
                title={`${r.group}: ${r.job.name || r.job.id} on ${r.job.site}`}
              >
                {head && <span className="jp-diamond-dgantt-groupname">{r.group}</span>}
                <span className="jp-diamond-dgantt-name">{r.job.name || r.job.id}</span>
                <span className="jp-diamond-dgantt-reason" data-diamond-placement-reason="">
                  {placementReason(r.job)}
                </span>
              </div>
            );
          })}
        </div>
        <div className="jp-diamond-dgantt-lanes" ref={laneBox}>
          <svg width={W} height={height} role="group" aria-label={`Timeline of ${rows.length} jobs`}>
            {ticks(from, to, W).map(t => (
              <g key={t}>
                <line x1={x(t)} x2={x(t)} y1={AXIS_H - 4} y2={height} className="jp-diamond-chart-grid" />
                <text x={x(t) + 2} y={AXIS_H - 8} className="jp-diamond-chart-label">
                  {fmtTime(t, timeZone, to - from > 20 * 3600_000 || !sameDay(from, to, timeZone))}
                </text>
              </g>
            ))}
            {rows.map((r, i) => {
              const y = AXIS_H + i * ROW_H;
              const state = r.job.state.toLowerCase();
              const qEnd = r.started ?? r.ended ?? now;
              const predicted = fmtPredictedStart(r.job.predicted_start, now);
              const name = r.job.name || r.job.id;
              const show = () => setHover(r.job.id);
              return (
                <g
                  key={r.job.id}
                  tabIndex={0}
                  role="img"
                  data-diamond-gantt-job={r.job.id}
                  data-diamond-state={r.job.state}
                  aria-label={
                    `${name} on ${r.job.site}: ${r.job.state}, queued ${fmtTime(r.submitted, timeZone)}` +
                    (r.started !== null ? `, started ${fmtTime(r.started, timeZone)}` : '') +
                    (r.predicted !== null ? `, predicted start ${fmtTime(r.predicted, timeZone)}` : '') +
                    `; ${placementReason(r.job)}`
                  }
                  onMouseEnter={show}
                  onFocus={show}
                  onMouseLeave={() => setHover(null)}
                  onBlur={() => setHover(null)}
                >
                  <rect x={x(r.submitted)} y={y + 5} width={Math.max(1, x(qEnd) - x(r.submitted))} height={ROW_H - 10} className="jp-diamond-seg-queued" />
                  {r.started !== null && (
                    <rect x={x(r.started)} y={y + 3} width={Math.max(2, x(r.ended ?? now) - x(r.started))} height={ROW_H - 6} className={`jp-diamond-seg jp-diamond-seg-${state}`} />
                  )}
                  {r.predicted !== null && (
                    <g className="jp-diamond-predicted" data-diamond-predicted-at={r.job.predicted_start?.at}>
                      {r.bound !== null && (
                        <line x1={x(r.predicted)} x2={x(r.bound)} y1={y + ROW_H / 2} y2={y + ROW_H / 2} />
                      )}
                      <path d={`M${x(r.predicted)},${y + 3}l5,${ROW_H / 2 - 3}l-5,${ROW_H / 2 - 3}l-5,${-(ROW_H / 2 - 3)}Z`} />
                      <title>{predicted ? `predicted start ${predicted}` : `predicted start ${fmtTime(r.predicted, timeZone)}`}</title>
                    </g>
                  )}
                </g>
              );
            })}
            <line x1={x(now)} x2={x(now)} y1={AXIS_H - 4} y2={height} className="jp-diamond-gantt-now">
              <title>now</title>
            </line>
          </svg>
        </div>
      </div>
      {hovered && (
        <div className="jp-diamond-tooltip" role="tooltip" data-diamond-tooltip={hovered.id}>
          <JobDetails job={hovered} timeZone={timeZone} />
          {!hovered.started_at && hovered.predicted_start && (
            <div>predicted start {fmtPredictedStart(hovered.predicted_start, now)}</div>
          )}
        </div>
      )}
      <p className="jp-diamond-legend jp-diamond-muted">
        <span><span className="jp-diamond-key jp-diamond-seg-queued" />queued</span>
        <span><span className="jp-diamond-key jp-diamond-seg-running" />running</span>
        <span><span className="jp-diamond-key jp-diamond-seg-completed" />completed</span>
        <span><span className="jp-diamond-key jp-diamond-seg-failed" />failed</span>
        <span>◆ predicted start, line to its 90% bound</span>
      </p>
    </div>
  );
}
