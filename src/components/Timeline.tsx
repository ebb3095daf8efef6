import * as React from 'react';

import { cutToColumns, fmtDuration, fmtTime, parseTime, sameDay } from '../format';
import { useWidth } from '../hooks';
import { IJob, TERMINAL_STATES } from '../types';
import { JobDetails } from './Placement';

const MAX_ROWS = 15;
const ROW_H = 14;
const AXIS_H = 14;
const CHAR_W = 6; // px of a 10 px label character, to fit names to the label column
/** Zoom levels: 0 fits the window to the jobs shown; the others end now. */
const SPANS_MIN = [0, 5, 15, 60, 360, 1440, 10080];
const MIN_FIT_MS = 20_000;
const IDLE_REDRAW_MS = 60_000;
const LEGEND = ['PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED'];

/** The window that shows `jobs` (their latest MAX_ROWS per site), ending now. */
export function fitSpanMs(jobs: IJob[], now: number): number {
  let first = now;
  for (const job of jobs) {
    const t = parseTime(job.submitted_at) ?? parseTime(job.started_at);
    if (t !== null) {
      first = Math.min(first, t);
    }
  }
  // 5% of air before the first job; never narrower than MIN_FIT_MS
  return Math.max(MIN_FIT_MS, (now - first) * 1.05);
}

interface ISegment {
  job: IJob;
  submitted: number;
  started: number | null;
  ended: number | null;
}

/** At most MAX_ROWS rows, newest first: every unfinished job (one running for days is
 * older than many finished since), then the latest finished ones in the rows left; and how
 * many jobs the window holds in all. */
function segments(jobs: IJob[], from: number): { shown: ISegment[]; inWindow: number } {
  const all: ISegment[] = [];
  for (const job of jobs) {
    const submitted = parseTime(job.submitted_at) ?? parseTime(job.started_at);
    const ended = parseTime(job.ended_at);
    if (submitted === null || (ended !== null && ended < from)) {
      continue;
    }
    all.push({ job, submitted, started: parseTime(job.started_at), ended });
  }
  const unfinished = all.filter(s => !TERMINAL_STATES.has(s.job.state)).length;
  let finishedRows = Math.max(0, MAX_ROWS - unfinished);
  const shown = all
    .filter(s => !TERMINAL_STATES.has(s.job.state) || finishedRows-- > 0)
    .slice(0, MAX_ROWS);
  return { shown, inWindow: all.length };
}

function spanLabel(min: number): string {
  if (min <= 0) {
    return 'jobs shown';
  }
  return min < 60 ? `${min} min` : min < 1440 ? `${min / 60} h` : `${min / 1440} d`;
}

interface IHover {
  job: IJob;
  site: string;
}

function SiteGantt(props: {
  site: string;
  jobs: IJob[];
  now: number;
  spanMs: number;
  width: number;
  timeZone: string;
  onHover: (h: IHover | null) => void;
}): JSX.Element | null {
  const { site, now, spanMs, timeZone, onHover } = props;
  const W = props.width;
  const LABEL_W = Math.min(220, Math.max(66, Math.round(W * 0.3)));
  const maxChars = Math.max(4, Math.floor((LABEL_W - 4) / CHAR_W));
  const seconds = spanMs <= 3 * 3600 * 1000;
  const start = now - spanMs;
  const { shown: segs, inWindow } = segments(props.jobs, start);
  if (segs.length === 0) {
    return null;
  }
  const x = (t: number) =>
    LABEL_W + ((Math.min(Math.max(t, start), now) - start) / spanMs) * (W - LABEL_W - 4);
  const height = segs.length * ROW_H + AXIS_H;
  return (
    <figure className="jp-diamond-gantt" data-diamond-timeline={site}>
      <figcaption>
        {site}
        {inWindow > segs.length && (
          // the rows left out are said, not dropped silently: the job list has them all
          <span className="jp-diamond-muted" data-diamond-timeline-shown={segs.length} data-diamond-timeline-total={inWindow}>
            {` (latest ${segs.length} of ${inWindow}; all in Jobs)`}
          </span>
        )}
      </figcaption>
      <svg
        viewBox={`0 0 ${W} ${height}`}
        width={W}
        height={height}
        role="group"
        aria-label={
          inWindow > segs.length
            ? `Timeline of the latest ${segs.length} of ${inWindow} jobs on ${site}`
            : `Timeline of ${segs.length} jobs on ${site}`
        }
      >
        {segs.map((s, i) => {
          const y = i * ROW_H;
          const qEnd = s.started ?? s.ended ?? now;
          const rEnd = s.ended ?? now;
          const name = s.job.name || s.job.native_id || s.job.id;
          const show = () => onHover({ job: s.job, site });
          return (
            <g
              key={s.job.id}
              data-diamond-job-bar={s.job.id}
              data-diamond-state={s.job.state}
              tabIndex={0}
              role="img"
              aria-label={`${name}: ${s.job.state}, queued ${fmtTime(s.submitted, timeZone)}`}
              onMouseEnter={show}
              onFocus={show}
              onMouseLeave={() => onHover(null)}
              onBlur={() => onHover(null)}
              onKeyDown={e => {
                if (e.key === 'Escape') {
                  // hide the tooltip, keep the focus here (JupyterLab would move it away)
                  e.preventDefault();
                  e.stopPropagation();
                  onHover(null);
                }
              }}
            >
              <title>
                {`${name} (${s.job.id}): ${s.job.state}\nqueued ${fmtTime(s.submitted, timeZone, true, true)}` +
                  (s.started !== null ? `\nstarted ${fmtTime(s.started, timeZone, true, true)}` : '') +
                  (s.ended !== null ? `\nended ${fmtTime(s.ended, timeZone, true, true)}` : '')}
              </title>
              <text x={0} y={y + ROW_H - 4} className="jp-diamond-gantt-label">
                {cutToColumns(name, maxChars)}
              </text>
              <rect
                x={x(s.submitted)}
                y={y + 3}
                width={Math.max(1, x(qEnd) - x(s.submitted))}
                height={ROW_H - 6}
                className={`jp-diamond-seg-queued${s.started === null && s.ended !== null ? ` jp-diamond-seg-${s.job.state.toLowerCase()}` : ''}`}
              />
              {s.started !== null && (
                <rect
                  x={x(s.started)}
                  y={y + 2}
                  width={Math.max(1.5, x(rEnd) - x(s.started))}
                  height={ROW_H - 4}
                  className={`jp-diamond-seg jp-diamond-seg-${s.job.state.toLowerCase()}`}
                />
              )}
            </g>
          );
        })}
        <line x1={x(now)} x2={x(now)} y1={0} y2={segs.length * ROW_H} className="jp-diamond-gantt-now" data-diamond-now="">
          <title>now</title>
        </line>
        <text x={LABEL_W} y={height - 2} className="jp-diamond-gantt-axis">
          {fmtTime(start, timeZone, spanMs > 20 * 3600 * 1000 || !sameDay(start, now, timeZone), seconds)}
        </text>
        <text x={W - 4} y={height - 2} textAnchor="end" className="jp-diamond-gantt-axis">
          now {fmtTime(now, timeZone, false, seconds)}
        </text>
      </svg>
    </figure>
  );
}

const FIT_RECENT = 5;

/** The jobs the fitted window shows: the unfinished ones and the FIT_RECENT latest
 * (`jobs` is newest first). */
function shownJobs(jobs: IJob[]): IJob[] {
  return jobs.filter((j, i) => i < FIT_RECENT || !TERMINAL_STATES.has(j.state));
}

/** Per site, a Gantt chart of the user's jobs: queued then running, zoomable. */
export function Timeline(props: { jobs: IJob[]; timeZone: string }): JSX.Element {
  const [, setTick] = React.useState(0);
  const [zoom, setZoom] = React.useState(0);
  const box = React.useRef<HTMLDivElement>(null);
  const width = useWidth(box, 240, 160);
  const [hover, setHover] = React.useState<IHover | null>(null);
  const now = Date.now();
  const active = props.jobs.some(j => !TERMINAL_STATES.has(j.state));
  const spanMs = SPANS_MIN[zoom] > 0 ? SPANS_MIN[zoom] * 60_000 : fitSpanMs(shownJobs(props.jobs), now);
  // While a job is live, as often as "now" moves a pixel on the chart (every second on a
  // span of minutes, far less often on one of hours: a thousand bars drawn again each
  // second would keep the page busy), yet at least every minute, the axis's precision.
  const pixelMs = Math.round(spanMs / Math.max(1, width) / 1000) * 1000;
  const every = active ? Math.min(IDLE_REDRAW_MS, Math.max(1000, pixelMs)) : IDLE_REDRAW_MS;
  React.useEffect(() => {
    // Redraw only (bars reach "now", the axis says when now is); no request is made; and at
    // once when the tab wakes: a tab asleep for hours would otherwise show the hour it fell
    // asleep as "now".
    const redraw = () => setTick(x => x + 1);
    const t = window.setInterval(redraw, every);
    const onWake = () => document.hidden || redraw();
    document.addEventListener('visibilitychange', onWake);
    return () => {
      window.clearInterval(t);
      document.removeEventListener('visibilitychange', onWake);
    };
  }, [every]);
  const bySite = new Map<string, IJob[]>();
  for (const j of props.jobs) {
    const list = bySite.get(j.site);
    list ? list.push(j) : bySite.set(j.site, [j]);
  }
  const charts = Array.from(bySite.entries())
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([site, jobs]) => (
      <SiteGantt
        key={site}
        site={site}
        jobs={jobs}
        now={now}
        spanMs={spanMs}
        width={width}
        timeZone={props.timeZone}
        onHover={setHover}
      />
    ));
  const hovered = hover ? props.jobs.find(j => j.id === hover.job.id) ?? hover.job : null;
  return (
    <div
      ref={box}
      onWheel={e => {
        if (e.ctrlKey || e.altKey) {
          e.preventDefault();
          setZoom(z => Math.min(SPANS_MIN.length - 1, Math.max(0, z + (e.deltaY > 0 ? 1 : -1))));
        }
      }}
    >
      <div className="jp-diamond-zoom" role="group" aria-label="Time axis zoom">
        <button className="jp-diamond-icon-button" aria-label="Zoom in" disabled={zoom === 0} onClick={() => setZoom(zoom - 1)}>
          +
        </button>
        <span aria-live="polite" data-diamond-zoom={SPANS_MIN[zoom] || 'fit'} data-diamond-span-ms={Math.round(spanMs)}>
          {SPANS_MIN[zoom] > 0 ? `last ${spanLabel(SPANS_MIN[zoom])}` : `fit: last ${fmtDuration(spanMs / 1000)}`}
        </span>
        <button
          className="jp-diamond-icon-button"
          aria-label="Zoom out"
          disabled={zoom === SPANS_MIN.length - 1}
          onClick={() => setZoom(zoom + 1)}
        >
          −
        </button>
      </div>
      {props.jobs.some(j => (parseTime(j.ended_at) ?? now) >= now - spanMs) ? charts : <p className="jp-diamond-muted">No job in this time window.</p>}
      {hovered && (
        <div className="jp-diamond-tooltip" role="tooltip" data-diamond-tooltip={hovered.id}>
          <JobDetails job={hovered} timeZone={props.timeZone} />
        </div>
      )}
      <p className="jp-diamond-legend jp-diamond-muted" data-diamond-legend="">
        {LEGEND.map(state => (
          <span key={state} data-diamond-legend-state={state}>
            <span className={`jp-diamond-key jp-diamond-seg-${state.toLowerCase()}`} />
            {state === 'PENDING' ? 'queued' : state.toLowerCase()}
          </span>
        ))}
      </p>
    </div>
  );
}
