/**
 * Agent tasks on the wire (pure functions): normalising the server's task shapes and
 * applying agent-step events. See diamond_jupyter/agent/tasks.py for the states and
 * diamond_jupyter/server/views.py (agent_payload) for the event payload.
 */
import { IPending, IStep, ITask } from './types';

/** Tasks in these states run no more. */
export const TASK_FINAL: ReadonlySet<string> = new Set(['done', 'failed', 'rejected']);

const AWAITING = /^awaiting[_-]approval$/i;

/** True when an agent task waits for the user to approve its plan. */
export function awaitsApproval(task: { state: string } | undefined): boolean {
  return !!task && AWAITING.test(task.state);
}

function obj(v: unknown): Record<string, any> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : null;
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function pendingOf(v: unknown): IPending | null {
  const p = obj(v);
  if (!p || (p.plan === undefined && p.tool === undefined)) {
    return null;
  }
  return {
    tool: str(p.tool),
    plan: p.plan ?? null,
    input: obj(p.input),
    plan_sha256: str(p.plan_sha256)
  };
}

/**
 * A task from GET /state (the store record: `data.pending`, `data.answer`) or from
 * GET/POST tasks/{id} (flattened: `pending`, `answer` at the top, no `data`).
 */
export function normalizeTask(raw: Record<string, any>): ITask {
  const data = obj(raw.data) ?? {};
  const at = str(raw.updated_at) ?? str(raw.created_at) ?? new Date().toISOString();
  return {
    id: String(raw.id),
    state: str(raw.state) ?? 'running',
    prompt: str(raw.prompt) ?? '',
    data,
    waiting_on: Array.isArray(raw.waiting_on) ? raw.waiting_on.map(String) : [],
    created_at: str(raw.created_at) ?? at,
    updated_at: at,
    pending: pendingOf(raw.pending ?? data.pending),
    answer: str(raw.answer ?? data.answer),
    error: str(raw.error ?? data.error)
  };
}

/** The input of the latest call of `tool` among `steps` (the plan's command, arguments). */
function lastInput(steps: IStep[], tool: string | null): Record<string, any> | null {
  for (let i = steps.length - 1; i >= 0; i--) {
    const s = steps[i];
    if (s.step_kind === 'tool_call' && (!tool || s.tool === tool)) {
      return obj(s.data?.input);
    }
  }
  return null;
}

/**
 * The task after one agent-step payload. `steps` are the task's steps so far. Only
 * "agent.step" events are steps; "agent.task" and "agent.approval" carry the task's new
 * state, waiting_on and answer/error/plan. (A step's own `state`, e.g. the job state in a
 * resume step, is not the task's.)
 */
export function applyAgentEvent(
  old: ITask | undefined,
  steps: IStep[],
  ev: IStep
): { task: ITask; step: IStep | null } {
  const id = ev.task_id!;
  const data = ev.data ?? {};
  const now = ev.at ?? new Date().toISOString();
  const task: ITask = {
    id,
    state: 'running',
    prompt: '',
    data: {},
    waiting_on: [],
    created_at: now,
    updated_at: now,
    pending: null,
    answer: null,
    error: null,
    ...old
  };
  task.updated_at = now;
  if (ev.kind === 'agent.step') {
    if (ev.step_kind === 'prompt' && !task.prompt) {
      task.prompt = ev.text ?? str(data.text) ?? '';
    }
    if (ev.step_kind === 'approval') {
      const tool = ev.tool ?? str(data.tool);
      task.pending = {
        tool,
        plan: data.plan ?? null,
        input: lastInput(steps, tool),
        plan_sha256: str(data.plan_sha256)
      };
    }
    return { task, step: ev };
  }
  const state = ev.state ?? str(data.state);
  if (state) {
    task.state = state;
  }
  if (Array.isArray(data.waiting_on)) {
    task.waiting_on = data.waiting_on.map(String);
  }
  if (typeof data.answer === 'string') {
    task.answer = data.answer;
  }
  if (typeof data.error === 'string') {
    task.error = data.error;
  }
  if (data.plan !== undefined && data.plan !== null) {
    const tool = str(data.tool) ?? task.pending?.tool ?? null;
    task.pending = {
      tool,
      plan: data.plan,
      input: task.pending?.input ?? lastInput(steps, tool),
      plan_sha256: str(data.plan_sha256)
    };
  }
  return { task, step: null };
}
