import { Notification } from '@jupyterlab/apputils';

import { IJobEnded } from './model';
import { ITask } from './types';

export interface INotifyTargets {
  showJob(id: string): void;
  showLogs(id: string): void;
  showTask(id: string): void;
}

/** A toast when a job ends, with links to its card and its logs. */
export function notifyJobEnd({ job, previous }: IJobEnded, to: INotifyTargets): string {
  const what = `${job.name || job.id} on ${job.site}`;
  const exit = job.exit_code !== null && job.exit_code !== undefined ? ` (exit ${job.exit_code})` : '';
  const actions = [
    { label: 'Show job', callback: () => to.showJob(job.id) },
    { label: 'Logs', callback: () => to.showLogs(job.id) }
  ];
  switch (job.state) {
    case 'COMPLETED':
      return Notification.success(`Job ${what} completed${exit}.`, { autoClose: 8000, actions });
    case 'CANCELLED':
      return Notification.warning(`Job ${what} was cancelled.`, { autoClose: 8000, actions });
    default: {
      const why = job.reason ? `: ${job.reason}` : '';
      const was = previous ? ` (was ${previous})` : '';
      return Notification.error(`Job ${what} ended ${job.state}${exit}${why}${was}.`, {
        autoClose: false,
        actions
      });
    }
  }
}

/** A toast when an agent task waits for the user's approval of its plan. */
export function notifyApproval(task: ITask, to: INotifyTargets): string {
  const what = task.prompt ? `“${task.prompt.slice(0, 60)}”` : task.id;
  return Notification.info(`Agent task ${what} waits for your approval.`, {
    autoClose: false,
    actions: [{ label: 'Show plan', callback: () => to.showTask(task.id) }]
  });
}
