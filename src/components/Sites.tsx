import * as React from 'react';

import { caretDownIcon, caretRightIcon } from '@jupyterlab/ui-components';

import { domId, fmtCount, fmtDuration } from '../format';
import { loginToSite, needsLogin } from '../login';
import { ISiteRow } from '../types';
import { SiteDetail } from './SiteDetail';
import { SiteWarnings } from './SiteWarnings';

function Stat(props: {
  name: string;
  label: string;
  value: React.ReactNode;
  hint: string;
}): JSX.Element {
  return (
    <div className="jp-diamond-stat" title={props.hint} data-diamond-stat={props.name}>
      <dt>{props.label}</dt>
      <dd>{props.value}</dd>
    </div>
  );
}

const COLUMNS: Record<
  string,
  { label: string; hint: string; value: (s: ISiteRow) => React.ReactNode }
> = {
  nodes: { label: 'Nodes', hint: 'free/total', value: s => fmtCount(s.nodes_free, s.nodes_total) },
  cpus: { label: 'CPUs', hint: 'free/total', value: s => fmtCount(s.cpus_free, s.cpus_total) },
  gpus: { label: 'GPUs', hint: 'free/total', value: s => fmtCount(s.gpus_free, s.gpus_total) },
  pending: { label: 'Queued', hint: 'jobs pending on the site', value: s => s.pending ?? '—' },
  running: { label: 'Running', hint: 'jobs running on the site', value: s => s.running ?? '—' },
  mine: { label: 'Mine', hint: 'your unfinished jobs on the site', value: s => s.my_jobs ?? '—' },
  wait: {
    label: 'Wait',
    hint: 'estimated wait before a typical job (1 node, 1 h) starts',
    value: s =>
      s.typical_start_s === null || s.typical_start_s === undefined
        ? '—'
        : `~${fmtDuration(s.typical_start_s)}`
  }
};

export const SITE_COLUMNS = Object.keys(COLUMNS);

function SiteRow({ site, columns }: { site: ISiteRow; columns: string[] }): JSX.Element {
  const [open, setOpen] = React.useState(false);
  const Caret = open ? caretDownIcon : caretRightIcon;
  const partId = domId('jp-diamond-parts-', site.name);
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
        {/* a name too long for the row is cut with an ellipsis: whole on hover */}
        <span className="jp-diamond-site-name" title={site.name}>
          {site.name}
        </span>
        <span className="jp-diamond-muted">{site.scheduler}</span>
        <SiteWarnings site={site.name} warnings={site.warnings} total={site.warnings_total} />
        <span className="jp-diamond-muted jp-diamond-reach">{site.reachable ? '' : 'unreachable'}</span>
      </div>
      {site.error && <div className="jp-diamond-error-text">{site.error}</div>}
      {site.queue_error && (
        <div className="jp-diamond-error-text" data-diamond-queue-unknown={site.name}>
          {site.queue_error}
        </div>
      )}
      {!site.reachable && needsLogin(site.error) && (
        <button
          className="jp-mod-styled jp-mod-accept jp-diamond-login"
          data-diamond-login-button={site.name}
          onClick={() => void loginToSite(site.name)}
        >
          Log in
        </button>
      )}
      <dl className="jp-diamond-site-stats">
        {columns.map(c => {
          const col = COLUMNS[c];
          return col ? <Stat key={c} name={c} label={col.label} value={col.value(site)} hint={col.hint} /> : null;
        })}
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
      {open && <SiteDetail name={site.name} />}
    </li>
  );
}

export function Sites({
  sites,
  columns
}: {
  sites: ISiteRow[];
  columns: string[];
}): JSX.Element {
  if (sites.length === 0) {
    return <p className="jp-diamond-muted">No sites configured.</p>;
  }
  return (
    <ul className="jp-diamond-list">
      {sites.map(s => (
        <SiteRow key={s.name} site={s} columns={columns} />
      ))}
    </ul>
  );
}
