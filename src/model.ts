import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { DiamondApiError, fetchState } from './api';
import { awaitsApproval, mergeJobState, sortJobs } from './jobstate';
import { DiamondStats } from './stats';
import {
  Emission,
  EVENT_PREFIX,
  IEvent,
  IJob,
  ISiteRow,
  IState,
  IStep,
  ITask,
  TERMINAL_STATES
} from './types';

export type Status = 'loading' | 'ready' | 'unavailable' | 'error';

/** A job that reached a terminal state through a live event. */
export interface IJobEnded {
  job: IJob;
  previous: string | null;
}

const MAX_ACTIVITY = 200;
const MAX_STEPS = 100;
const MAX_BACKOFF_MS = 60_000;
const MIN_BACKOFF_MS = 1_000;
const GAP_RESYNC_MS = 10_000;
const CATCH_UP_MS = [5_000, 15_000, 35_000];
/** Jobs taken from /state; older ones page in through GET /jobs. */
export const STATE_JOBS = 500;

/**
 * The sidebar's state: filled from GET /diamond/api/state, then kept current by
 * jupyter_events. No polling while events flow: /state is fetched again only on
 * a reported disconnect, a fetch error (exponential backoff up to 60 s), or a
 * gap in the store's event sequence numbers (at most every 10 s). The server
 * publishes every stored event (kinds without a view as `activity`), so a gap
 * means events were really missed. Change notifications are coalesced to one
 * per animation frame.
 */
export class DiamondModel {
  readonly stats = new DiamondStats();

  constructor(options: DiamondModel.IOptions = {}) {
    this._settings = options.serverSettings ?? ServerConnection.makeSettings();
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }
  get jobEnded(): ISignal<this, IJobEnded> {
    return this._jobEnded;
  }
  get approvalNeeded(): ISignal<this, ITask> {
    return this._approvalNeeded;
  }
  get status(): Status {
    return this._status;
  }
  get error(): string | null {
    return this._error;
  }
  get connected(): boolean {
    return this._connected;
  }
  get lastSeq(): number {
    return this._lastSeq;
  }
  get settings(): ServerConnection.ISettings {
    return this._settings;
  }
  get sites(): ISiteRow[] {
    return Array.from(this._sites.values());
  }
  /** The loaded jobs, newest first (the latest STATE_JOBS plus live ones). */
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
  /** The job whose card should be revealed (from a notification). */
  get focusedJob(): string | null {
    return this._focused;
  }
  get isDisposed(): boolean {
    return this._disposed;
  }

  getJob(id: string): IJob | undefined {
    return this._jobs.get(id);
  }

  getTask(id: string): ITask | undefined {
    return this._tasks.get(id);
  }

  focusJob(id: string | null): void {
    this._focused = id;
    this._notify();
  }

  /** Fetch /state now; on failure schedule a backed-off retry. */
  async refresh(): Promise<void> {
    if (this._disposed) {
      return;
    }
    this._clearTimer();
    if (this._fetching) {
      return this._fetching;
    }
    this._queue = [];
    this._fetching = this._doFetch().finally(() => {
      this._fetching = null;
    });
    return this._fetching;
  }

  /** The event stream or the server reported a lost connection. */
  onDisconnect(): void {
    if (this._disposed) {
      return;
    }
    if (this._connected) {
      this._connected = false;
      this._notify();
    }
    this._recovering = true;
    this._scheduleRetry();
  }

  /** Handle one message from `serviceManager.events.stream`. */
  handleEvent(emission: Emission): void {
    const schema = emission.schema_id;
    if (this._disposed || !schema || !schema.startsWith(EVENT_PREFIX)) {
      return;
    }
    this.stats.received++;
    if (typeof emission.seq === 'number') {
      this.stats.noteSeq(emission.seq);
    }
    if (this._fetching) {
      // Replayed once the snapshot is in, so nothing newer is overwritten.
      this._queue.push(emission);
      return;
    }
    this._apply(emission);
    this._notify();
  }

  /** Apply a Job returned by an action (e.g. cancel). */
  updateJob(job: IJob): void {
    if (job && job.id) {
      this._setJob({ ...this._jobs.get(job.id), ...job });
      this._notify();
    }
  }

  /** Add older jobs paged in from GET /jobs (live events keep them current). */
  addJobs(jobs: IJob[]): void {
    for (const job of jobs) {
      if (!this._jobs.has(job.id)) {
        this._setJob(job);
      }
    }
    this._notify();
  }

  /** Record the decision on a task locally (the server's events follow). */
  updateTask(id: string, patch: Partial<ITask>): void {
    const task = this._tasks.get(id);
    if (task) {
      this._tasks.set(id, { ...task, ...patch });
      this._notify();
    }
  }

  /** Mark that the jobs list was painted after the fetch that started at `t0`. */
  notePainted(): void {
    if (this._fetchStart === null) {
      return;
    }
    const ms = performance.now() - this._fetchStart;
    this._fetchStart = null;
    this.stats.lastPaintMs = ms;
    if (this.stats.firstPaintMs === null) {
      this.stats.firstPaintMs = ms;
      performance.mark('diamond-first-paint');
    }
  }

  dispose(): void {
    this._disposed = true;
    this._clearTimer();
    this._catchUp.forEach(t => window.clearTimeout(t));
    Signal.clearData(this);
  }

  private _notify(): void {
    if (this._frame !== null || this._disposed) {
      return;
    }
    const flush = () => {
      if (this._frame !== null) {
        window.clearTimeout(this._frameTimer);
        cancelAnimationFrame(this._frame);
      }
      this._frame = null;
      this.stats.renders++;
      this._changed.emit();
    };
    this._frame = requestAnimationFrame(flush);
    // Hidden tabs get no animation frames: do not hold updates back there.
    this._frameTimer = window.setTimeout(flush, 250);
  }

  private async _doFetch(): Promise<void> {
    if (this._status !== 'ready') {
      this._status = 'loading';
      this._notify();
    }
    this.stats.fetches++;
    const t0 = performance.now();
    let state: IState;
    try {
      state = await fetchState(this._settings, STATE_JOBS);
    } catch (err) {
      const e = err as DiamondApiError;
      this._status = e.notInstalled ? 'unavailable' : 'error';
      this._error = e.notInstalled
        ? 'The diamond-jupyter server extension is not available on this ' +
          'Jupyter server (GET /diamond/api/state returned 404).'
        : `Could not load state: ${e.message}`;
      this._connected = false;
      this._queue = [];
      if (!e.notInstalled) {
        // A 404 only changes with a server restart, which is a disconnect.
        this._recovering = true;
        this._scheduleRetry();
      }
      this._notify();
      return;
    }
    this._fetchStart = t0;
    this._loadState(state);
    const queued = this._queue;
    this._queue = [];
    for (const emission of queued) {
      this._apply(emission);
    }
    this._backoff = MIN_BACKOFF_MS;
    if (this._recovering) {
      this._recovering = false;
      this._scheduleCatchUp();
    }
    this._status = state.error ? 'error' : 'ready';
    this._error = state.error ? `Diamond is not configured: ${state.error}` : null;
    this._connected = true;
    this._notify();
  }

  private _loadState(state: IState): void {
    this._sites = new Map((state.sites ?? []).map(s => [s.name, s]));
    this._jobs = new Map((state.jobs ?? []).map(j => [j.id, j]));
    this._sorted = null;
    this._jobsTotal = state.jobs_total ?? this._jobs.size;
    this._newJobs = 0;
    this._tasks = new Map((state.tasks ?? []).map(t => [t.id, t]));
    this._activity = (state.events ?? [])
      .slice()
      .sort((a, b) => (b.seq ?? 0) - (a.seq ?? 0))
      .slice(0, MAX_ACTIVITY);
    this._lastSeq = typeof state.last_seq === 'number' ? state.last_seq : 0;
    this._snapshotSeq = this._lastSeq;
    this._jobSeq.clear();
  }

  private _apply(emission: Emission): void {
    const { schema_id, ...data } = emission;
    const kind = schema_id!.slice(EVENT_PREFIX.length).split('/')[0];
    const seq = typeof data.seq === 'number' ? data.seq : null;
    if (seq !== null) {
      // Already part of the snapshot (or of this job's newer state): skip.
      const jobId: string | undefined = data.job_id ?? undefined;
      const jobSeq = jobId ? (this._jobSeq.get(jobId) ?? 0) : 0;
      if (seq <= this._snapshotSeq || seq <= jobSeq) {
        this.stats.duplicates++;
        return;
      }
      if (seq > this._lastSeq + 1) {
        this.stats.gaps++;
        this._gapResync(); // events were missed
      }
      this._lastSeq = Math.max(this._lastSeq, seq);
      if (jobId) {
        this._jobSeq.set(jobId, seq);
      }
      this.stats.applied++;
    }
    if (kind === 'site-snapshot') {
      if (data.name) {
        this._sites.set(data.name, { ...this._sites.get(data.name), ...data } as ISiteRow);
      }
      return;
    }
    if (kind === 'job-state') {
      this._applyJobState(data);
    } else if (kind === 'agent-step') {
      this._applyStep(data as IStep);
    }
    this._pushActivity({
      seq,
      kind: typeof data.kind === 'string' ? data.kind : kind,
      at: data.at ?? new Date().toISOString(),
      job_id: data.job_id ?? null,
      site: data.site ?? null,
      data
    });
  }

  private _applyJobState(data: Record<string, any>): void {
    const id: string | undefined = data.job_id ?? data.id;
    if (!id) {
      return;
    }
    const old = this._jobs.get(id);
    const job = mergeJobState(id, old, data);
    if (!old && data.kind === 'job.submitted') {
      this._newJobs++;
    }
    this._setJob(job);
    const previous: string | null = data.previous ?? old?.state ?? null;
    const wasTerminal = old ? TERMINAL_STATES.has(old.state) : false;
    if (TERMINAL_STATES.has(job.state) && !wasTerminal) {
      this._jobEnded.emit({ job, previous });
    }
  }

  private _applyStep(step: IStep): void {
    const id = step.task_id;
    if (!id) {
      return;
    }
    const steps = [...(this._steps.get(id) ?? []), step].slice(-MAX_STEPS);
    this._steps.set(id, steps);
    const now = step.at ?? new Date().toISOString();
    const old: ITask = this._tasks.get(id) ?? {
      id,
      state: 'running',
      prompt: String(step.data?.prompt ?? ''),
      data: {},
      waiting_on: [],
      created_at: now,
      updated_at: now
    };
    const plan = step.data?.plan ?? (/plan/i.test(step.step_kind ?? '') ? step.text : null);
    const task: ITask = {
      ...old,
      state: step.state ?? old.state,
      updated_at: now,
      data: plan ? { ...old.data, plan } : old.data
    };
    if (/approv/i.test(step.step_kind ?? '') && !/approv/i.test(task.state)) {
      task.state = step.state ?? 'awaiting-approval';
    }
    this._tasks.set(id, task);
    if (awaitsApproval(task) && !awaitsApproval(old)) {
      this._approvalNeeded.emit(task);
    }
  }

  private _setJob(job: IJob): void {
    this._jobs.set(job.id, job);
    this._sorted = null;
  }

  private _pushActivity(ev: IEvent): void {
    this._activity.unshift(ev);
    if (this._activity.length > MAX_ACTIVITY) {
      this._activity.length = MAX_ACTIVITY;
    }
    this._activity = this._activity.slice();
  }

  private _gapResync(): void {
    const now = Date.now();
    if (now - this._lastGapResync < GAP_RESYNC_MS) {
      return;
    }
    this._lastGapResync = now;
    this.stats.resyncs++;
    // Let the current event finish applying first.
    setTimeout(() => void this.refresh(), 0);
  }

  private _scheduleRetry(): void {
    if (this._timer !== null || this._disposed) {
      return;
    }
    const delay = this._backoff;
    this._backoff = Math.min(this._backoff * 2, MAX_BACKOFF_MS);
    this._timer = window.setTimeout(() => {
      this._timer = null;
      void this.refresh();
    }, delay);
  }

  /**
   * After a reconnect, JupyterLab's event socket resubscribes on its own
   * backoff (up to 30 s) and events emitted meanwhile are not buffered: fetch
   * /state a few more times (bounded) to cover that window.
   */
  private _scheduleCatchUp(): void {
    for (const t of this._catchUp) {
      window.clearTimeout(t);
    }
    this._catchUp = CATCH_UP_MS.map(delay =>
      window.setTimeout(() => void this.refresh(), delay)
    );
  }

  private _clearTimer(): void {
    if (this._timer !== null) {
      window.clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _settings: ServerConnection.ISettings;
  private _changed = new Signal<this, void>(this);
  private _jobEnded = new Signal<this, IJobEnded>(this);
  private _approvalNeeded = new Signal<this, ITask>(this);
  private _status: Status = 'loading';
  private _error: string | null = null;
  private _connected = false;
  private _sites = new Map<string, ISiteRow>();
  private _jobs = new Map<string, IJob>();
  private _sorted: IJob[] | null = null;
  private _jobsTotal = 0;
  private _newJobs = 0;
  private _tasks = new Map<string, ITask>();
  private _steps = new Map<string, IStep[]>();
  private _activity: IEvent[] = [];
  private _focused: string | null = null;
  private _lastSeq = 0;
  private _snapshotSeq = 0;
  private _jobSeq = new Map<string, number>();
  private _lastGapResync = 0;
  private _backoff = MIN_BACKOFF_MS;
  private _timer: number | null = null;
  private _fetching: Promise<void> | null = null;
  private _fetchStart: number | null = null;
  private _queue: Emission[] = [];
  private _recovering = false;
  private _catchUp: number[] = [];
  private _frame: number | null = null;
  private _frameTimer = 0;
  private _disposed = false;
}

export namespace DiamondModel {
  export interface IOptions {
    serverSettings?: ServerConnection.ISettings;
  }
}
