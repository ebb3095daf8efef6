import * as React from 'react';

import { awaitsApproval } from '../agent';
import { fmtTime } from '../format';
import { DiamondModel } from '../model';
import { ITask } from '../types';
import { PlanView } from './Plan';

export interface ITaskActions {
  /** Approve or reject the plan shown; the server's refusal (why), or null when done. */
  decide(task: ITask, decision: 'approve' | 'reject'): Promise<string | null>;
}

function TaskCard(props: {
  task: ITask;
  model: DiamondModel;
  actions: ITaskActions;
  timeZone: string;
}): JSX.Element {
  const { task, model, actions, timeZone } = props;
  const [busy, setBusy] = React.useState(false);
  const [refusal, setRefusal] = React.useState<string | null>(null);
  const steps = model.steps(task.id);
  const waiting = awaitsApproval(task);
  const decide = (d: 'approve' | 'reject') => {
    setBusy(true);
    setRefusal(null);
    void actions
      .decide(task, d)
      .then(setRefusal)
      .finally(() => setBusy(false));
  };
  return (
    <li className="jp-diamond-task" data-diamond-task={task.id} data-diamond-task-state={task.state}>
      <div className="jp-diamond-job-main">
        <span className="jp-diamond-badge">{task.state}</span>
        <span className="jp-diamond-job-name" dir="auto">
          {task.prompt || task.id}
        </span>
      </div>
      <div className="jp-diamond-muted">
        {task.id} · updated {fmtTime(task.updated_at, timeZone)}
        {task.waiting_on.length > 0 && ` · waiting on ${task.waiting_on.join(', ')}`}
      </div>
      {steps.length > 0 && (
        <ol className="jp-diamond-steps" aria-label={`Steps of ${task.id}`}>
          {steps.slice(-8).map((s, i) => (
            <li key={s.seq ?? i}>
              <span className="jp-diamond-event-kind">{s.step_kind ?? s.kind}</span>{' '}
              {s.tool ? <code>{s.tool}</code> : null} {s.text ?? ''}
            </li>
          ))}
        </ol>
      )}
      {task.pending && (
        <details open={waiting}>
          <summary>{waiting ? 'Plan waiting for your approval' : 'Plan'}</summary>
          <PlanView taskId={task.id} pending={task.pending} />
        </details>
      )}
      {task.answer && (
        <pre className="jp-diamond-plan" data-diamond-answer={task.id}>
          {task.answer}
        </pre>
      )}
      {task.error && (
        <pre className="jp-diamond-plan jp-diamond-task-error" data-diamond-task-error={task.id}>
          {task.error}
        </pre>
      )}
      {refusal && (
        <div className="jp-diamond-plan-alert" role="alert" data-diamond-task-refusal={task.id}>
          {refusal}
        </div>
      )}
      {waiting && (
        <div className="jp-diamond-job-actions">
          <button
            className="jp-mod-styled jp-mod-accept jp-diamond-small-button"
            disabled={busy}
            aria-label={`Approve the plan of ${task.id}`}
            onClick={() => decide('approve')}
          >
            Approve
          </button>
          <button
            className="jp-mod-styled jp-mod-warn jp-diamond-small-button"
            disabled={busy}
            aria-label={`Reject the plan of ${task.id}`}
            onClick={() => decide('reject')}
          >
            Reject
          </button>
        </div>
      )}
    </li>
  );
}

/** The agent's tasks: steps, a plan waiting for approval, results. */
export function Tasks(props: {
  model: DiamondModel;
  actions: ITaskActions;
  timeZone: string;
}): JSX.Element {
  const tasks = props.model.tasks;
  if (tasks.length === 0) {
    return <p className="jp-diamond-muted">No agent tasks. Ask with <code>%%diamond ask</code>.</p>;
  }
  return (
    <ul className="jp-diamond-list" aria-label="Agent tasks">
      {tasks.slice(0, 20).map(t => (
        <TaskCard key={t.id} task={t} model={props.model} actions={props.actions} timeZone={props.timeZone} />
      ))}
    </ul>
  );
}
