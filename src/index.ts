import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, MainAreaWidget, WidgetTracker } from '@jupyterlab/apputils';
import { ILauncher } from '@jupyterlab/launcher';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { jobActions, taskActions } from './actions';
import { createDashboard } from './dashboard/widget';
import { watchPageEvents } from './events';
import { rackIcon } from './icons';
import { jobCardFactory } from './jobcard';
import { LoginPrompts } from './login';
import { DiamondModel } from './model';
import { notifyApproval, notifyJobEnd, INotifyTargets } from './notify';
import { installStats } from './stats';
import { DEFAULT_VIEW, DiamondSidebar } from './widget';

const PLUGIN_ID = 'diamond-jupyter:plugin';

namespace CommandIDs {
  export const open = 'diamond:open';
  export const refresh = 'diamond:refresh';
  export const openDashboard = 'diamond:open-dashboard';
}

function reveal(selector: string): void {
  requestAnimationFrame(() => {
    const node = document.querySelector<HTMLElement>(selector);
    node?.scrollIntoView({ block: 'nearest' });
    node?.focus();
  });
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Sidebar for diamond-jupyter: HPC sites, jobs, timeline, activity and agent tasks.',
  autoStart: true,
  optional: [ISettingRegistry, ILayoutRestorer, IRenderMimeRegistry, ILauncher, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null,
    rendermime: IRenderMimeRegistry | null,
    launcher: ILauncher | null,
    palette: ICommandPalette | null
  ) => {
    const { serviceManager, shell, commands } = app;
    const model = new DiamondModel({ serverSettings: serviceManager.serverSettings });
    installStats(model.stats);
    const actions = jobActions(app, model);
    // Notebook job cards: live from this model, whatever became of the kernel.
    rendermime?.addFactory(jobCardFactory(model, actions));
    const sidebar = new DiamondSidebar(model, actions, taskActions(model));
    sidebar.starting = true;
    shell.add(sidebar, 'left', { rank: 650 });
    if (restorer) {
      restorer.add(sidebar, 'diamond-sidebar');
    }
    const targets: INotifyTargets = {
      showJob: id => {
        shell.activateById(sidebar.id);
        model.focusJob(id);
      },
      showLogs: id => {
        const job = model.getJob(id);
        if (job) {
          actions.logs(job);
        }
      },
      showTask: id => {
        shell.activateById(sidebar.id);
        reveal(`[data-diamond-task="${CSS.escape(id)}"]`);
      }
    };
    let notify = true;
    let notifyApprovals = true;

    // Live updates: jupyter_events through /api/events/subscribe.
    const logins = new LoginPrompts(serviceManager.serverSettings);
    // The page's one event socket (JupyterLab's), watched for reconnects.
    const events = watchPageEvents(serviceManager.events, {
      opened: () => model.onStreamOpened(),
      closed: () => model.onStreamClosed()
    });
    events.stream.connect((_, emission) => {
      if (!logins.handle(emission as any)) {
        model.handleEvent(emission as any);
      }
    });
    void logins.check(); // a site that asked before this page listened
    // REST failures and the browser going online say the server was away or is back.
    serviceManager.connectionFailure.connect(() => model.onDisconnect());
    window.addEventListener('online', () => void model.refresh());
    model.jobEnded.connect((_, ended) => {
      if (notify) {
        notifyJobEnd(ended, targets);
      }
    });
    model.approvalNeeded.connect((_, task) => {
      if (notifyApprovals) {
        notifyApproval(task, targets);
      }
    });

    commands.addCommand(CommandIDs.open, {
      label: 'Show Diamond sidebar',
      execute: () => shell.activateById(sidebar.id)
    });
    // The main-area dashboard: one at a time, reopened by the layout restorer on reload.
    const dashboards = new WidgetTracker<MainAreaWidget>({ namespace: 'diamond-dashboard' });
    commands.addCommand(CommandIDs.openDashboard, {
      label: args => (args.isLauncher ? 'Diamond dashboard' : 'Open Diamond dashboard'),
      caption: 'Queues of every site, usage over time, your jobs and workflows on a timeline',
      icon: args => (args.isPalette ? undefined : rackIcon),
      execute: () => {
        let widget = dashboards.currentWidget;
        if (!widget || widget.isDisposed) {
          widget = createDashboard(
            model,
            id => targets.showJob(id),
            () => sidebar.view.timeZone,
            app.restored
          );
          void dashboards.add(widget);
          shell.add(widget, 'main');
        }
        shell.activateById(widget.id);
        return widget;
      }
    });
    sidebar.openDashboard = () => void commands.execute(CommandIDs.openDashboard);
    sidebar.update();
    launcher?.add({
      command: CommandIDs.openDashboard,
      args: { isLauncher: true },
      category: 'Other',
      rank: 1
    });
    palette?.addItem({ command: CommandIDs.openDashboard, category: 'Diamond' });
    palette?.addItem({ command: CommandIDs.open, category: 'Diamond' });
    if (restorer) {
      void restorer.restore(dashboards, {
        command: CommandIDs.openDashboard,
        name: () => 'dashboard'
      });
    }
    commands.addCommand(CommandIDs.refresh, {
      label: 'Reload Diamond sites and jobs',
      execute: () => model.refresh()
    });

    if (settingRegistry) {
      const apply = (s: ISettingRegistry.ISettings) => {
        const c = s.composite as Record<string, any>;
        const d = DEFAULT_VIEW;
        sidebar.view = {
          showSites: c.showSites ?? d.showSites,
          showTimeline: c.showTimeline ?? d.showTimeline,
          showActivity: c.showActivity ?? d.showActivity,
          showTasks: c.showTasks ?? d.showTasks,
          timeZone: c.timeZone ?? d.timeZone,
          activityLimit: c.activityLimit ?? d.activityLimit,
          siteColumns: c.siteColumns ?? d.siteColumns,
          jobsPageSize: c.jobsPageSize ?? d.jobsPageSize
        };
        notify = c.notifyOnJobEnd ?? true;
        notifyApprovals = c.notifyOnApproval ?? true;
      };
      settingRegistry
        .load(PLUGIN_ID)
        .then(s => {
          apply(s);
          s.changed.connect(apply);
        })
        .catch(reason => console.error('diamond-jupyter: failed to load settings', reason));
    }

    void app.restored.then(() => {
      sidebar.starting = false;
      // At the first idle moment after the start-up (at most 1 s later): the plugins that
      // start with JupyterLab would otherwise compete with the answer.
      requestIdleCallback(() => void model.refresh(), { timeout: 1000 });
      model.startHeartbeat();
    });
  }
};

export default plugin;
