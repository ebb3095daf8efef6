/** Wire types of GET /diamond/api/dashboard and GET /diamond/api/sites/{SITE}/usage. */

/** A queued job's predicted start, in seconds from the dashboard's `generated` time. */
export interface IQueuePrediction {
  median_s: number;
  p90_s: number | null;
  /** "calibrated": diamond's own estimate; "borrowed": the same, with the other sites'
   * runtime ratios (too few finished jobs here); "scheduler": the scheduler's, all there is. */
  source: 'calibrated' | 'borrowed' | 'scheduler' | string;
}

/** One job in a site's queue (any user's). */
export interface IQueueRow {
  id: string;
  user: string | null;
  name: string | null;
  partition: string | null;
  nodes: number | null;
  cpus: number | null;
  gpus: number | null;
  state: string;
  waited_s: number | null;
  running_s: number | null;
  predicted_start: IQueuePrediction | null;
  /** The user's own job. */
  mine: boolean;
  /** The diamond job id when diamond submitted it. */
  job: string | null;
}

export interface IDashboardSite {
  name: string;
  scheduler: string;
  reachable: boolean;
  error: string | null;
  /** The first records of the scheduler's outputs left out of `queue` (the scheduler's
   * text), and how many there are. */
  warnings?: string[];
  warnings_total?: number;
  /** When the snapshot behind `queue` was taken (ISO); null if never. */
  taken_at?: string | null;
  totals: { nodes: number | null; cpus: number | null; gpus: number | null };
  busy: { cpus: number | null; gpus: number | null };
  queue: IQueueRow[];
}

export interface IDashboard {
  generated: string;
  user: string;
  sites: IDashboardSite[];
}

export interface IUsagePoint {
  /** epoch seconds (the server's); an ISO time is read too */
  t: number | string;
  busy_cpus: number | null;
  busy_gpus: number | null;
  pending: number | null;
  running: number | null;
}

export interface IUsage {
  site: string;
  points: IUsagePoint[];
}
