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
  placement: Record<string, unknown> | null;
  origin: { path: string; cell_id?: string | null } | null;
}

export interface IEvent {
  seq: number | null;
  kind: string;
  at: string | null;
  job_id: string | null;
  site: string | null;
  data: Record<string, unknown>;
}

export interface IState {
  sites: ISiteRow[];
  jobs: IJob[];
  tasks: unknown[];
  events: IEvent[];
  last_seq: number;
}

export interface ILogs {
  stdout: string;
  stderr: string;
}

/** Every diamond event schema id starts with this. */
export const EVENT_PREFIX = 'https://diamond-jupyter.org/events/';
