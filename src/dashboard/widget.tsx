import * as React from 'react';

import { MainAreaWidget } from '@jupyterlab/apputils';
import { ReactWidget, UseSignal } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';

import { rackIcon } from '../icons';
import { DiamondModel } from '../model';
import { Dashboard } from './Dashboard';
import { DashboardModel } from './model';

export const DASHBOARD_ID = 'diamond-dashboard';

/** Resolves once the sidebar's model has its first answer (or after 5 s): the dashboard's
 * own first request then does not queue behind GET /state on the single-threaded server,
 * and its timeline has the user's jobs. */
function loaded(model: DiamondModel): Promise<void> {
  if (model.status !== 'loading') {
    return Promise.resolve();
  }
  return new Promise(resolve => {
    const done = () => {
      window.clearTimeout(timer);
      model.changed.disconnect(check);
      resolve();
    };
    const check = () => {
      if (model.status !== 'loading') {
        done();
      }
    };
    const timer = window.setTimeout(done, 5000);
    model.changed.connect(check);
  });
}

/** The dashboard's content: polls the queues while shown, redraws on the sidebar
 * model's changes (the user's jobs) and on each new dashboard answer. */
class DashboardContent extends ReactWidget {
  constructor(
    private _model: DiamondModel,
    private _dash: DashboardModel,
    private _openJob: (id: string) => void,
    private _timeZone: () => string,
    private _ready: Promise<unknown>
  ) {
    super();
    this.addClass('jp-diamond-dashboard');
    this.node.setAttribute('data-diamond-dashboard', '');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', 'Diamond dashboard');
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._start();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._start();
  }

  /** Poll while shown, once the application has started and the page is idle (on a page
   * load, JupyterLab's own start-up would otherwise compete with the first answer). */
  private _start(): void {
    void this._ready
      .then(() => loaded(this._model))
      .then(() =>
        // the first idle moment after the start-up (at most 1 s later)
        requestIdleCallback(
          () => {
            if (this.isVisible && !this.isDisposed) {
              this._dash.start();
            }
          },
          { timeout: 1000 }
        )
      );
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this._dash.stop();
  }

  dispose(): void {
    this._dash.dispose();
    super.dispose();
  }

  render(): JSX.Element {
    return (
      <UseSignal signal={this._dash.changed}>
        {() => (
          <UseSignal signal={this._model.changed}>
            {() => (
              <Dashboard
                model={this._model}
                dash={this._dash}
                timeZone={this._timeZone()}
                onOpenJob={this._openJob}
              />
            )}
          </UseSignal>
        )}
      </UseSignal>
    );
  }
}

/** A main-area tab with the dashboard (`#diamond-dashboard`). */
export function createDashboard(
  model: DiamondModel,
  openJob: (id: string) => void,
  timeZone: () => string,
  ready: Promise<unknown>
): MainAreaWidget<ReactWidget> {
  const dash = new DashboardModel(model.settings);
  const content = new DashboardContent(model, dash, openJob, timeZone, ready);
  const widget = new MainAreaWidget({ content });
  widget.id = DASHBOARD_ID;
  widget.title.label = 'Diamond dashboard';
  widget.title.icon = rackIcon;
  widget.title.closable = true;
  return widget;
}
