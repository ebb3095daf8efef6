import * as React from 'react';

import { fmtTime } from '../format';
import { IEvent } from '../types';

function describe(ev: IEvent): string {
  const d = ev.data ?? {};
  if (ev.kind.startsWith('job.') && d.state && ev.stale) {
    return `${ev.job_id ?? ''}: ${String(d.state)} (reported late; the job is already ${ev.stale})`;
  }
  if (ev.kind.startsWith('job.') && d.state) {
    const prev = d.previous ? `${String(d.previous)} → ` : '';
    return `${ev.job_id ?? ''}: ${prev}${String(d.state ?? '')}`;
  }
  const inner = (d.data ?? {}) as Record<string, unknown>;
  const msg = d.message ?? d.text ?? d.summary ?? d.state ?? inner.message ?? inner.warnings;
  const subject = ev.job_id ?? ev.site ?? '';
  return [subject, msg === undefined ? '' : String(msg)]
    .filter(Boolean)
    .join(': ');
}

export function Activity(props: {
  events: IEvent[];
  timeZone: string;
  limit: number;
}): JSX.Element {
  const events = props.events.slice(0, props.limit);
  if (events.length === 0) {
    return <p className="jp-diamond-muted">No activity yet.</p>;
  }
  return (
    <ol className="jp-diamond-list jp-diamond-activity" aria-live="polite">
      {events.map((ev, i) => (
        <li
          key={ev.seq ?? `n${i}-${ev.at}`}
          data-diamond-event={ev.kind}
          data-diamond-stale={ev.stale}
          className={ev.stale ? 'jp-diamond-muted' : undefined}
        >
          <span className="jp-diamond-muted">
            {fmtTime(ev.at, props.timeZone)}
          </span>{' '}
          <span className="jp-diamond-event-kind">{ev.kind}</span>{' '}
          <span>{describe(ev)}</span>
        </li>
      ))}
    </ol>
  );
}
