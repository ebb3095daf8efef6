import { IAttention, IEvent, IJob, TERMINAL_STATES } from './types';

const JOB_FIELDS: (keyof IJob)[] = [
  'site',
  'native_id',
  'name',
  'state',
  'submitted_at',
  'started_at',
  'ended_at',
  'exit_code',
  'reason',
  'placement',
  'origin',
  'predicted_start',
  'lookout',
  'array_tasks' // a job array's task counts, said by a job.updated when a task moves
];

/** When the job's current state began, as far as known: a finished job's end, a running
 * job's start; null otherwise. */
function stateSince(job: IJob | undefined): number | null {
  if (!job) {
    return null;
  }
  const since = TERMINAL_STATES.has(job.state)
    ? job.ended_at
    : job.state === 'RUNNING'
      ? job.started_at
      : null;
  const t = since ? Date.parse(since) : NaN;
  return isNaN(t) ? null : t;
}

/** Whether a payload's state was seen before the job's current state began (a slower
 * observer's, delivered late): a requeue observed later still moves a job back. */
export function isStale(old: IJob | undefined, data: Record<string, any>): boolean {
  const since = stateSince(old);
  const at = typeof data.at === 'string' ? Date.parse(data.at) : NaN;
  return (
    since !== null &&
    !isNaN(at) &&
    at < since &&
    typeof data.state === 'string' &&
    data.state !== old?.state
  );
}

/** The job after one job-state payload (pure; `old` is not modified). A state seen before
 * the job's current one began is not applied (see `isStale`). */
export function mergeJobState(
  id: string,
  old: IJob | undefined,
  data: Record<string, any>
): IJob {
  const job: IJob = {
    id,
    site: '',
    native_id: id.includes(':') ? id.slice(id.indexOf(':') + 1) : id,
    name: '',
    state: 'UNKNOWN',
    submitted_at: null,
    started_at: null,
    ended_at: null,
    exit_code: null,
    reason: null,
    placement: null,
    origin: null,
    ...old
  };
  const stale = isStale(old, data);
  for (const key of JOB_FIELDS) {
    if (stale && (key === 'state' || key === 'reason')) {
      continue;
    }
    const v = data[key];
    // A payload's null does not erase what is known (it may be a partial event).
    if (v !== undefined && !(v === null && job[key] !== null && key !== 'reason')) {
      (job as any)[key] = v;
    }
  }
  if (TERMINAL_STATES.has(job.state) && !job.ended_at && data.at) {
    job.ended_at = data.at;
  }
  if (job.state === 'RUNNING' && !job.started_at && data.at) {
    job.started_at = data.at;
  }
  if (!job.submitted_at && data.at) {
    job.submitted_at = data.at;
  }
  return job;
}

/** Stored events (a /state snapshot's) in sequence order, each job-state report older
 * than its job's state at that point of the sequence marked `stale` with that state, as
 * it was when it came live. Each job's state is followed from its first event here. */
export function markStale(events: IEvent[]): IEvent[] {
  const jobs = new Map<string, IJob>();
  return events
    .slice()
    .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0))
    .map(ev => {
      const state = ev.data?.state;
      if (!ev.kind.startsWith('job.') || !ev.job_id || typeof state !== 'string') {
        return ev;
      }
      const report = { state, at: ev.at };
      const old = jobs.get(ev.job_id);
      jobs.set(ev.job_id, mergeJobState(ev.job_id, old, report));
      return isStale(old, report) ? { ...ev, stale: old!.state } : ev;
    });
}

/** Newest first by submission time, then id. */
export function sortJobs(jobs: Iterable<IJob>): IJob[] {
  return Array.from(jobs).sort(
    (a, b) =>
      (b.submitted_at ?? '').localeCompare(a.submitted_at ?? '') ||
      b.id.localeCompare(a.id)
  );
}

/** The attention a job still needs: stuck while it pends, nearing its limit while it runs. */
export function attentionNow(job: IJob): IAttention | null {
  const a = job.attention;
  if (!a) {
    return null;
  }
  if (a.attention === 'stuck' && job.state === 'PENDING') {
    return a;
  }
  if (a.attention === 'walltime' && job.state === 'RUNNING') {
    return a;
  }
  return null;
}

/** One line for an attention: what happened and why. */
export function attentionText(a: IAttention): string {
  if (a.attention === 'stuck') {
    return `can never start here: ${a.reason ?? ''}${a.explanation ? ` (${a.explanation})` : ''}`;
  }
  if (a.attention === 'walltime') {
    return `nearing its time limit: ${a.reason ?? ''}`;
  }
  return `${a.attention}${a.reason ? `: ${a.reason}` : ''}`;
}
