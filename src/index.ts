import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { jobActions, taskActions } from './actions';
import { jobCardFactory } from './jobcard';
import { DiamondModel } from './model';
import { notifyApproval, notifyJobEnd, INotifyTargets } from './notify';
import { installStats } from './stats';
import { DEFAULT_VIEW, DiamondSidebar } from './widget';

const PLUGIN_ID = 'diamond-jupyter:plugin';

namespace CommandIDs {
  export const open = 'diamond:open';
  export const refresh = 'diamond:refresh';
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
  optional: [ISettingRegistry, ILayoutRestorer, IRenderMimeRegistry],
  activate: (
    app: JupyterFrontEnd,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null,
    rendermime: IRenderMimeRegistry | null
  ) => {
    const { serviceManager, shell, commands } = app;
    const model = new DiamondModel({ serverSettings: serviceManager.serverSettings });
    installStats(model.stats);
    const actions = jobActions(app, model);
    // Notebook job cards: live from this model, whatever became of the kernel.
    rendermime?.addFactory(jobCardFactory(model, actions));
    const sidebar = new DiamondSidebar(model, actions, taskActions(model));
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
    serviceManager.events.stream.connect((_, emission) => {
      model.handleEvent(emission as any);
    });
    // The event socket reconnects by itself but says nothing; these do.
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
      void model.refresh();
      model.startHeartbeat();
    });
  }
};

export default plugin;
