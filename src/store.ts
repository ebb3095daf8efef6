/**
 * The sidebar's state store: sites, jobs, agent tasks and their steps, the activity feed
 * and the event sequence bookkeeping. Filled from a GET /state snapshot (`load`), then
 * kept current by diamond events (`apply`). No I/O: fetching, retries and change
 * notifications are the model's (model.ts).
 */
import { applyAgentEvent, awaitsApproval, normalizeTask } from './agent';
import { isStale, markStale, mergeJobState, sortJobs } from './jobstate';
import { DiamondStats } from './stats';
import {
  Emission,
  EVENT_PREFIX,
  IAttention,
  IEvent,
  IJob,
  IJobDependency,
  ISiteRow,
  IState,
  IStep,
  ITask,
  TERMINAL_STATES
} from './types';

/** A job that reached a terminal state through a live event. */
export interface IJobEnded {
  job: IJob;
  previous: string | null;
}

/** What the store reports while applying events. */
export interface IStoreHooks {
  jobEnded(ended: IJobEnded): void;
  approvalNeeded(task: ITask): void;
  /** Events were missed (a seq gap): the snapshot should be fetched again. */
  gap(): void;
}

const MAX_ACTIVITY = 200;

function isProgress(ev: IEvent): boolean {
  return ev.kind === 'transfer.progress';
}

/** The transfer a progress event is about. */
function progressOf(ev: IEvent): string {
  const d = ev.data ?? {};
  const inner = (d.data ?? {}) as Record<string, unknown>;
  return String(d.transfer_id ?? inner.transfer_id ?? inner.id ?? ev.job_id ?? '');
}

/** Newest first in, newest first out: only the latest of consecutive progress events of
 * one transfer is kept (a copy of many files reports progress many times a second). */
export function coalesceProgress(events: IEvent[]): IEvent[] {
  const out: IEvent[] = [];
  for (const ev of events) {
    const last = out[out.length - 1];
    if (last && isProgress(ev) && isProgress(last) && progressOf(ev) === progressOf(last)) {
      continue;
    }
    out.push(ev);
  }
  return out;
}
const MAX_STEPS = 100;

export class DiamondStore {
  constructor(
    private _stats: DiamondStats,
    private _hooks: IStoreHooks
  ) {}

  get lastSeq(): number {
    return this._lastSeq;
  }
  get sites(): ISiteRow[] {
    return Array.from(this._sites.values());
  }
  /** The loaded jobs, newest first. */
  get jobs(): IJob[] {
    if (this._sorted === null) {
      this._sorted = sortJobs(this._jobs.values());
    }
    return this._sorted;
  }
  /** All jobs in the store (at least the loaded ones). */
  get jobsTotal(): number {
    return Math.max(this._jobsTotal + this._newJobs, this._jobs.size);
  }
  get tasks(): ITask[] {
    return Array.from(this._tasks.values()).sort((a, b) =>
      (b.updated_at ?? '').localeCompare(a.updated_at ?? '')
    );
  }
  steps(taskId: string): IStep[] {
    return this._steps.get(taskId) ?? [];
  }
  get activity(): IEvent[] {
    return this._activity;
  }
  /** Bumped by every workflow event (views read the workflows again). */
  get workflowSeq(): number {
    return this._workflowSeq;
  }
  getJob(id: string): IJob | undefined {
    const renamed = this._aliases.get(id);
    return this._jobs.get(id) ?? (renamed === undefined ? undefined : this._jobs.get(renamed));
  }

  /** Job `to` was known as `from`: a lost submit's provisional id, once its job was found. */
  alias(from: string, to: string): void {
    if (from !== to) {
      this._aliases.set(from, to);
    }
  }
  getTask(id: string): ITask | undefined {
    return this._tasks.get(id);
  }

  setJob(job: IJob): void {
    this._jobs.set(job.id, job);
    this._sorted = null;
  }

  /** Merge a Job returned by an action (e.g. cancel). */
  updateJob(job: IJob): void {
    this.setJob({ ...this._jobs.get(job.id), ...job });
  }

  /** Add older jobs paged in from GET /jobs (live events keep them current). */
  addJobs(jobs: IJob[]): void {
    for (const job of jobs) {
      if (!this._jobs.has(job.id)) {
        this.setJob(job);
      }
    }
  }

  /** Patch a task; false when it is not known. */
  updateTask(id: string, patch: Partial<ITask>): boolean {
    const task = this._tasks.get(id);
    if (!task) {
      return false;
    }
    this._tasks.set(id, { ...task, ...patch });
    return true;
  }

  /** Replace the site rows and the sites-file note (a later snapshot of them). */
  setSites(rows: ISiteRow[], sitesFileChanged?: string | null): void {
    this._sites = new Map(rows.map(s => [s.name, s]));
    this._sitesFileChanged = sitesFileChanged || null;
  }

  /** The server's note that its sites file changed since it read it; null when it has not. */
  get sitesFileChanged(): string | null {
    return this._sitesFileChanged;
  }

  /** Unfinished jobs at `site` among the loaded ones; null if not all jobs are loaded. */
  unfinishedAt(site: string): number | null {
    if (this._jobs.size < this.jobsTotal) {
      return null;
    }
    let n = 0;
    for (const job of this._jobs.values()) {
      if (job.site === site && !TERMINAL_STATES.has(job.state)) {
        n++;
      }
    }
    return n;
  }

  /** Replace everything with a /state snapshot. */
  load(state: IState): void {
    this.setSites(state.sites ?? [], state.sites_file_changed);
    this._jobs = new Map((state.jobs ?? []).map(j => [j.id, j]));
    this._sorted = null;
    this._jobsTotal = state.jobs_total ?? this._jobs.size;
    this._newJobs = 0;
    this._tasks = new Map(
      (state.tasks ?? []).map(t => {
        const task = normalizeTask(t as unknown as Record<string, any>);
        return [task.id, task];
      })
    );
    this._activity = coalesceProgress(
      markStale(state.events ?? []).sort((a, b) => (b.seq ?? 0) - (a.seq ?? 0))
    ).slice(0, MAX_ACTIVITY);
    this._lastSeq = typeof state.last_seq === 'number' ? state.last_seq : 0;
    this._snapshotSeq = this._lastSeq;
    this._jobSeq.clear();
    // A plan that waited already (or whose events came during the fetch): announce once.
    for (const task of this._tasks.values()) {
      this._announce(task);
    }
  }

  /** Apply one diamond emission (the schema id is checked by the caller). */
  apply(emission: Emission): void {
    const { schema_id, ...data } = emission;
    const kind = schema_id!.slice(EVENT_PREFIX.length).split('/')[0];
    const seq = typeof data.seq === 'number' ? data.seq : null;
    if (seq !== null) {
      // Already part of the snapshot (or of this job's newer state): skip.
      const jobId: string | undefined = data.job_id ?? undefined;
      const jobSeq = jobId ? (this._jobSeq.get(jobId) ?? 0) : 0;
      // (the server sends in seq order; a replay from GET events may repeat live ones)
      if (seq <= this._snapshotSeq || seq <= jobSeq || seq <= this._lastSeq) {
        this._stats.duplicates++;
        return;
      }
      if (seq > this._lastSeq + 1) {
        this._stats.gaps++;
        this._hooks.gap(); // events were missed
      }
      this._lastSeq = Math.max(this._lastSeq, seq);
      if (jobId) {
        this._jobSeq.set(jobId, seq);
      }
      this._stats.applied++;
    }
    if (kind === 'site-snapshot') {
      if (data.name) {
        this._sites.set(data.name, { ...this._sites.get(data.name), ...data } as ISiteRow);
      }
      return;
    }
    if (kind === 'workflow') {
      this._workflowSeq++;
    }
    let stale: string | null = null;
    if (kind === 'job-state') {
      stale = this._applyJobState(data);
    } else if (kind === 'job-attention') {
      this._applyAttention(data);
    } else if (kind === 'job-dependency') {
      this._applyDependency(data);
    } else if (kind === 'agent-step') {
      this._applyStep(data as IStep);
    }
    this._pushActivity({
      seq,
      kind: typeof data.kind === 'string' ? data.kind : kind,
      at: data.at ?? new Date().toISOString(),
      job_id: data.job_id ?? null,
      site: data.site ?? null,
      data,
      ...(stale === null ? {} : { stale })
    });
  }

  /** Apply a job-state payload; the job's state when the payload is stale (see `isStale`:
   * not applied, and its activity line says so), else null. */
  private _applyJobState(data: Record<string, any>): string | null {
    const id: string | undefined = data.job_id ?? data.id;
    if (!id) {
      return null;
    }
    const provisional: string | null = data.kind === 'job.submitted' ? data.previous_id ?? null : null;
    if (provisional && provisional !== id) {
      this.alias(provisional, id); // a lost submit's job was found: its provisional row is it
      if (this._jobs.delete(provisional)) {
        this._sorted = null;
      }
    }
    const old = this._jobs.get(id);
    const stale = isStale(old, data) ? old!.state : null;
    const job = mergeJobState(id, old, data);
    if (!old && data.kind === 'job.submitted') {
      this._newJobs++;
    }
    this.setJob(job);
    const previous: string | null = data.previous ?? old?.state ?? null;
    const wasTerminal = old ? TERMINAL_STATES.has(old.state) : false;
    if (TERMINAL_STATES.has(job.state) && !wasTerminal) {
      this._hooks.jobEnded({ job, previous });
    }
    return stale;
  }

  private _applyAttention(data: Record<string, any>): void {
    const old = data.job_id ? this._jobs.get(data.job_id) : undefined;
    if (!old || typeof data.attention !== 'string') {
      return;
    }
    const attention: IAttention = {
      attention: data.attention,
      reason: data.reason ?? null,
      explanation: data.explanation ?? null,
      at: data.at ?? null
    };
    this.setJob({ ...old, attention });
  }

  /** A job-dependency payload: the job's `depends_on` entry it names, as it turned. */
  private _applyDependency(data: Record<string, any>): void {
    const old = data.job_id ? this._jobs.get(data.job_id) : undefined;
    const turned = data.dependency as IJobDependency | undefined;
    if (!old || !turned) {
      return;
    }
    const same = (d: IJobDependency): boolean =>
      d.job === turned.job && d.type === turned.type && (d.task ?? null) === (turned.task ?? null);
    const list = old.depends_on ?? [];
    const depends_on = list.some(same)
      ? list.map(d => (same(d) ? turned : d))
      : [...list, turned];
    this.setJob({ ...old, depends_on });
  }

  private _applyStep(ev: IStep): void {
    const id = ev.task_id;
    if (!id) {
      return;
    }
    const steps = this._steps.get(id) ?? [];
    const { task, step } = applyAgentEvent(this._tasks.get(id), steps, ev);
    if (step) {
      this._steps.set(id, [...steps, step].slice(-MAX_STEPS));
    }
    this._tasks.set(id, task);
    this._announce(task);
  }

  /** approvalNeeded once per wait for approval (a new wait after a decision counts). */
  private _announce(task: ITask): void {
    if (!awaitsApproval(task)) {
      this._announced.delete(task.id);
    } else if (!this._announced.has(task.id)) {
      this._announced.add(task.id);
      this._hooks.approvalNeeded(task);
    }
  }

  private _pushActivity(ev: IEvent): void {
    const top = this._activity[0];
    if (top && isProgress(ev) && isProgress(top) && progressOf(top) === progressOf(ev)) {
      // one line per transfer in progress, showing its latest figures
      this._activity = [ev, ...this._activity.slice(1)];
      return;
    }
    this._activity.unshift(ev);
    if (this._activity.length > MAX_ACTIVITY) {
      this._activity.length = MAX_ACTIVITY;
    }
    this._activity = this._activity.slice();
  }

  private _sites = new Map<string, ISiteRow>();
  private _sitesFileChanged: string | null = null;
  private _jobs = new Map<string, IJob>();
  private _aliases = new Map<string, string>(); // provisional id: the id its job was found as
  private _sorted: IJob[] | null = null;
  private _jobsTotal = 0;
  private _newJobs = 0;
  private _tasks = new Map<string, ITask>();
  private _steps = new Map<string, IStep[]>();
  private _announced = new Set<string>();
  private _activity: IEvent[] = [];
  private _workflowSeq = 0;
  private _lastSeq = 0;
  private _snapshotSeq = 0;
  private _jobSeq = new Map<string, number>();
}
