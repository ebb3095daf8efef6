import * as React from 'react';

import { domId, fmtDuration, fmtWait } from '../format';
import { IQueuePrediction, IQueueRow } from './types';

/** Row height in px (fixed: the window is computed from it) and rows kept in the DOM
 * beyond the visible ones, above and below. */
export const ROW_H = 24;
const OVERSCAN = 8;
/** Rows visible at once; the table scrolls past that. */
const VIEW_ROWS = 12;

/** Whether the page is being printed (`@media print`): a printed queue lists every row,
 * not only the scrolled window's. */
function usePrinting(): boolean {
  const [printing, setPrinting] = React.useState(
    () => typeof window.matchMedia === 'function' && window.matchMedia('print').matches
  );
  React.useEffect(() => {
    if (typeof window.matchMedia !== 'function') {
      return;
    }
    const media = window.matchMedia('print');
    const follow = () => setPrinting(media.matches);
    const before = () => setPrinting(true); // a print dialog: rendered before it lays out
    media.addEventListener('change', follow);
    window.addEventListener('beforeprint', before);
    window.addEventListener('afterprint', follow);
    return () => {
      media.removeEventListener('change', follow);
      window.removeEventListener('beforeprint', before);
      window.removeEventListener('afterprint', follow);
    };
  }, []);
  return printing;
}

/** The predicted start of a queued job `ageS` seconds after the prediction was made:
 * "≈ 3 min (90%: < 11 min)", or "≈ 3 min (scheduler's estimate)" when that is all there is. */
export function fmtQueuePrediction(p: IQueuePrediction | null, ageS = 0): string | null {
  if (!p || p.median_s === null || p.median_s === undefined) {
    return null;
  }
  const median = `≈ ${fmtWait(p.median_s - ageS)}`;
  if (p.source === 'scheduler') {
    return `${median} (scheduler's estimate)`;
  }
  return p.p90_s === null || p.p90_s === undefined
    ? median
    : `${median} (90%: < ${fmtWait(p.p90_s - ageS)})`;
}

type SortKey =
  | 'id'
  | 'user'
  | 'name'
  | 'partition'
  | 'nodes'
  | 'cpus'
  | 'gpus'
  | 'state'
  | 'waited'
  | 'predicted';

interface IColumn {
  key: SortKey;
  label: string;
  numeric?: boolean;
  value: (r: IQueueRow) => string | number | null;
}

const COLUMNS: IColumn[] = [
  { key: 'id', label: 'Job', value: r => r.id },
  { key: 'user', label: 'User', value: r => r.user },
  { key: 'name', label: 'Name', value: r => r.name },
  { key: 'partition', label: 'Partition', value: r => r.partition },
  { key: 'nodes', label: 'Nodes', numeric: true, value: r => r.nodes },
  { key: 'cpus', label: 'CPUs', numeric: true, value: r => r.cpus },
  { key: 'gpus', label: 'GPUs', numeric: true, value: r => r.gpus },
  { key: 'state', label: 'State', value: r => r.state },
  { key: 'waited', label: 'Waited', numeric: true, value: r => r.waited_s },
  {
    key: 'predicted',
    label: 'Predicted start',
    value: r => r.predicted_start?.median_s ?? null
  }
];

/** Rows holding every space-separated term of `query` (case aside) in their id, user,
 * name, partition or state; all of `rows` for an empty query. */
export function filterRows(rows: IQueueRow[], query: string): IQueueRow[] {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (terms.length === 0) {
    return rows;
  }
  return rows.filter(r => {
    const hay = [r.id, r.user, r.name, r.partition, r.state].join(' ').toLowerCase();
    return terms.every(t => hay.includes(t));
  });
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** `rows` ordered by column `key` (missing values last whatever the direction). */
export function sortRows(rows: IQueueRow[], key: SortKey | null, dir: 1 | -1): IQueueRow[] {
  const col = COLUMNS.find(c => c.key === key);
  if (!col) {
    return rows;
  }
  const keyed = rows.map(r => ({ r, v: col.value(r) }));
  keyed.sort((a, b) => {
    if (a.v === null || a.v === undefined || a.v === '') {
      return b.v === null || b.v === undefined || b.v === '' ? 0 : 1;
    }
    if (b.v === null || b.v === undefined || b.v === '') {
      return -1;
    }
    const c =
      typeof a.v === 'number' && typeof b.v === 'number'
        ? a.v - b.v
        : collator.compare(String(a.v), String(b.v));
    return c * dir;
  });
  return keyed.map(k => k.r);
}

function cell(v: number | null): string {
  return v === null || v === undefined ? '—' : String(v);
}

const Row = React.memo(function Row(props: {
  row: IQueueRow;
  index: number;
  active: boolean;
  rowId: string;
  ageS: number;
}): JSX.Element {
  const { row, index, active, rowId, ageS } = props;
  const pending = row.state === 'PENDING';
  const waited = row.waited_s === null ? null : row.waited_s + (pending ? ageS : 0);
  const predicted = pending
    ? fmtQueuePrediction(row.predicted_start, ageS) ?? '—'
    : row.running_s !== null && row.running_s !== undefined
      ? `running ${fmtDuration(row.running_s + ageS)}`
      : '—';
  return (
    <div
      role="row"
      id={rowId}
      aria-rowindex={index + 2}
      aria-selected={active}
      className={`jp-diamond-qrow${row.mine ? ' jp-diamond-qrow-mine' : ''}${active ? ' jp-mod-active' : ''}`}
      style={{ top: index * ROW_H }}
      data-diamond-queue-row={row.id}
      data-diamond-mine={row.mine ? 'true' : undefined}
      data-diamond-job-id={row.job ?? undefined}
      data-diamond-state={row.state}
    >
      <div role="gridcell">{row.id}</div>
      <div role="gridcell">
        {row.user ?? '—'}
        {row.mine && <span className="jp-diamond-you"> (you)</span>}
      </div>
      <div role="gridcell" title={row.name ?? undefined}>
        {row.name ?? '—'}
      </div>
      <div role="gridcell">{row.partition ?? '—'}</div>
      <div role="gridcell" className="jp-diamond-num">{cell(row.nodes)}</div>
      <div role="gridcell" className="jp-diamond-num">{cell(row.cpus)}</div>
      <div role="gridcell" className="jp-diamond-num">{cell(row.gpus)}</div>
      <div role="gridcell">
        <span className={`jp-diamond-qstate jp-diamond-seg-${row.state.toLowerCase()}`} />
        {row.state}
      </div>
      <div role="gridcell" className="jp-diamond-num">{fmtDuration(waited)}</div>
      <div role="gridcell" data-diamond-predicted={pending && row.predicted_start ? row.predicted_start.source : undefined}>
        {predicted}
      </div>
    </div>
  );
});

/**
 * One site's queue, every user's jobs: `[data-diamond-queue=SITE]` (an ARIA grid) with one
 * `[data-diamond-queue-row]` per job *in the DOM window*: only the visible rows (plus a few)
 * are rendered, so 10,000 rows cost what 30 do. Columns sort from their header buttons;
 * arrows, Page Up/Down, Home and End move the active row; Enter opens one's own job.
 */
export function QueueTable(props: {
  site: string;
  rows: IQueueRow[];
  /** Seconds since the server took the queue (waits grow, predictions shrink). */
  ageS: number;
  onOpenJob?: (jobId: string) => void;
}): JSX.Element {
  const { site, rows, ageS, onOpenJob } = props;
  const [sort, setSort] = React.useState<{ key: SortKey | null; dir: 1 | -1 }>({
    key: null,
    dir: 1
  });
  const [scrollTop, setScrollTop] = React.useState(0);
  const [query, setQuery] = React.useState('');
  // the active row is a job, not a place: a sort or a filter keeps it on the same job
  const [activeId, setActiveId] = React.useState<string | null>(null);
  const scroller = React.useRef<HTMLDivElement>(null);
  const filtered = React.useMemo(() => filterRows(rows, query), [rows, query]);
  const sorted = React.useMemo(() => sortRows(filtered, sort.key, sort.dir), [filtered, sort]);
  const active = React.useMemo(
    () => (activeId === null ? -1 : sorted.findIndex(r => r.id === activeId)),
    [sorted, activeId]
  );
  const count = sorted.length;
  const viewH = Math.min(Math.max(count, 1), VIEW_ROWS) * ROW_H;
  const printing = usePrinting();
  const first = printing ? 0 : Math.max(0, Math.floor(scrollTop / ROW_H) - OVERSCAN);
  const last = printing
    ? count
    : Math.min(count, Math.ceil((scrollTop + viewH) / ROW_H) + OVERSCAN);
  const idBase = domId('jp-diamond-q-', site);
  const mine = React.useMemo(() => rows.filter(r => r.mine).length, [rows]);

  const scrollToRow = (next: number) => {
    const node = scroller.current;
    if (node) {
      const top = next * ROW_H;
      if (top < node.scrollTop) {
        node.scrollTop = top;
      } else if (top + ROW_H > node.scrollTop + viewH) {
        node.scrollTop = top + ROW_H - viewH;
      }
      setScrollTop(node.scrollTop);
    }
  };
  const moveTo = (i: number) => {
    const next = Math.max(0, Math.min(count - 1, i));
    setActiveId(sorted[next]?.id ?? null);
    scrollToRow(next);
  };
  React.useEffect(() => {
    // where a new order or a filter put the active row, in view; else from the top
    if (active >= 0) {
      scrollToRow(active);
    } else if (scroller.current) {
      scroller.current.scrollTop = 0;
      setScrollTop(0);
    }
  }, [sort, query]);
  const onKeyDown = (e: React.KeyboardEvent) => {
    const page = VIEW_ROWS - 1;
    const at = active < 0 ? -1 : active;
    const moves: Record<string, number> = {
      ArrowDown: at + 1,
      ArrowUp: at - 1,
      PageDown: at + page,
      PageUp: at - page,
      Home: 0,
      End: count - 1
    };
    if (e.key in moves && count > 0) {
      e.preventDefault();
      moveTo(moves[e.key]);
    } else if (e.key === 'Enter' && active >= 0) {
      const job = sorted[active]?.job;
      if (job && onOpenJob) {
        e.preventDefault();
        onOpenJob(job);
      }
    }
  };
  const toggle = (key: SortKey) =>
    setSort(s => ({ key, dir: s.key === key ? (-s.dir as 1 | -1) : 1 }));

  const shown: JSX.Element[] = [];
  for (let i = first; i < last; i++) {
    const row = sorted[i];
    shown.push(
      <Row
        key={row.id}
        row={row}
        index={i}
        active={i === active}
        rowId={`${idBase}-${i}`}
        ageS={ageS}
      />
    );
  }
  return (
    <>
    <input
      type="search"
      className="jp-diamond-qfilter jp-mod-styled"
      aria-label={`Filter the queue of ${site}`}
      placeholder="Filter by user, name, job, partition or state"
      value={query}
      onChange={e => setQuery(e.target.value)}
      data-diamond-queue-filter={site}
    />
    <div
      ref={scroller}
      className="jp-diamond-queue"
      role="grid"
      aria-label={`Queue of ${site}: ${count} jobs, ${mine} yours`}
      aria-rowcount={count + 1}
      aria-colcount={COLUMNS.length}
      aria-activedescendant={active >= first && active < last ? `${idBase}-${active}` : undefined}
      tabIndex={0}
      onKeyDown={onKeyDown}
      onScroll={e => setScrollTop((e.target as HTMLDivElement).scrollTop)}
      style={{ height: viewH + ROW_H }}
      data-diamond-queue={site}
      data-diamond-rows={count}
      data-diamond-mine-rows={mine}
    >
      <div role="rowgroup" className="jp-diamond-qhead">
        <div role="row" aria-rowindex={1} className="jp-diamond-qrow">
          {COLUMNS.map(c => (
            <div
              key={c.key}
              role="columnheader"
              aria-sort={
                sort.key === c.key ? (sort.dir === 1 ? 'ascending' : 'descending') : undefined
              }
              className={c.numeric ? 'jp-diamond-num' : undefined}
            >
              <button
                className="jp-diamond-sort"
                onClick={() => toggle(c.key)}
                data-diamond-sort={c.key}
                title={`Sort by ${c.label.toLowerCase()}`}
              >
                {c.label}
                <span aria-hidden="true">
                  {sort.key === c.key ? (sort.dir === 1 ? ' ▲' : ' ▼') : ''}
                </span>
              </button>
            </div>
          ))}
        </div>
      </div>
      <div role="rowgroup" className="jp-diamond-qbody" style={{ height: count * ROW_H }}>
        {shown}
      </div>
    </div>
    {count === 0 && (
      <p className="jp-diamond-muted jp-diamond-qempty">
        {rows.length === 0 ? 'The queue is empty.' : `No job in the queue matches “${query}”.`}
      </p>
    )}
    </>
  );
}
