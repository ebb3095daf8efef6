import * as React from 'react';

import { planView } from '../plan';
import { IPending } from '../types';

/**
 * A plan awaiting approval, every part visible: what runs where, why it is asked (again),
 * the estimated cost, the data movements, every job field and the rendered batch script.
 */
export function PlanView(props: { taskId: string; pending: IPending }): JSX.Element {
  const v = planView(props.pending.tool, props.pending.plan);
  return (
    <div className="jp-diamond-plan-view" data-diamond-plan={props.taskId}>
      <div className="jp-diamond-plan-head" data-diamond-plan-head>
        {v.head}
      </div>
      {v.changed && (
        <div className="jp-diamond-plan-alert" data-diamond-plan-changed>
          Asked again: {v.changed}
        </div>
      )}
      {v.askedBecause && (
        <div className="jp-diamond-plan-alert" data-diamond-plan-why>
          Why asked: {v.askedBecause}
        </div>
      )}
      {v.facts.length > 0 && (
        <div className="jp-diamond-plan-facts">
          {v.facts.map(([k, val]) => (
            <div key={k}>
              {k}: {val}
            </div>
          ))}
        </div>
      )}
      {v.cost && <div data-diamond-plan-cost>estimated cost: {v.cost}</div>}
      {v.moves && (
        <div data-diamond-plan-moves>
          data movements:{v.moves.length === 0 ? ' none' : ''}
          <ul className="jp-diamond-plan-moves">
            {v.moves.map((m, i) => (
              <li key={i}>
                {m.direction} <code>{m.source}</code> ({m.size}) → <code>{m.destination}</code>
                {m.toServer && <strong> [this server]</strong>}
              </li>
            ))}
          </ul>
        </div>
      )}
      {v.fields && (
        <div data-diamond-plan-fields>
          job fields:
          <pre className="jp-diamond-plan">
            {v.fields.map(([k, val]) => `${k}: ${val}`).join('\n')}
            {v.unset.length > 0 ? `\n(not set: ${v.unset.join(', ')})` : ''}
          </pre>
        </div>
      )}
      {v.warnings.map((w, i) => (
        <div key={i} className="jp-diamond-plan-alert">
          warning: {w}
        </div>
      ))}
      {v.script !== null && (
        <div>
          batch script{v.sha256 ? ` (sha256 ${v.sha256.slice(0, 16)}…)` : ''}:
          <pre className="jp-diamond-plan jp-diamond-plan-script" data-diamond-plan-script={props.taskId}>
            {v.script}
          </pre>
        </div>
      )}
      {v.placement && (
        <div>
          placement:
          <pre className="jp-diamond-plan">{v.placement}</pre>
        </div>
      )}
    </div>
  );
}
