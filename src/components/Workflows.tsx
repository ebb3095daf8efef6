import * as React from 'react';

import { requestAPI } from '../api';
import { countsText } from '../format';
import { DiamondModel } from '../model';

/** One step as GET /workflows gives it. */
export interface IWorkflowStep {
  name: string;
  site: string | null;
  job: string | null;
  state: string;
  needs?: string[];
  gang?: string | null;
  attempt?: number;
  reason?: string | null;
}

export interface IWorkflow {
  id: string;
  name?: string;
  state: string;
  reason?: string | null;
  steps: IWorkflowStep[];
}

/** Each step's layer in the DAG: 0 for a step that needs none, else 1 + its deepest need. */
export function depths(steps: IWorkflowStep[]): Map<string, number> {
  const needs = new Map(steps.map(s => [s.name, s.needs ?? []]));
  const out = new Map<string, number>();
  const depth = (n: string, seen: Set<string>): number => {
    const known = out.get(n);
    if (known !== undefined) {
      return known;
    }
    const ups = (needs.get(n) ?? []).filter(m => needs.has(m) && !seen.has(m));
    const d = ups.length ? 1 + Math.max(...ups.map(m => depth(m, new Set([...seen, n])))) : 0;
    out.set(n, d);
    return d;
  };
  steps.forEach(s => depth(s.name, new Set()));
  return out;
}

/** A workflow's steps in layers (a step below every step it needs). */
export function Dag({ wf }: { wf: IWorkflow }): JSX.Element {
  const d = depths(wf.steps);
  const layers: IWorkflowStep[][] = [];
  for (const s of wf.steps) {
    const i = d.get(s.name) ?? 0;
    (layers[i] = layers[i] ?? []).push(s);
  }
  return (
    <div className="jp-diamond-dag">
      {layers.map((layer, i) => (
        <div className="jp-diamond-dag-layer" key={i}>
          {layer.map(s => (
            <div
              key={s.name}
              className={`jp-diamond-dag-step jp-diamond-state-${s.state.toLowerCase()}`}
              data-diamond-step={s.name}
              data-diamond-state={s.state}
              title={[s.needs?.length ? `after ${s.needs.join(', ')}` : '', s.gang ? `gang ${s.gang}` : '']
                .filter(Boolean)
                .join(' · ')}
            >
              <strong>{s.name}</strong>
              <span className="jp-diamond-muted"> {s.site ?? '-'}</span>
              <div className="jp-diamond-dag-state">{s.state}</div>
              {s.job && <code className="jp-diamond-muted">{s.job}</code>}
              {s.reason && (
                // why it moved, waits or was left to another server: read without a
                // pointer (a title shows only on hover, never on a keyboard or in print)
                <div className="jp-diamond-dag-reason" data-diamond-step-reason="">
                  {s.reason}
                </div>
              )}
            </div>
          ))}
        </div>
      ))}
    </div>
  );
}

/** The latest `limit` workflows (null until first read), read again when a workflow event
 * arrives; `error` says why the last read failed. */
export function useWorkflows(
  model: DiamondModel,
  limit: number
): { workflows: IWorkflow[] | null; error: string | null } {
  const [workflows, setWorkflows] = React.useState<IWorkflow[] | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  const seq = model.workflowSeq;
  React.useEffect(() => {
    let live = true;
    const timer = setTimeout(() => {
      requestAPI<{ workflows: IWorkflow[] }>(`workflows?limit=${limit}`, {}, model.settings)
        .then(r => {
          if (live) {
            setWorkflows(r.workflows ?? []);
            setError(null);
          }
        })
        .catch(e => {
          if (live) {
            setError(String(e?.message ?? e));
          }
        });
    }, 200); // a burst of step events: one read
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [seq, model.settings, limit]);
  return { workflows, error };
}

/** How many of `steps` are in each state. */
function stepStates(steps: IWorkflowStep[]): Record<string, number> {
  // no prototype: a state named `__proto__` (the wire's text) is counted like any other
  const states: Record<string, number> = Object.create(null);
  for (const s of steps) {
    states[s.state] = (states[s.state] ?? 0) + 1;
  }
  return states;
}

/** Workflows, each `[data-diamond-workflow=ID]` with its DAG; `className` is added to the
 * list's. */
export function WorkflowList(props: { workflows: IWorkflow[]; className?: string }): JSX.Element {
  if (props.workflows.length === 0) {
    return <p className="jp-diamond-muted">No workflows yet.</p>;
  }
  return (
    <ol className={props.className ? `jp-diamond-list ${props.className}` : 'jp-diamond-list'}>
      {props.workflows.map(wf => (
        <li key={wf.id} data-diamond-workflow={wf.id} data-diamond-state={wf.state}>
          <div>
            <strong>{wf.name ?? wf.id}</strong> <code>{wf.id}</code>{' '}
            <span className={`jp-diamond-state-${wf.state.toLowerCase()}`}>{wf.state}</span>
          </div>
          {/* how far it got, said in one line: a graph of many steps is read a box at a time */}
          <div className="jp-diamond-muted" data-diamond-step-count={wf.steps.length}>
            {countsText(wf.steps.length, stepStates(wf.steps), 'step')}
          </div>
          {wf.reason && (
            <p className="jp-diamond-dag-reason" data-diamond-workflow-reason="">
              {wf.reason}
            </p>
          )}
          <Dag wf={wf} />
        </li>
      ))}
    </ol>
  );
}

/** The latest workflows, each as its DAG; read again when a workflow event arrives. */
export function Workflows(props: { model: DiamondModel; limit?: number }): JSX.Element {
  const { workflows, error } = useWorkflows(props.model, props.limit ?? 5);
  if (error) {
    return <p className="jp-diamond-muted">Workflows unavailable: {error}</p>;
  }
  if (workflows === null) {
    return <p className="jp-diamond-muted">Loading…</p>;
  }
  return <WorkflowList workflows={workflows} />;
}
