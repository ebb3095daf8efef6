import * as React from 'react';

import { arrayTasksText, fmtDuration, fmtHms, fmtTime, parseTime } from '../format';
import { IJob, IVerdict } from '../types';

function offer(v: IVerdict, now: number | null, timeZone: string): string {
  if (!v.feasible) {
    return (v.reasons ?? []).join('; ') || v.verdict || 'cannot run it';
  }
  const start = parseTime(v.estimated_start);
  const wait =
    start !== null && now !== null ? `starts in ~${fmtDuration((start - now) / 1000)}` : null;
  return [
    v.partition ? `partition ${v.partition}` : null,
    wait ?? (start !== null ? `start ${fmtTime(start, timeZone)}` : null),
    v.queue_depth ? `${v.queue_depth} queued` : null
  ]
    .filter(Boolean)
    .join(', ');
}

/** Time queued and run, to the second. */
function durations(job: IJob): JSX.Element | null {
  const sub = parseTime(job.submitted_at);
  const start = parseTime(job.started_at);
  const end = parseTime(job.ended_at) ?? Date.now();
  if (sub === null) {
    return null;
  }
  return (
    <>
      <dt>waited</dt>
      <dd>{fmtHms(((start ?? end) - sub) / 1000)}</dd>
      {start !== null && (
        <>
          <dt>ran</dt>
          <dd>{fmtHms((end - start) / 1000)}</dd>
        </>
      )}
    </>
  );
}

/** Times of a job and its placement decision: why this site, what others offered. */
export function JobDetails(props: { job: IJob; timeZone: string }): JSX.Element {
  const { job, timeZone } = props;
  const pl = job.placement;
  const now = parseTime(pl?.now);
  const ranked = pl?.ranked ?? [];
  return (
    <div className="jp-diamond-details">
      <strong>{job.name || job.id}</strong> <span>{job.state}</span>
      {job.array_tasks && (
        <div data-diamond-array-tasks-said="">{arrayTasksText(job.array_tasks)}</div>
      )}
      <dl>
        <dt>queued</dt>
        <dd>{fmtTime(job.submitted_at, timeZone, true, true)}</dd>
        <dt>started</dt>
        <dd>{fmtTime(job.started_at, timeZone, true, true)}</dd>
        <dt>ended</dt>
        <dd>
          {job.ended_at
            ? fmtTime(job.ended_at, timeZone, true, true)
            : job.started_at
              ? 'running'
              : '—'}
        </dd>
        {durations(job)}
      </dl>
      {ranked.length > 0 ? (
        <>
          <div>
            Placed on <strong>{pl?.choice ?? job.site}</strong>
            {pl?.policy ? ` (policy ${pl.policy})` : ''}:
          </div>
          <ol className="jp-diamond-verdicts">
            {ranked.map(v => (
              <li key={v.site} className={v.feasible ? '' : 'jp-diamond-muted'}>
                {v.site === job.site ? '★ ' : ''}
                {v.site}: {offer(v, now, timeZone)}
              </li>
            ))}
          </ol>
        </>
      ) : (
        <div className="jp-diamond-muted">Site chosen by the user (no placement).</div>
      )}
    </div>
  );
}
