import { JupyterFrontEnd } from '@jupyterlab/application';
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { PageConfig } from '@jupyterlab/coreutils';

import { awaitsApproval, normalizeTask } from './agent';
import { cancelJob, DiamondApiError, decideTask, fetchResults, releaseJob } from './api';
import { ICardActions } from './jobcard';
import { ITaskActions } from './components/Tasks';
import { DiamondModel } from './model';
import { IFetchResult, IJob, IReleaseOutcome, ITask } from './types';
import { domId } from './format';
import { createLogWidget } from './widget';

/** Just enough of a NotebookPanel, without depending on @jupyterlab/notebook. */
interface INotebookPanelLike {
  id: string;
  context?: { ready: Promise<void> };
  revealed?: Promise<void>;
  content?: {
    widgets: ReadonlyArray<{ model?: { id?: string } }>;
    activeCellIndex: number;
    scrollToItem?: (index: number, align?: string) => Promise<void>;
  };
}

/** A server path relative to the server root (origins may hold absolute paths). */
export function relativePath(path: string): string {
  const root = PageConfig.getOption('serverRoot').replace(/\/+$/, '');
  if (root && path.startsWith(root + '/')) {
    return path.slice(root.length + 1);
  }
  return path.replace(/^\/+/, '');
}

function showLogs(app: JupyterFrontEnd, job: IJob): void {
  const id = domId('diamond-logs-', job.id);
  const existing = Array.from(app.shell.widgets('main')).find(w => w.id === id);
  if (existing) {
    app.shell.activateById(id);
    return;
  }
  const widget = createLogWidget(job.id, job.name || job.id);
  app.shell.add(widget, 'main');
  app.shell.activateById(widget.id);
}

/** Open the notebook that submitted `job`, then activate and scroll to its cell. */
async function openCell(app: JupyterFrontEnd, job: IJob): Promise<void> {
  const origin = job.origin;
  if (!origin?.path) {
    return;
  }
  const panel = (await app.commands.execute('docmanager:open', {
    path: relativePath(origin.path)
  })) as INotebookPanelLike | undefined;
  if (!panel || !origin.cell_id) {
    return;
  }
  await panel.context?.ready;
  await panel.revealed;
  const nb = panel.content;
  const index = nb ? nb.widgets.findIndex(c => c.model?.id === origin.cell_id) : -1;
  if (!nb || index < 0) {
    Notification.warning(`The cell that submitted ${job.id} is no longer in ${origin.path}.`, {
      autoClose: 6000
    });
    return;
  }
  app.shell.activateById(panel.id);
  nb.activeCellIndex = index;
  await nb.scrollToItem?.(index, 'center');
}

export function jobActions(app: JupyterFrontEnd, model: DiamondModel): ICardActions {
  const settings = model.settings;
  return {
    cancel: async (job: IJob) => {
      const label = job.name || job.id;
      const result = await showDialog({
        title: 'Cancel job?',
        body: `Cancel ${label} (${job.id}) on ${job.site}? This cannot be undone.`,
        buttons: [Dialog.cancelButton({ label: 'Keep' }), Dialog.warnButton({ label: 'Cancel job' })]
      });
      if (!result.button.accept) {
        return;
      }
      try {
        const updated = await cancelJob(job.id, settings);
        if (updated && typeof updated === 'object' && updated.id) {
          model.updateJob(updated);
        }
      } catch (err) {
        Notification.error(`Could not cancel ${label}: ${(err as Error).message}`, {
          autoClose: false
        });
      }
    },
    release: async (job: IJob): Promise<IReleaseOutcome> => {
      const label = job.name || job.id;
      try {
        const updated = await releaseJob(job.id, settings);
        const waiting = updated?.release_waiting ?? null;
        if (updated && typeof updated === 'object' && updated.id) {
          const { release_waiting: _said, ...fresh } = updated;
          model.updateJob(fresh);
        }
        return waiting ? { state: 'kept', message: waiting } : { state: 'sent', message: null };
      } catch (err) {
        const message = `Could not release ${label}: ${(err as Error).message}`;
        Notification.error(message, { autoClose: false });
        return { state: 'refused', message };
      }
    },
    logs: (job: IJob) => showLogs(app, job),
    fetch: async (job: IJob): Promise<IFetchResult | null> => {
      const label = job.name || job.id;
      const id = Notification.emit(`Fetching the results of ${label}…`, 'in-progress', {
        autoClose: false
      });
      try {
        const r = await fetchResults(job.id, settings);
        Notification.update({
          id,
          type: 'success',
          message: `Fetched ${r.paths.length} file(s) of ${label} to ${r.dest}.`,
          autoClose: 10000,
          actions: [
            {
              label: 'Show files',
              callback: () => void app.commands.execute('filebrowser:go-to-path', { path: r.dest })
            }
          ]
        });
        return r;
      } catch (err) {
        Notification.update({
          id,
          type: 'error',
          message: `Could not fetch ${label}: ${(err as Error).message}`,
          autoClose: false
        });
        return null;
      }
    },
    open: (path: string) => {
      app.commands.execute('docmanager:open', { path }).catch(err =>
        Notification.error(`Could not open ${path}: ${(err as Error).message}`)
      );
    },
    openOrigin: (job: IJob) => {
      openCell(app, job).catch(err =>
        Notification.error(`Could not open ${job.origin?.path}: ${(err as Error).message}`)
      );
    }
  };
}

export function taskActions(model: DiamondModel): ITaskActions {
  return {
    decide: async (task: ITask, decision: 'approve' | 'reject') => {
      const shown = task.pending?.plan_sha256 ?? null;
      if (decision === 'approve' && !shown) {
        // never approve by task id alone: the task may await another plan than this one
        const refusal =
          `Not approved: the plan shown for ${task.id} came without its sha256 (an older ` +
          `server?), so the sidebar cannot name it. Use %diamond approve ${task.id} --plan ` +
          'SHA256 in a notebook.';
        Notification.error(refusal, { autoClose: false });
        return refusal;
      }
      try {
        const updated = await decideTask(task.id, decision, shown, model.settings);
        // The server's events usually came first; only fill in what they did not say yet.
        if (awaitsApproval(model.getTask(task.id)) && updated && typeof updated === 'object') {
          const t = normalizeTask(updated as Record<string, any>);
          model.updateTask(task.id, { state: t.state, answer: t.answer ?? null });
        }
        Notification.success(`Plan of ${task.id} ${decision === 'approve' ? 'approved' : 'rejected'}.`, {
          autoClose: 5000
        });
        return null;
      } catch (err) {
        const e = err as DiamondApiError;
        const refusal =
          e.status === 404
            ? `This server cannot ${decision} plans yet (POST tasks/${task.id}/${decision} ` +
              `returned 404). Use %diamond approve ${task.id} in a notebook.`
            : `Could not ${decision} ${task.id}: ${e.message}`;
        Notification.error(refusal, { autoClose: false });
        return refusal;
      }
    }
  };
}
