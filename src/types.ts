/**
 * Wire types shared with the server extension (GET /diamond/api/state and
 * the jupyter_events payloads). Keep in sync with diamond_jupyter/server.
 */

export type JobState =
  | 'PENDING'
  | 'RUNNING'
  | 'COMPLETED'
  | 'FAILED'
  | 'CANCELLED'
  | 'TIMEOUT'
  | 'UNKNOWN';

export const TERMINAL_STATES: ReadonlySet<string> = new Set([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT'
]);

export interface IPartition {
  name: string;
  max_time_s: number | null;
  total_nodes: number | null;
  default: boolean;
}

export interface ISiteRow {
  name: string;
  scheduler: string;
  reachable: boolean;
  error: string | null;
  /** Reachable, but its whole queue could not be read: why (pending and running are null). */
  queue_error?: string | null;
  /** The first records of the scheduler's outputs left out of the site's view (the
   * scheduler's text: shown as text), and how many there are. */
  warnings?: string[];
  warnings_total?: number;
  nodes_total: number | null;
  nodes_free: number | null;
  cpus_total: number | null;
  cpus_free: number | null;
  gpus_total: number | null;
  gpus_free: number | null;
  pending: number | null;
  running: number | null;
  my_jobs: number | null;
  typical_start_s: number | null;
  partitions: IPartition[];
  metadata: Record<string, unknown>;
}

export interface IJob {
  id: string;
  site: string;
  native_id: string;
  name: string;
  state: JobState | string;
  submitted_at: string | null;
  started_at: string | null;
  ended_at: string | null;
  exit_code: number | null;
  reason: string | null;
  placement: IPlacement | null;
  origin: { path?: string | null; cell_id?: string | null } | null;
  /** the latest job-attention event (stuck, walltime, ...), while it still applies */
  attention?: IAttention | null;
  /** The start its placement predicted (the server's job JSON); null for an explicit site. */
  predicted_start?: IPredictedStart | null;
  /** A submit whose answer was lost: where the server's search for its job stands. */
  lookout?: ILookout | null;
  /** A job array's tasks counted by state (its scheduler listed them one by one: a Flux
   * array runs a job per task); null or absent for a job that is not an array. */
  array_tasks?: IArrayTasks | null;
  /** What it waits for: only in GET jobs/{id} (Federation.dependencies). */
  depends_on?: IJobDependency[];
}

export interface IArrayTasks {
  total: number;
  /** how many tasks are in each state (only the states some task is in) */
  states: Record<string, number>;
}

/** One thing a job waits for: a scheduler dependency (`type` afterok, afterany, afternotok,
 * after, aftercorr) or, for a workflow step, an upstream step its workflow holds it behind
 * (`type` "workflow"); `never`: it can never be satisfied. */
export interface IJobDependency {
  job: string | null;
  type: string;
  satisfied: boolean;
  never: boolean;
  state?: string | null;
  step?: string | null;
  /** the one task of the array job `job` waited for (`afterok:123_4`: task 4 of 123) */
  task?: string | null;
  /** that task's own state as its scheduler last listed it (null: unknown yet) */
  task_state?: string | null;
  /** aftercorr: how the tasks waited for stand (`2 satisfied, 1 waiting; never: 3 FAILED`) */
  tasks?: string | null;
}

/** What a release asked from the sidebar came to: sent to the scheduler, kept until the
 * job's stage-in has brought its input (`message`: the server's release_waiting), or
 * refused (`message`: why). */
export interface IReleaseOutcome {
  state: 'sent' | 'kept' | 'refused';
  message: string | null;
}

/** The server's search for the job of a submit whose answer was lost (Federation.lookout). */
export interface ILookout {
  state: 'looking' | 'found' | 'never-submitted';
  message: string;
  since?: string;
  settle_s?: number;
}

/** When a queued job should start: `at` the estimate, `bound` the 90% bound; `source`
 * "calibrated", "scheduler" (the scheduler's own estimate is all there is) or "simulation". */
export interface IPredictedStart {
  at: string;
  bound: string | null;
  source?: string | null;
  text: string;
}

/** One site's answer in a placement decision (diamond_jupyter.placement.SiteVerdict). */
export interface IVerdict {
  site: string;
  feasible: boolean;
  verdict?: string;
  reasons?: string[];
  notes?: string[];
  partition?: string | null;
  estimated_start?: string | null;
  estimated_runtime_s?: number | null;
  score?: number | null;
  queue_depth?: number;
  running?: number;
}

export interface IPlacement {
  policy?: string;
  choice?: string | null;
  ranked?: IVerdict[];
  now?: string;
}

/** What a task waiting for approval would do (store data.pending, GET tasks/{id} pending). */
export interface IPending {
  tool: string | null;
  plan: Record<string, any> | string | null;
  input: Record<string, any> | null;
  /** The plan's sha256 as the server gives it: an approval names it (the plan shown). */
  plan_sha256: string | null;
}

/**
 * An agent task: the store's TaskRecord without steps (GET /state: the raw record with
 * `data`; GET tasks/{id}: flattened) normalised by `agent.normalizeTask`, which also fills
 * `pending`, `answer` and `error` from either shape. States: running, waiting,
 * awaiting_approval, done, failed, rejected.
 */
export interface ITask {
  id: string;
  state: string;
  prompt: string;
  data: Record<string, any>;
  waiting_on: string[];
  created_at: string;
  updated_at: string;
  pending?: IPending | null;
  answer?: string | null;
  error?: string | null;
}

/**
 * One agent-step event (store kinds agent.*): `kind` "agent.step" is a step of the task
 * (`step_kind` prompt, tool_call, tool_result, model, suspend, resume, approval, rejected,
 * error); "agent.task" and "agent.approval" are changes of the task's state.
 */
export interface IStep {
  seq: number | null;
  kind: string;
  at: string | null;
  task_id: string | null;
  step: number | null;
  step_kind: string | null;
  state: string | null;
  text: string | null;
  tool: string | null;
  data: Record<string, any>;
}

export interface IEvent {
  seq: number | null;
  kind: string;
  at: string | null;
  job_id: string | null;
  site: string | null;
  data: Record<string, unknown>;
  /** A job-state report older than the job's state when it came (not applied to the
   * job): that state. */
  stale?: string;
}

export interface IState {
  sites: ISiteRow[];
  jobs: IJob[];
  jobs_total?: number;
  job_counts?: Record<string, number>;
  tasks: ITask[];
  events: IEvent[];
  last_seq: number;
  error?: string | null;
  /** What to do when the sites file is not as the server read it (absent when it is). */
  sites_file_changed?: string | null;
}

export interface IJobsPage {
  jobs: IJob[];
  total: number;
  limit: number;
  offset: number;
}

export interface IFetchResult {
  paths: string[];
  dest: string;
}

export type Emission = { schema_id?: string; [key: string]: any };

export interface ILogs {
  stdout: string;
  stderr: string;
  /** One line per log file that does not exist on the site. */
  missing?: string;
  /** One line per note on what is shown (earlier jobs' output in a file appended to). */
  notes?: string;
}

/** Every diamond event schema id starts with this. */
export const EVENT_PREFIX = 'https://diamond-jupyter.org/events/';

/** One class of identical nodes (GET sites/{name}/describe). */
export interface INodeType {
  name: string;
  cluster?: string | null;
  partitions: string[];
  count: number;
  architecture?: string | null;
  features: string[];
  cpus: number;
  memory_mb: number;
  gpus: number;
  gpu_model?: string | null;
}

/** What discovery found on a site, merged with the sites file. */
export interface ISiteDescription {
  site: string;
  age_s?: number | null;
  ttl_s?: number | null;
  module_system_version?: string | null;
  pmi?: string[];
  capabilities: {
    architectures: string[];
    features: string[];
    gpu_models: string[];
    module_system?: string | null;
    software?: { name: string; version?: string | null; default?: boolean }[] | null;
    container_runtimes?: string[] | null;
    mpi?: string[] | null;
    sources?: Record<string, string>;
    errors?: string[];
    node_types: INodeType[];
  };
  clusters: {
    name: string;
    nodes?: number;
    error?: string | null;
    partitions: { name: string; node_types: string[]; max_time_s?: number | null }[];
  }[];
}

/** Why a job needs attention (a job-attention event): started, stuck, walltime, failed. */
export interface IAttention {
  attention: string;
  reason?: string | null;
  explanation?: string | null;
  at?: string | null;
}
