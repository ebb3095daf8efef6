import * as React from 'react';

import { MainAreaWidget } from '@jupyterlab/apputils';
import { ReactWidget, UseSignal } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';

import { IJobActions } from './components/Jobs';
import { SITE_COLUMNS } from './components/Sites';
import { ITaskActions } from './components/Tasks';
import { LogView } from './components/LogView';
import { IViewSettings, Sidebar } from './components/Sidebar';
import { domId } from './format';
import { rackIcon } from './icons';
import { DiamondModel } from './model';

export const DEFAULT_VIEW: IViewSettings = {
  showSites: true,
  showTimeline: true,
  showActivity: true,
  showTasks: true,
  timeZone: '',
  activityLimit: 50,
  siteColumns: SITE_COLUMNS,
  jobsPageSize: 50
};

/** The left-sidebar panel, `#diamond-sidebar`. */
export class DiamondSidebar extends ReactWidget {
  constructor(
    readonly model: DiamondModel,
    private _actions: IJobActions,
    private _taskActions: ITaskActions
  ) {
    super();
    this.id = 'diamond-sidebar';
    this.addClass('jp-diamond-sidebar');
    this.title.icon = rackIcon;
    this.title.caption = 'Diamond';
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', 'Diamond HPC sites and jobs');
  }

  get view(): IViewSettings {
    return this._view;
  }
  set view(value: IViewSettings) {
    this._view = value;
    this.update();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    // "On open"; on a page load the panel is shown while JupyterLab is still starting:
    // then the plugin's refresh once it has started is the one (nothing competes with it).
    if (!this.starting) {
      void this.model.refresh();
    }
  }

  render(): JSX.Element {
    return (
      <UseSignal signal={this.model.changed}>
        {() => (
          <Sidebar
            model={this.model}
            settings={this._view}
            actions={this._actions}
            taskActions={this._taskActions}
            onOpenDashboard={this.openDashboard ?? undefined}
          />
        )}
      </UseSignal>
    );
  }

  /** True (set by the plugin) until JupyterLab has started. */
  starting = false;

  /** Set by the plugin: opens the main-area dashboard. */
  openDashboard: (() => void) | null = null;

  private _view: IViewSettings = DEFAULT_VIEW;
}

/** A main-area tab with the logs of one job. */
export function createLogWidget(
  jobId: string,
  label: string
): MainAreaWidget<ReactWidget> {
  const content = ReactWidget.create(<LogView jobId={jobId} />);
  const widget = new MainAreaWidget({ content });
  widget.id = domId('diamond-logs-', jobId);
  widget.title.label = `Logs: ${label}`;
  widget.title.icon = rackIcon;
  widget.title.closable = true;
  return widget;
}
