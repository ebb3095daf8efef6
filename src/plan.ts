/**
 * A costly action's plan as shown for approval (pure functions). The server makes the plan
 * (diamond_jupyter/federation_plan.py): for a submit the site, partition, the fully rendered
 * batch script and its sha256, every job field, the data movements and the estimated cost.
 * Exactly that runs once approved.
 */

export interface IPlanMove {
  direction: string;
  source: string;
  destination: string;
  size: string;
  toServer: boolean;
}

export interface IPlanView {
  head: string;
  changed: string | null;
  askedBecause: string | null;
  facts: [string, string][];
  cost: string | null;
  moves: IPlanMove[] | null;
  fields: [string, string][] | null;
  unset: string[];
  warnings: string[];
  script: string | null;
  sha256: string | null;
  placement: string | null;
}

const SHOWN_APART = new Set([
  'action',
  'site',
  'scheduler',
  'partition',
  'script',
  'script_sha256',
  'spec',
  'data_movements',
  'cost',
  'placement',
  'changed',
  'asked_because',
  'warnings',
  'submission'
]);

function text(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function empty(v: unknown): boolean {
  return (
    v === null ||
    v === undefined ||
    v === '' ||
    (Array.isArray(v) && v.length === 0) ||
    (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0)
  );
}

function costLine(cost: unknown): string | null {
  if (!cost || typeof cost !== 'object') {
    return null;
  }
  const c = cost as Record<string, any>;
  if (c.estimate === null || c.estimate === undefined) {
    return `unknown (${c.why ?? 'no estimate'}); charge factor ${c.charge_factor}`;
  }
  const most = typeof c.at_most === 'number' ? ` (at most ${c.at_most} with the walltime)` : '';
  return `${c.formula ?? c.estimate}${most}`;
}

/** The plan's parts, in the order they are shown. */
export function planView(tool: string | null, plan: Record<string, any> | string | null): IPlanView {
  const view: IPlanView = {
    head: tool ?? 'plan',
    changed: null,
    askedBecause: null,
    facts: [],
    cost: null,
    moves: null,
    fields: null,
    unset: [],
    warnings: [],
    script: null,
    sha256: null,
    placement: null
  };
  if (typeof plan === 'string' || !plan) {
    view.facts = plan ? [['plan', plan]] : [];
    return view;
  }
  const action = String(plan.action ?? tool ?? 'act');
  view.head =
    action === 'submit'
      ? `submit${plan.hold === true ? ' held' : ''} to ${plan.site} (${plan.scheduler ?? '?'}), partition ` +
        `${plan.partition ?? '(the scheduler default)'}`
      : `${action}${plan.site ? ` on ${plan.site}` : ''}`;
  view.changed = typeof plan.changed === 'string' ? plan.changed : null;
  view.askedBecause = typeof plan.asked_because === 'string' ? plan.asked_because : null;
  if (tool) {
    view.facts.push(['tool', tool]);
  }
  for (const [k, v] of Object.entries(plan)) {
    if (!SHOWN_APART.has(k) && !empty(v)) {
      view.facts.push([k, text(v)]);
    }
  }
  view.cost = costLine(plan.cost);
  if (Array.isArray(plan.data_movements)) {
    view.moves = plan.data_movements.map((m: Record<string, any>) => ({
      direction: String(m.direction ?? ''),
      source: String(m.source ?? ''),
      destination: String(m.destination ?? ''),
      size: String(m.size ?? 'unknown'),
      toServer: String(m.destination ?? '').startsWith('/')
    }));
  }
  if (plan.spec && typeof plan.spec === 'object') {
    view.fields = [];
    for (const [k, v] of Object.entries(plan.spec as Record<string, unknown>)) {
      if (empty(v)) {
        view.unset.push(k);
      } else {
        view.fields.push([k, text(v)]);
      }
    }
  }
  view.warnings = Array.isArray(plan.warnings) ? plan.warnings.map(String) : [];
  view.script = typeof plan.script === 'string' ? plan.script : null;
  view.sha256 = typeof plan.script_sha256 === 'string' ? plan.script_sha256 : null;
  view.placement = typeof plan.placement === 'string' ? plan.placement : null;
  return view;
}
