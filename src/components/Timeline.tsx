import * as React from 'react';

import { arrayTasksText, cutToColumns, fmtDuration, fmtTime, parseTime, sameDay } from '../format';
import { useWidth } from '../hooks';
import { IArrayTasks, IJob, TERMINAL_STATES } from '../types';
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

/** One job's row: its label, tooltip text and two segments. Memoised: a row is written
 * again only when its job or its geometry changes (not when another row is hovered). */
const Bar = React.memo(function Bar(props: {
  job: IJob;
  submitted: number;
  started: number | null;
  ended: number | null;
  y: number;
  xSubmitted: number;
  xQueueEnd: number;
  xStarted: number | null;
  xRunEnd: number;
  maxChars: number;
  timeZone: string;
}): JSX.Element {
  const { job, submitted, started, ended, y, timeZone, maxChars } = props;
  const name = job.name || job.native_id || job.id;
  const tasks = job.array_tasks && job.array_tasks.total > 1 ? job.array_tasks : null;
  // the texts depend on the job alone: worked out once, not at each zoom or redraw
  const texts = React.useMemo(() => {
    const count = tasks ? ` ×${tasks.total}` : '';
    const said = tasks ? ` (${arrayTasksText(tasks)})` : '';
    return {
      aria: `${name}: ${job.state}${said}, queued ${fmtTime(submitted, timeZone)}`,
      title:
        `${name} (${job.id}): ${job.state}${said}\nqueued ${fmtTime(submitted, timeZone, true, true)}` +
        (started !== null ? `\nstarted ${fmtTime(started, timeZone, true, true)}` : '') +
        (ended !== null ? `\nended ${fmtTime(ended, timeZone, true, true)}` : ''),
      // an array's row is a counted group: its count stays whole, the name is cut first
      label: cutToColumns(name, Math.max(1, maxChars - count.length)) + count
    };
  }, [job, name, tasks, submitted, started, ended, timeZone, maxChars]);
  const state = job.state.toLowerCase();
  const runX = props.xStarted ?? props.xSubmitted;
  return (
    <g
      data-diamond-job-bar={job.id}
      data-diamond-state={job.state}
      data-diamond-array-tasks={tasks?.total}
      tabIndex={0}
      role="img"
      aria-label={texts.aria}
    >
      <title>{texts.title}</title>
      <text x={0} y={y + ROW_H - 4} className="jp-diamond-gantt-label">
        {texts.label}
      </text>
      <rect
        x={props.xSubmitted}
        y={y + 3}
        width={Math.max(1, props.xQueueEnd - props.xSubmitted)}
        height={ROW_H - 6}
        className={`jp-diamond-seg-queued${started === null && ended !== null ? ` jp-diamond-seg-${state}` : ''}`}
      />
      {tasks ? (
        // a band per state, as thick as its share of the tasks: not one bar claiming all
        <TaskBands tasks={tasks} x={runX} y={y + 2} width={Math.max(1.5, props.xRunEnd - runX)} />
      ) : props.xStarted !== null && (
        <rect
          x={props.xStarted}
          y={y + 2}
          width={Math.max(1.5, props.xRunEnd - props.xStarted)}
          height={ROW_H - 4}
          className={`jp-diamond-seg jp-diamond-seg-${state}`}
        />
      )}
    </g>
  );
});

/** A job array's row: from its start (or its submit) to its end (or now), one band per
 * state its tasks are in, stacked, each as thick as its share of the tasks. */
function TaskBands(props: { tasks: IArrayTasks; x: number; y: number; width: number }): JSX.Element {
  const { tasks, x, width } = props;
  const height = ROW_H - 4;
  let y = props.y;
  return (
    <>
      {Object.entries(tasks.states)
        .sort(([a], [b]) => LEGEND.indexOf(a) - LEGEND.indexOf(b))
        .map(([state, n]) => {
          const h = (height * n) / tasks.total;
          const band = (
            <rect
              key={state}
              x={x}
              y={y}
              width={width}
              height={h}
              className={`jp-diamond-seg jp-diamond-seg-${state.toLowerCase()}`}
              data-diamond-array-state={state}
              data-diamond-array-count={n}
            />
          );
          y += h;
          return band;
        })}
    </>
  );
}

/** The row element (and its job id) an event of a chart's SVG happened in, if any. */
function barOf(target: EventTarget | null): string | null {
  const g = target instanceof Element ? target.closest('[data-diamond-job-bar]') : null;
  return g?.getAttribute('data-diamond-job-bar') ?? null;
}

interface ISiteGanttProps {
  site: string;
  jobs: IJob[];
  now: number;
  spanMs: number;
  width: number;
  timeZone: string;
  onHover: (h: IHover | null) => void;
}

/** One site's chart. Memoised: hovering a row elsewhere re-renders none of it; its rows
 * share one set of listeners on the SVG (events bubble to it) rather than five each. */
const SiteGantt = React.memo(function SiteGantt(props: ISiteGanttProps): JSX.Element | null {
  const { site, jobs, now, spanMs, timeZone, onHover } = props;
  const W = props.width;
  const LABEL_W = Math.min(220, Math.max(66, Math.round(W * 0.3)));
  const maxChars = Math.max(4, Math.floor((LABEL_W - 4) / CHAR_W));
  const seconds = spanMs <= 3 * 3600 * 1000;
  const start = now - spanMs;
  const { shown: segs, inWindow } = segments(jobs, start);
  if (segs.length === 0) {
    return null;
  }
  const x = (t: number) =>
    LABEL_W + ((Math.min(Math.max(t, start), now) - start) / spanMs) * (W - LABEL_W - 4);
  const height = segs.length * ROW_H + AXIS_H;
  const show = (target: EventTarget | null) => {
    const id = barOf(target);
    const job = id === null ? undefined : jobs.find(j => j.id === id);
    if (job) {
      onHover({ job, site });
    }
  };
  const hide = (from: EventTarget | null, to: EventTarget | null) => {
    // leaving a row for another row: that row's mouseover shows it
    if (barOf(from) !== null && barOf(to) === null) {
      onHover(null);
    }
  };
  return (
    <figure
      className="jp-diamond-gantt"
      data-diamond-timeline={site}
      // off screen, the browser skips the chart's layout and paint (its size is kept)
      style={{ containIntrinsicSize: `auto ${height + 20}px` }}
    >
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
        onMouseOver={e => show(e.target)}
        onFocus={e => show(e.target)}
        onMouseOut={e => hide(e.target, e.relatedTarget)}
        onBlur={e => hide(e.target, e.relatedTarget)}
        onKeyDown={e => {
          if (e.key === 'Escape' && barOf(e.target) !== null) {
            // hide the tooltip, keep the focus here (JupyterLab would move it away)
            e.preventDefault();
            e.stopPropagation();
            onHover(null);
          }
        }}
      >
        {segs.map((s, i) => (
          <Bar
            key={s.job.id}
            job={s.job}
            submitted={s.submitted}
            started={s.started}
            ended={s.ended}
            y={i * ROW_H}
            xSubmitted={x(s.submitted)}
            xQueueEnd={x(s.started ?? s.ended ?? now)}
            xStarted={s.started === null ? null : x(s.started)}
            xRunEnd={x(s.ended ?? now)}
            maxChars={maxChars}
            timeZone={timeZone}
          />
        ))}
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
});

/** The sites whose charts under `box` are far out of view (more than a view's height
 * away), watched by one IntersectionObserver; a chart not yet watched counts as in view.
 * (Out of view, the browser skips their layout and paint too: `content-visibility`.) */
function useOffscreenCharts(box: React.RefObject<HTMLElement>): Set<string> {
  const [offscreen, setOffscreen] = React.useState<Set<string>>(() => new Set());
  const observer = React.useRef<IntersectionObserver | null>(null);
  React.useEffect(() => {
    observer.current = new IntersectionObserver(
      entries =>
        setOffscreen(last => {
          const next = new Set(last);
          for (const e of entries) {
            const site = e.target.getAttribute('data-diamond-timeline') ?? '';
            e.isIntersecting ? next.delete(site) : next.add(site);
          }
          return next.size === last.size && [...next].every(s => last.has(s)) ? last : next;
        }),
      { rootMargin: '100% 0px' }
    );
    return () => observer.current?.disconnect();
  }, []);
  React.useEffect(() => {
    // charts come and go with the jobs: watch the ones drawn now (watching twice is a no-op)
    box.current?.querySelectorAll('figure[data-diamond-timeline]').forEach(f => observer.current?.observe(f));
  });
  return offscreen;
}

/** The time window a chart is drawn in: ending at `now`, `spanMs` long. */
interface IWindow {
  now: number;
  spanMs: number;
}

/** How many charts out of view take a new time window in one idle callback. */
const CATCH_UP_CHARTS = 4;
/** The catch-up waits until no bar has been hovered or focused for this long. */
const QUIET_MS = 300;

/** Run `fn` once the page is idle, within a second; its id for `cancelIdle`. */
function idle(fn: () => void): number {
  return typeof window.requestIdleCallback === 'function'
    ? window.requestIdleCallback(fn, { timeout: 1000 })
    : window.setTimeout(fn, 50);
}

function cancelIdle(id: number): void {
  typeof window.cancelIdleCallback === 'function'
    ? window.cancelIdleCallback(id)
    : window.clearTimeout(id);
}

const FIT_RECENT = 5;

/** The jobs the fitted window shows: the unfinished ones and the FIT_RECENT latest
 * (`jobs` is newest first). */
function shownJobs(jobs: IJob[]): IJob[] {
  return jobs.filter((j, i) => i < FIT_RECENT || !TERMINAL_STATES.has(j.state));
}

/** Per site, a Gantt chart of the user's jobs: queued then running, zoomable. */
export function Timeline(props: { jobs: IJob[]; timeZone: string }): JSX.Element {
  // "now" moves at the redraws only: a render for another reason (a row hovered, the
  // sidebar updated) leaves every chart as it is
  const [now, setNow] = React.useState(() => Date.now());
  const [zoom, setZoomLevel] = React.useState(0);
  const setZoom = (level: number) => {
    setZoomLevel(level);
    setNow(Date.now());
  };
  const box = React.useRef<HTMLDivElement>(null);
  const width = useWidth(box, 240, 160);
  const [hover, setHover] = React.useState<IHover | null>(null);
  const offscreen = useOffscreenCharts(box);
  const { jobs, timeZone } = props;
  const active = React.useMemo(() => jobs.some(j => !TERMINAL_STATES.has(j.state)), [jobs]);
  const fitMs = React.useMemo(() => fitSpanMs(shownJobs(jobs), now), [jobs, now]);
  const spanMs = SPANS_MIN[zoom] > 0 ? SPANS_MIN[zoom] * 60_000 : fitMs;
  // While a job is live, as often as "now" moves a pixel on the chart (every second on a
  // span of minutes, far less often on one of hours: a thousand bars drawn again each
  // second would keep the page busy), yet at least every minute, the axis's precision.
  const pixelMs = Math.round(spanMs / Math.max(1, width) / 1000) * 1000;
  const every = active ? Math.min(IDLE_REDRAW_MS, Math.max(1000, pixelMs)) : IDLE_REDRAW_MS;
  React.useEffect(() => {
    // Redraw only (bars reach "now", the axis says when now is); no request is made; and at
    // once when the tab wakes: a tab asleep for hours would otherwise show the hour it fell
    // asleep as "now".
    const redraw = () => setNow(Date.now());
    const t = window.setInterval(redraw, every);
    const onWake = () => document.hidden || redraw();
    document.addEventListener('visibilitychange', onWake);
    return () => {
      window.clearInterval(t);
      document.removeEventListener('visibilitychange', onWake);
    };
  }, [every]);
  const lastBySite = React.useRef(new Map<string, IJob[]>());
  // Charts far out of view keep the time window they last drew: a zoom or a move of "now"
  // paints the charts in view at once, the others a few at a time while the page is idle
  // (within a second of the last hover or focus of a bar): one commit of every chart off
  // view would hold a frame, and a bar hovered or focused meanwhile would wait for it.
  const drawnWindow = React.useRef(new Map<string, IWindow>());
  const [, setCaughtUp] = React.useState(0);
  const lastHover = React.useRef(-Infinity);
  const onHover = React.useCallback((h: IHover | null) => {
    lastHover.current = performance.now();
    setHover(h);
  }, []);
  const windowOf = (site: string): IWindow => {
    const drawn = drawnWindow.current.get(site);
    const current = drawn && drawn.now === now && drawn.spanMs === spanMs ? drawn : { now, spanMs };
    const shown = offscreen.has(site) && drawn ? drawn : current;
    drawnWindow.current.set(site, shown);
    return shown;
  };
  React.useEffect(() => {
    const behind = () =>
      [...drawnWindow.current].filter(([, w]) => w.now !== now || w.spanMs !== spanMs);
    if (behind().length === 0) {
      return undefined;
    }
    let id = 0;
    let wait = 0;
    const step = () => {
      const quietFor = performance.now() - lastHover.current;
      if (quietFor < QUIET_MS) {
        // a bar is being hovered or focused: its details first, the catch-up after
        wait = window.setTimeout(() => (id = idle(step)), QUIET_MS - quietFor);
        return;
      }
      const late = behind();
      for (const [site] of late.slice(0, CATCH_UP_CHARTS)) {
        drawnWindow.current.set(site, { now, spanMs });
      }
      setCaughtUp(n => n + 1);
      if (late.length > CATCH_UP_CHARTS) {
        id = idle(step);
      }
    };
    id = idle(step);
    return () => {
      cancelIdle(id);
      window.clearTimeout(wait);
    };
  }, [now, spanMs]);
  const bySite = React.useMemo(() => {
    const map = new Map<string, IJob[]>();
    for (const j of jobs) {
      const list = map.get(j.site);
      list ? list.push(j) : map.set(j.site, [j]);
    }
    // a site whose jobs are the same objects as before keeps its list, so its chart
    // is not drawn again when a job of another site changes
    for (const [site, list] of map) {
      const last = lastBySite.current.get(site);
      if (last && last.length === list.length && last.every((j, i) => j === list[i])) {
        map.set(site, last);
      }
    }
    lastBySite.current = map;
    return Array.from(map.entries()).sort(([a], [b]) => a.localeCompare(b));
  }, [jobs]);
  const anyInWindow = React.useMemo(
    () => jobs.some(j => (parseTime(j.ended_at) ?? now) >= now - spanMs),
    [jobs, now, spanMs]
  );
  const hovered = hover ? jobs.find(j => j.id === hover.job.id) ?? hover.job : null;
  return (
    <div
      ref={box}
      onWheel={e => {
        if (e.ctrlKey || e.altKey) {
          e.preventDefault();
          setZoom(Math.min(SPANS_MIN.length - 1, Math.max(0, zoom + (e.deltaY > 0 ? 1 : -1))));
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
      {anyInWindow ? (
        bySite.map(([site, siteJobs]) => (
          <SiteGantt
            key={site}
            site={site}
            jobs={siteJobs}
            {...windowOf(site)}
            width={width}
            timeZone={timeZone}
            onHover={onHover}
          />
        ))
      ) : (
        <p className="jp-diamond-muted">No job in this time window.</p>
      )}
      {hovered && (
        <div className="jp-diamond-tooltip" role="tooltip" data-diamond-tooltip={hovered.id}>
          <JobDetails job={hovered} timeZone={timeZone} />
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
