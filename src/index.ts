import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { cancelJob } from './api';
import { IJobActions } from './components/Jobs';
import { DiamondModel, IJobEnded } from './model';
import { IJob } from './types';
import { createLogWidget, DEFAULT_VIEW, DiamondSidebar } from './widget';

const PLUGIN_ID = 'diamond-jupyter:plugin';

namespace CommandIDs {
  export const open = 'diamond:open';
  export const refresh = 'diamond:refresh';
}

function notifyEnd({ job, previous }: IJobEnded): void {
  const what = `${job.name || job.id} on ${job.site}`;
  const detail = job.exit_code !== null && job.exit_code !== undefined
    ? ` (exit ${job.exit_code})`
    : '';
  const opts = { autoClose: 8000 };
  switch (job.state) {
    case 'COMPLETED':
      Notification.success(`Job ${what} completed${detail}.`, opts);
      break;
    case 'CANCELLED':
      Notification.warning(`Job ${what} was cancelled.`, opts);
      break;
    default: {
      const why = job.reason ? `: ${job.reason}` : '';
      Notification.error(
        `Job ${what} ended ${job.state}${detail}${why}` +
          (previous ? ` (was ${previous}).` : '.'),
        { autoClose: false }
      );
    }
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Sidebar for diamond-jupyter: HPC sites, jobs and timeline.',
  autoStart: true,
  optional: [ISettingRegistry, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null
  ) => {
    const { serviceManager, shell, commands } = app;
    const model = new DiamondModel({
      serverSettings: serviceManager.serverSettings
    });
    let notify = true;

    const actions: IJobActions = {
      cancel: async (job: IJob) => {
        const label = job.name || job.id;
        const result = await showDialog({
          title: 'Cancel job?',
          body: `Cancel ${label} (${job.id}) on ${job.site}? This cannot be undone.`,
          buttons: [
            Dialog.cancelButton({ label: 'Keep' }),
            Dialog.warnButton({ label: 'Cancel job' })
          ]
        });
        if (!result.button.accept) {
          return;
        }
        try {
          const updated = await cancelJob(job.id, serviceManager.serverSettings);
          if (updated && typeof updated === 'object' && updated.id) {
            model.updateJob(updated);
          }
        } catch (err) {
          Notification.error(
            `Could not cancel ${label}: ${(err as Error).message}`,
            { autoClose: false }
          );
        }
      },
      logs: (job: IJob) => {
        const existing = Array.from(shell.widgets('main')).find(
          w => w.id === `diamond-logs-${job.id.replace(/[^\w-]/g, '_')}`
        );
        if (existing) {
          shell.activateById(existing.id);
          return;
        }
        const widget = createLogWidget(job.id, job.name || job.id);
        shell.add(widget, 'main');
        shell.activateById(widget.id);
      },
      openOrigin: (job: IJob) => {
        if (job.origin?.path) {
          void commands.execute('docmanager:open', { path: job.origin.path });
        }
      }
    };

    const sidebar = new DiamondSidebar(model, actions);
    shell.add(sidebar, 'left', { rank: 650 });
    if (restorer) {
      restorer.add(sidebar, 'diamond-sidebar');
    }

    // Live updates: jupyter_events through /api/events/subscribe.
    serviceManager.events.stream.connect((_, emission) => {
      model.handleEvent(emission as any);
    });
    // The event socket reconnects by itself but says nothing; these do.
    serviceManager.connectionFailure.connect(() => model.onDisconnect());
    window.addEventListener('online', () => void model.refresh());
    model.jobEnded.connect((_, ended) => {
      if (notify) {
        notifyEnd(ended);
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
        sidebar.view = {
          showTimeline: c.showTimeline ?? DEFAULT_VIEW.showTimeline,
          showActivity: c.showActivity ?? DEFAULT_VIEW.showActivity,
          timeZone: c.timeZone ?? DEFAULT_VIEW.timeZone,
          activityLimit: c.activityLimit ?? DEFAULT_VIEW.activityLimit
        };
        notify = c.notifyOnJobEnd ?? true;
      };
      settingRegistry
        .load(PLUGIN_ID)
        .then(s => {
          apply(s);
          s.changed.connect(apply);
        })
        .catch(reason =>
          console.error('diamond-jupyter: failed to load settings', reason)
        );
    }

    void app.restored.then(() => model.refresh());
  }
};

export default plugin;
