import * as React from 'react';

import { caretDownIcon, caretRightIcon } from '@jupyterlab/ui-components';

import { fmtCount, fmtDuration } from '../format';
import { ISiteRow } from '../types';

function Stat(props: {
  label: string;
  value: React.ReactNode;
  hint: string;
}): JSX.Element {
  return (
    <div className="jp-diamond-stat" title={props.hint}>
      <dt>{props.label}</dt>
      <dd>{props.value}</dd>
    </div>
  );
}

function SiteRow({ site }: { site: ISiteRow }): JSX.Element {
  const [open, setOpen] = React.useState(false);
  const Caret = open ? caretDownIcon : caretRightIcon;
  const partId = `jp-diamond-parts-${site.name.replace(/[^\w-]/g, '_')}`;
  const reach = site.reachable ? 'reachable' : 'unreachable';
  return (
    <li
      className={`jp-diamond-site jp-diamond-site-${reach}`}
      data-diamond-site={site.name}
    >
      <div className="jp-diamond-site-head">
        <button
          className="jp-diamond-icon-button"
          aria-expanded={open}
          aria-controls={partId}
          aria-label={`${open ? 'Hide' : 'Show'} partitions of ${site.name}`}
          onClick={() => setOpen(!open)}
        >
          <Caret.react tag="span" />
        </button>
        <span
          className="jp-diamond-dot"
          role="img"
          aria-label={reach}
          title={site.error ?? reach}
        />
        <span className="jp-diamond-site-name">{site.name}</span>
        <span className="jp-diamond-muted">{site.scheduler}</span>
      </div>
      {site.error && <div className="jp-diamond-error-text">{site.error}</div>}
      <dl className="jp-diamond-site-stats">
        <Stat label="Nodes" value={fmtCount(site.nodes_free, site.nodes_total)} hint="free/total" />
        <Stat label="CPUs" value={fmtCount(site.cpus_free, site.cpus_total)} hint="free/total" />
        <Stat label="GPUs" value={fmtCount(site.gpus_free, site.gpus_total)} hint="free/total" />
        <Stat label="Queued" value={site.pending ?? '—'} hint="jobs pending on the site" />
        <Stat label="Running" value={site.running ?? '—'} hint="jobs running on the site" />
        <Stat label="Mine" value={site.my_jobs ?? '—'} hint="your jobs on the site" />
        <Stat
          label="Wait"
          value={
            site.typical_start_s === null || site.typical_start_s === undefined
              ? '—'
              : `~${fmtDuration(site.typical_start_s)}`
          }
          hint="estimated wait before a typical job starts"
        />
      </dl>
      {open && (
        <table id={partId} className="jp-diamond-table">
          <thead>
            <tr>
              <th scope="col">Partition</th>
              <th scope="col">Max time</th>
              <th scope="col">Nodes</th>
            </tr>
          </thead>
          <tbody>
            {(site.partitions ?? []).map(p => (
              <tr key={p.name} data-diamond-partition={p.name}>
                <td>
                  {p.name}
                  {p.default ? ' (default)' : ''}
                </td>
                <td>{fmtDuration(p.max_time_s)}</td>
                <td>{p.total_nodes ?? '—'}</td>
              </tr>
            ))}
            {(site.partitions ?? []).length === 0 && (
              <tr>
                <td colSpan={3} className="jp-diamond-muted">
                  No partitions reported
                </td>
              </tr>
            )}
          </tbody>
        </table>
      )}
    </li>
  );
}

export function Sites({ sites }: { sites: ISiteRow[] }): JSX.Element {
  if (sites.length === 0) {
    return <p className="jp-diamond-muted">No sites configured.</p>;
  }
  return (
    <ul className="jp-diamond-list">
      {sites.map(s => (
        <SiteRow key={s.name} site={s} />
      ))}
    </ul>
  );
}
