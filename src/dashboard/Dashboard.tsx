import * as React from 'react';

import { refreshIcon } from '@jupyterlab/ui-components';

import { domId, fmtTime, parseTime } from '../format';
import { DiamondModel } from '../model';
import { SiteWarnings } from '../components/SiteWarnings';
import { IWorkflow, useWorkflows, WorkflowList } from '../components/Workflows';
import { Gantt } from './Gantt';
import { DashboardModel } from './model';
import { QueueTable } from './QueueTable';
import { IDashboardSite } from './types';
import { UsageChart } from './UsageChart';

const HOURS = [1, 6, 24];

function n(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : String(v);
}

/** One site: its occupancy, usage chart and queue. Drawn again only when the dashboard is
 * read again (not on each of the user's job events). */
const SiteCard = React.memo(function SiteCard(props: {
  site: IDashboardSite;
  hours: number;
  dash: DashboardModel;
  /** The answer's `generated` time: changes with each new answer. */
  version: string;
  timeZone: string;
  onOpenJob: (id: string) => void;
}): JSX.Element {
  const { site, hours, dash, version, timeZone, onOpenJob } = props;
  const taken = parseTime(site.taken_at) ?? parseTime(version) ?? Date.now();
  const ageS = Math.max(0, (Date.now() - taken) / 1000);
  const headId = domId('jp-diamond-dash-', site.name);
  let pending = 0;
  let running = 0;
  let mine = 0;
  for (const r of site.queue) {
    pending += r.state === 'PENDING' ? 1 : 0;
    running += r.state === 'RUNNING' ? 1 : 0;
    mine += r.mine ? 1 : 0;
  }
  return (
    <section className="jp-diamond-dash-site" aria-labelledby={headId} data-diamond-dash-site={site.name}>
      <h3 id={headId}>
        <span
          className={`jp-diamond-dot jp-diamond-site-${site.reachable ? 'reachable' : 'unreachable'}`}
          role="img"
          aria-label={site.reachable ? 'reachable' : 'unreachable'}
        />
        {site.name} <span className="jp-diamond-muted">{site.scheduler}</span>{' '}
        <SiteWarnings site={site.name} warnings={site.warnings} total={site.warnings_total} />
      </h3>
      <p className="jp-diamond-dash-summary">
        CPUs busy {n(site.busy.cpus)}/{n(site.totals.cpus)} · GPUs busy {n(site.busy.gpus)}/
        {n(site.totals.gpus)} · nodes {n(site.totals.nodes)} · {pending} queued · {running} running ·{' '}
        <strong>{mine} yours</strong>
      </p>
      {site.error && <p className="jp-diamond-error-text">{site.error}</p>}
      <UsageChart
        site={site.name}
        hours={hours}
        totals={site.totals}
        settings={dash.settings}
        version={version}
        timeZone={timeZone}
      />
      <QueueTable site={site.name} rows={site.queue} ageS={ageS} onOpenJob={onOpenJob} />
    </section>
  );
});

/** Before the first read (the dashboard ignores a failed read: the sidebar says why). */
const NO_WORKFLOWS: IWorkflow[] = [];

/** The main-area dashboard `[data-diamond-dashboard]`: per site its usage over time and
 * its whole queue; the user's jobs and workflows on one timeline; the workflows' DAGs. */
export function Dashboard(props: {
  model: DiamondModel;
  dash: DashboardModel;
  timeZone: string;
  onOpenJob: (id: string) => void;
}): JSX.Element {
  const { model, dash, timeZone, onOpenJob } = props;
  const [hours, setHours] = React.useState(6);
  const data = dash.data;
  const workflows = useWorkflows(model, 20).workflows ?? NO_WORKFLOWS;
  React.useEffect(() => {
    if (data) {
      dash.noteCommitted();
      requestAnimationFrame(() => dash.notePainted());
    }
  }, [data]);
  const generated = parseTime(data?.generated) ?? Date.now();
  return (
    <div className="jp-diamond-dashboard-body">
      <header className="jp-diamond-dash-header">
        <h1>Diamond dashboard</h1>
        <span className="jp-diamond-muted" role="status">
          {dash.error
            ? dash.error
            : data
              ? `Queues as of ${fmtTime(generated, timeZone, false, true)}${data.user ? ` · you are ${data.user}` : ''}`
              : 'Loading…'}
        </span>
        <span className="jp-diamond-dash-spacer" />
        <label className="jp-diamond-dash-hours">
          Usage over{' '}
          <select
            className="jp-diamond-select"
            value={hours}
            onChange={e => setHours(Number(e.target.value))}
          >
            {HOURS.map(h => (
              <option key={h} value={h}>
                the last {h} h
              </option>
            ))}
          </select>
        </label>
        <button
          className="jp-diamond-icon-button"
          aria-label="Reload the dashboard"
          title="Reload the dashboard"
          disabled={dash.loading}
          onClick={() => void dash.refresh()}
        >
          <refreshIcon.react tag="span" />
        </button>
      </header>
      <section aria-labelledby="jp-diamond-dash-queues">
        <h2 id="jp-diamond-dash-queues">Queues and usage</h2>
        {data && data.sites.length === 0 && <p className="jp-diamond-muted">No sites configured.</p>}
        <div className="jp-diamond-dash-sites">
          {(data?.sites ?? []).map(site => (
            <SiteCard
              key={site.name}
              site={site}
              hours={hours}
              dash={dash}
              version={data?.generated ?? ''}
              timeZone={timeZone}
              onOpenJob={onOpenJob}
            />
          ))}
        </div>
      </section>
      <section aria-labelledby="jp-diamond-dash-timeline">
        <h2 id="jp-diamond-dash-timeline">Your jobs and workflows over time</h2>
        <Gantt jobs={model.jobs} workflows={workflows} timeZone={timeZone} />
      </section>
      <section aria-labelledby="jp-diamond-dash-workflows">
        <h2 id="jp-diamond-dash-workflows">Workflows</h2>
        <WorkflowList workflows={workflows} className="jp-diamond-dash-workflows" />
      </section>
    </div>
  );
}
