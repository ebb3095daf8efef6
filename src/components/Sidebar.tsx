import * as React from 'react';

import {
  caretDownIcon,
  caretRightIcon,
  launchIcon,
  refreshIcon
} from '@jupyterlab/ui-components';

import { DiamondModel } from '../model';
import { Activity } from './Activity';
import { IJobActions, Jobs } from './Jobs';
import { Sites } from './Sites';
import { ITaskActions, Tasks } from './Tasks';
import { Timeline } from './Timeline';
import { Workflows } from './Workflows';

export interface IViewSettings {
  showSites: boolean;
  showTimeline: boolean;
  showActivity: boolean;
  showTasks: boolean;
  timeZone: string;
  activityLimit: number;
  siteColumns: string[];
  jobsPageSize: number;
}

function Section(props: {
  id: string;
  title: string;
  count?: number;
  children: React.ReactNode;
}): JSX.Element {
  const [open, setOpen] = React.useState(true);
  const Caret = open ? caretDownIcon : caretRightIcon;
  const bodyId = `jp-diamond-section-${props.id}`;
  return (
    <section className="jp-diamond-section" data-diamond-section={props.id}>
      <h3 className="jp-diamond-section-title">
        <button
          aria-expanded={open}
          aria-controls={bodyId}
          onClick={() => setOpen(!open)}
        >
          <Caret.react tag="span" />
          {props.title}
          {props.count !== undefined && (
            <span className="jp-diamond-count">{props.count}</span>
          )}
        </button>
      </h3>
      {open && <div id={bodyId}>{props.children}</div>}
    </section>
  );
}

function StatusChip({ model }: { model: DiamondModel }): JSX.Element {
  const live = model.status === 'ready' && model.connected && model.streaming;
  const text = live
    ? 'live'
    : model.status === 'loading'
      ? 'loading'
      : model.status === 'unavailable'
        ? 'unavailable'
        : 'reconnecting';
  return (
    <span
      className={`jp-diamond-chip jp-diamond-chip-${text}`}
      data-diamond-status={text}
      title={
        text === 'reconnecting'
          ? 'Live updates are lost: what is shown may be out of date; ' +
            'it catches up once the connection is back'
          : undefined
      }
      role="status"
    >
      {text}
    </span>
  );
}

export function Sidebar(props: {
  model: DiamondModel;
  settings: IViewSettings;
  actions: IJobActions;
  taskActions: ITaskActions;
  /** Opens the main-area dashboard (absent: no button). */
  onOpenDashboard?: () => void;
}): JSX.Element {
  const { model, settings, actions, taskActions, onOpenDashboard } = props;
  const hasData = model.status === 'ready' || model.sites.length > 0;
  const jobs = model.jobs;
  return (
    <div className="jp-diamond-body">
      <header className="jp-diamond-header">
        <h2>Diamond</h2>
        <StatusChip model={model} />
        {onOpenDashboard && (
          <button
            className="jp-diamond-icon-button"
            aria-label="Open the dashboard"
            title="Open the dashboard: queues, usage and timeline in the main area"
            data-diamond-open-dashboard=""
            onClick={onOpenDashboard}
          >
            <launchIcon.react tag="span" />
          </button>
        )}
        <button
          className="jp-diamond-icon-button"
          aria-label="Reload sites and jobs"
          title="Reload sites and jobs"
          onClick={() => void model.refresh()}
        >
          <refreshIcon.react tag="span" />
        </button>
      </header>
      {model.status === 'unavailable' && (
        <div className="jp-diamond-message" data-diamond-message="unavailable">
          <strong>Server extension not available.</strong>
          <p>{model.error}</p>
          <p>
            Install <code>diamond-jupyter</code> in the environment that runs
            this Jupyter server, check <code>jupyter server extension list</code>,
            then restart the server.
          </p>
        </div>
      )}
      {model.status === 'error' && (
        <div className="jp-diamond-message" data-diamond-message="error">
          <strong>Connection problem.</strong> <span>{model.error}</span>{' '}
          <span className="jp-diamond-muted">Retrying automatically.</span>
        </div>
      )}
      {model.status === 'loading' && !hasData && (
        <p className="jp-diamond-muted" data-diamond-message="loading">
          Loading…
        </p>
      )}
      {model.sitesFileChanged && (
        <div
          className="jp-diamond-message"
          role="status"
          data-diamond-message="sites-file-changed"
        >
          <strong>Sites file changed.</strong> <span>{model.sitesFileChanged}</span>
        </div>
      )}
      {hasData && (
        <>
          {settings.showSites && (
            <Section id="sites" title="Sites" count={model.sites.length}>
              <Sites sites={model.sites} columns={settings.siteColumns} />
            </Section>
          )}
          <Section id="jobs" title="Jobs" count={model.jobsTotal}>
            <Jobs
              model={model}
              actions={actions}
              timeZone={settings.timeZone}
              pageSize={settings.jobsPageSize}
            />
          </Section>
          <Section id="workflows" title="Workflows">
            <Workflows model={model} />
          </Section>
          {settings.showTimeline && (
            <Section id="timeline" title="Timeline">
              <Timeline jobs={jobs} timeZone={settings.timeZone} />
            </Section>
          )}
          {settings.showTasks && (
            <Section id="tasks" title="Agent tasks" count={model.tasks.length}>
              <Tasks model={model} actions={taskActions} timeZone={settings.timeZone} />
            </Section>
          )}
          {settings.showActivity && (
            <Section id="activity" title="Activity">
              <Activity
                events={model.activity}
                timeZone={settings.timeZone}
                limit={settings.activityLimit}
              />
            </Section>
          )}
        </>
      )}
    </div>
  );
}
