import * as React from 'react';

import { fmtTime, parseTime } from '../format';
import { IJob, TERMINAL_STATES } from '../types';

const MAX_ROWS = 15;
const MAX_SPAN_MS = 24 * 3600 * 1000;
const MIN_SPAN_MS = 10 * 60 * 1000;
const W = 240;
const LABEL_W = 66;
const ROW_H = 14;
const AXIS_H = 14;

interface ISegment {
  job: IJob;
  submitted: number;
  started: number | null;
  ended: number | null;
}

function segments(jobs: IJob[]): ISegment[] {
  const out: ISegment[] = [];
  for (const job of jobs) {
    const submitted =
      parseTime(job.submitted_at) ?? parseTime(job.started_at) ?? null;
    if (submitted === null) {
      continue;
    }
    out.push({
      job,
      submitted,
      started: parseTime(job.started_at),
      ended: parseTime(job.ended_at)
    });
  }
  return out.sort((a, b) => b.submitted - a.submitted).slice(0, MAX_ROWS);
}

function SiteGantt(props: {
  site: string;
  jobs: IJob[];
  now: number;
  timeZone: string;
}): JSX.Element | null {
  const { site, now, timeZone } = props;
  const segs = segments(props.jobs);
  if (segs.length === 0) {
    return null;
  }
  const end = Math.max(now, ...segs.map(s => s.ended ?? now));
  let start = Math.min(...segs.map(s => s.submitted));
  start = Math.max(start, end - MAX_SPAN_MS);
  if (end - start < MIN_SPAN_MS) {
    start = end - MIN_SPAN_MS;
  }
  const span = end - start;
  const x = (t: number) =>
    LABEL_W + ((Math.min(Math.max(t, start), end) - start) / span) * (W - LABEL_W - 4);
  const height = segs.length * ROW_H + AXIS_H;
  return (
    <figure className="jp-diamond-gantt" data-diamond-timeline={site}>
      <figcaption>{site}</figcaption>
      <svg
        viewBox={`0 0 ${W} ${height}`}
        width="100%"
        role="img"
        aria-label={`Timeline of ${segs.length} jobs on ${site}`}
      >
        {segs.map((s, i) => {
          const y = i * ROW_H;
          const qEnd = s.started ?? s.ended ?? now;
          const rEnd = s.ended ?? now;
          const name = s.job.name || s.job.native_id || s.job.id;
          return (
            <g key={s.job.id} data-diamond-job-bar={s.job.id}>
              <text x={0} y={y + ROW_H - 4} className="jp-diamond-gantt-label">
                {name.length > 11 ? name.slice(0, 10) + '…' : name}
              </text>
              <rect
                x={x(s.submitted)}
                y={y + 3}
                width={Math.max(1, x(qEnd) - x(s.submitted))}
                height={ROW_H - 6}
                className="jp-diamond-seg-queued"
              >
                <title>
                  {`${name} queued ${fmtTime(s.submitted, timeZone)} → ${fmtTime(qEnd, timeZone)}`}
                </title>
              </rect>
              {s.started !== null && (
                <rect
                  x={x(s.started)}
                  y={y + 2}
                  width={Math.max(1.5, x(rEnd) - x(s.started))}
                  height={ROW_H - 4}
                  className={`jp-diamond-seg jp-diamond-seg-${s.job.state.toLowerCase()}`}
                >
                  <title>
                    {`${name} ${s.job.state} ${fmtTime(s.started, timeZone)} → ${
                      s.ended !== null ? fmtTime(s.ended, timeZone) : 'now'
                    }`}
                  </title>
                </rect>
              )}
            </g>
          );
        })}
        <line
          x1={x(now)}
          x2={x(now)}
          y1={0}
          y2={segs.length * ROW_H}
          className="jp-diamond-gantt-now"
        >
          <title>now</title>
        </line>
        <text x={LABEL_W} y={height - 2} className="jp-diamond-gantt-axis">
          {fmtTime(start, timeZone, span > 20 * 3600 * 1000)}
        </text>
        <text
          x={W - 4}
          y={height - 2}
          textAnchor="end"
          className="jp-diamond-gantt-axis"
        >
          {fmtTime(end, timeZone, false)}
        </text>
      </svg>
    </figure>
  );
}

/** Per site, a Gantt chart of the user's jobs: queued then running. */
export function Timeline(props: {
  jobs: IJob[];
  timeZone: string;
}): JSX.Element {
  const [, setTick] = React.useState(0);
  const now = Date.now();
  const active = props.jobs.some(j => !TERMINAL_STATES.has(j.state));
  React.useEffect(() => {
    if (!active) {
      return;
    }
    // Redraw only (moves the "now" line); no request is made.
    const t = window.setInterval(() => setTick(x => x + 1), 30_000);
    return () => window.clearInterval(t);
  }, [active]);
  const bySite = new Map<string, IJob[]>();
  for (const j of props.jobs) {
    bySite.set(j.site, [...(bySite.get(j.site) ?? []), j]);
  }
  const charts = Array.from(bySite.entries())
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([site, jobs]) => (
      <SiteGantt
        key={site}
        site={site}
        jobs={jobs}
        now={now}
        timeZone={props.timeZone}
      />
    ));
  if (charts.length === 0) {
    return <p className="jp-diamond-muted">Nothing to show yet.</p>;
  }
  return (
    <div>
      {charts}
      <p className="jp-diamond-legend jp-diamond-muted" aria-hidden="true">
        <span className="jp-diamond-key jp-diamond-seg-queued" /> queued
        <span className="jp-diamond-key jp-diamond-seg-running" /> running
        <span className="jp-diamond-key jp-diamond-seg-completed" /> done
        <span className="jp-diamond-key jp-diamond-seg-failed" /> failed
      </p>
    </div>
  );
}
