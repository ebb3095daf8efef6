import * as React from 'react';

import {
  closeIcon,
  fileIcon,
  InputGroup,
  searchIcon
} from '@jupyterlab/ui-components';

import { fmtTime, stateClass } from '../format';
import { IJob, TERMINAL_STATES } from '../types';

export interface IJobActions {
  cancel(job: IJob): void;
  logs(job: IJob): void;
  openOrigin(job: IJob): void;
}

/** Every whitespace-separated term must match the site, state, name or id. */
export function matchJob(job: IJob, filter: string): boolean {
  const hay = `${job.site} ${job.state} ${job.name} ${job.id}`.toLowerCase();
  return filter
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every(term => hay.includes(term));
}

function JobRow(props: {
  job: IJob;
  actions: IJobActions;
  timeZone: string;
}): JSX.Element {
  const { job, actions, timeZone } = props;
  const label = job.name || job.id;
  const [verb, when] = job.ended_at
    ? ['ended', job.ended_at]
    : job.started_at
      ? ['started', job.started_at]
      : ['queued', job.submitted_at];
  return (
    <li
      className={`jp-diamond-job ${stateClass(job.state)}`}
      data-diamond-job={job.id}
      data-diamond-state={job.state}
    >
      <div className="jp-diamond-job-main">
        <span className="jp-diamond-badge">{job.state}</span>
        <span className="jp-diamond-job-name" title={job.id}>
          {label}
        </span>
      </div>
      <div className="jp-diamond-job-meta jp-diamond-muted">
        <span>{job.id}</span>
        <span>
          {verb} {fmtTime(when, timeZone)}
        </span>
        {job.exit_code !== null && job.exit_code !== undefined && (
          <span>exit {job.exit_code}</span>
        )}
        {job.reason && <span title="reason">{job.reason}</span>}
      </div>
      <div className="jp-diamond-job-actions">
        <button
          className="jp-mod-styled jp-diamond-small-button"
          aria-label={`Show logs of ${label}`}
          onClick={() => actions.logs(job)}
        >
          Logs
        </button>
        {job.origin?.path && (
          <button
            className="jp-mod-styled jp-diamond-small-button"
            aria-label={`Open ${job.origin.path}, which submitted ${label}`}
            title={job.origin.path}
            onClick={() => actions.openOrigin(job)}
          >
            <fileIcon.react tag="span" className="jp-diamond-inline-icon" />
            Source
          </button>
        )}
        {!TERMINAL_STATES.has(job.state) && (
          <button
            className="jp-mod-styled jp-mod-warn jp-diamond-small-button"
            aria-label={`Cancel ${label}`}
            onClick={() => actions.cancel(job)}
          >
            <closeIcon.react tag="span" className="jp-diamond-inline-icon" />
            Cancel
          </button>
        )}
      </div>
    </li>
  );
}

export function Jobs(props: {
  jobs: IJob[];
  actions: IJobActions;
  timeZone: string;
}): JSX.Element {
  const [filter, setFilter] = React.useState('');
  const shown = props.jobs.filter(j => matchJob(j, filter));
  return (
    <div>
      <InputGroup
        type="search"
        className="jp-diamond-filter"
        placeholder="Filter by site, state, name"
        aria-label="Filter jobs by site, state or name"
        value={filter}
        onChange={e => setFilter((e.target as HTMLInputElement).value)}
        rightIcon={searchIcon}
      />
      {props.jobs.length === 0 ? (
        <p className="jp-diamond-muted">No jobs yet.</p>
      ) : shown.length === 0 ? (
        <p className="jp-diamond-muted">No job matches “{filter}”.</p>
      ) : (
        <ul className="jp-diamond-list" aria-label="Jobs">
          {shown.map(j => (
            <JobRow
              key={j.id}
              job={j}
              actions={props.actions}
              timeZone={props.timeZone}
            />
          ))}
        </ul>
      )}
    </div>
  );
}
