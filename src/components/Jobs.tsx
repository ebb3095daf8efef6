import * as React from 'react';

import { InputGroup, searchIcon } from '@jupyterlab/ui-components';

import { fetchJobs } from '../api';
import { DiamondModel } from '../model';
import { IJob } from '../types';
import { IJobActions, JobRow } from './JobRow';

export { IJobActions } from './JobRow';

const STATES = ['PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT', 'UNKNOWN'];

export interface IJobFilter {
  site: string;
  state: string;
  name: string;
}

/** Site and state match exactly ('' = any); every term of `name` is in the name or id. */
export function matchJob(job: IJob, f: IJobFilter): boolean {
  if ((f.site && job.site !== f.site) || (f.state && job.state !== f.state)) {
    return false;
  }
  const hay = `${job.name ?? ''} ${job.id}`.toLowerCase();
  return f.name
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every(term => hay.includes(term));
}

function Select(props: {
  label: string;
  value: string;
  options: string[];
  onChange: (v: string) => void;
}): JSX.Element {
  return (
    <select
      className="jp-diamond-select"
      aria-label={props.label}
      value={props.value}
      onChange={e => props.onChange(e.target.value)}
    >
      <option value="">{props.label}: any</option>
      {props.options.map(o => (
        <option key={o} value={o}>
          {o}
        </option>
      ))}
    </select>
  );
}

/** The jobs list: filters, then a page of cards (only `shown` are in the DOM). */
export function Jobs(props: {
  model: DiamondModel;
  actions: IJobActions;
  timeZone: string;
  pageSize: number;
}): JSX.Element {
  const { model, actions, timeZone, pageSize } = props;
  const [filter, setFilter] = React.useState<IJobFilter>({ site: '', state: '', name: '' });
  const [limit, setLimit] = React.useState(pageSize);
  const [loading, setLoading] = React.useState(false);
  const [error, setError] = React.useState<string | null>(null);
  const focused = model.focusedJob;
  React.useEffect(() => {
    if (focused) {
      setFilter({ site: '', state: '', name: '' }); // the card must be in the list
    }
  }, [focused]);
  const jobs = model.jobs;
  const matching = jobs.filter(j => matchJob(j, filter));
  const focusAt = focused ? matching.findIndex(j => j.id === focused) : -1;
  const shown = matching.slice(0, Math.max(limit, focusAt + 1));
  // roving tab stop: one row takes Tab (the last focused, else the first); arrows move
  const [current, setCurrent] = React.useState<string | null>(null);
  const stop = shown.some(j => j.id === current) ? current : (shown[0]?.id ?? null);
  const onListKey = (e: React.KeyboardEvent<HTMLUListElement>): void => {
    const row = e.target as HTMLElement;
    if (!row.matches('li[data-diamond-job]')) {
      return; // a control inside a row keeps its own keys
    }
    const rows = Array.from(e.currentTarget.querySelectorAll<HTMLElement>(':scope > li[data-diamond-job]'));
    const at = rows.indexOf(row);
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: rows.length - 1 }[e.key];
    if (to === undefined || !rows[to]) {
      return;
    }
    e.preventDefault();
    rows[to].focus();
  };
  React.useEffect(() => {
    if (model.status === 'ready') {
      requestAnimationFrame(() => model.notePainted());
    }
  });
  const set = (patch: Partial<IJobFilter>) => {
    setFilter({ ...filter, ...patch });
    setLimit(pageSize);
  };
  const loadOlder = () => {
    setLoading(true);
    setError(null);
    fetchJobs(
      { ...filter, limit: 200, offset: filter.site || filter.state || filter.name ? 0 : jobs.length },
      model.settings
    )
      .then(page => {
        model.addJobs(page.jobs);
        setLimit(limit + pageSize);
      })
      .catch(e => setError(String(e.message ?? e)))
      .finally(() => setLoading(false));
  };
  // Configured sites, plus any other site a loaded job ran on.
  const sites = Array.from(new Set([...model.sites.map(s => s.name), ...jobs.map(j => j.site)]));
  const more = jobs.length < model.jobsTotal;
  return (
    <div>
      <div className="jp-diamond-filters" role="group" aria-label="Job filters">
        <Select label="Site" value={filter.site} options={sites} onChange={site => set({ site })} />
        <Select label="State" value={filter.state} options={STATES} onChange={state => set({ state })} />
      </div>
      <InputGroup
        type="search"
        className="jp-diamond-filter"
        placeholder="Filter by name or id"
        aria-label="Filter jobs by name or id"
        value={filter.name}
        onChange={e => set({ name: (e.target as HTMLInputElement).value })}
        rightIcon={searchIcon}
      />
      <p className="jp-diamond-muted jp-diamond-jobs-count" data-diamond-jobs-count="">
        {matching.length} shown of {model.jobsTotal} jobs
      </p>
      {jobs.length === 0 ? (
        <p className="jp-diamond-muted">No jobs yet.</p>
      ) : matching.length === 0 ? (
        <p className="jp-diamond-muted">No loaded job matches these filters.</p>
      ) : (
        <ul className="jp-diamond-list" aria-label="Jobs" onKeyDown={onListKey}>
          {shown.map(j => (
            <JobRow
              key={j.id}
              job={j}
              actions={actions}
              timeZone={timeZone}
              focused={j.id === focused}
              tabStop={j.id === stop}
              onFocus={() => setCurrent(j.id)}
              stateOf={id => model.getJob(id)?.state}
            />
          ))}
        </ul>
      )}
      <div className="jp-diamond-pager">
        {shown.length < matching.length && (
          <button className="jp-mod-styled jp-diamond-small-button" onClick={() => setLimit(limit + pageSize)}>
            Show {Math.min(pageSize, matching.length - shown.length)} more
          </button>
        )}
        {more && (
          <button className="jp-mod-styled jp-diamond-small-button" disabled={loading} onClick={loadOlder}>
            {loading ? 'Loading…' : 'Load older jobs from the server'}
          </button>
        )}
        {error && <span className="jp-diamond-error-text">{error}</span>}
      </div>
    </div>
  );
}
