import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { DiamondApiError, fetchState } from './api';
import {
  EVENT_PREFIX,
  IEvent,
  IJob,
  ISiteRow,
  IState,
  TERMINAL_STATES
} from './types';

export type Status = 'loading' | 'ready' | 'unavailable' | 'error';

/** A job that reached a terminal state through a live event. */
export interface IJobEnded {
  job: IJob;
  previous: string | null;
}

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
  'origin'
];

const MAX_ACTIVITY = 200;
const MAX_BACKOFF_MS = 60_000;
const MIN_BACKOFF_MS = 1_000;
const GAP_RESYNC_MS = 10_000;
const CATCH_UP_MS = [5_000, 15_000, 35_000];

/**
 * The sidebar's state: filled from GET /diamond/api/state, then kept current by
 * jupyter_events. No polling while events flow: /state is fetched again only on
 * a reported disconnect, a fetch error (with exponential backoff up to 60 s),
 * or a gap in event sequence numbers (at most every 10 s). Events whose `seq`
 * is not newer than the snapshot's `last_seq` (or the job's last applied seq)
 * are already reflected and are dropped.
 */
export class DiamondModel {
  constructor(options: DiamondModel.IOptions = {}) {
    this._settings = options.serverSettings ?? ServerConnection.makeSettings();
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }
  get jobEnded(): ISignal<this, IJobEnded> {
    return this._jobEnded;
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
  get sites(): ISiteRow[] {
    return Array.from(this._sites.values());
  }
  get jobs(): IJob[] {
    return Array.from(this._jobs.values()).sort((a, b) =>
      (b.submitted_at ?? '').localeCompare(a.submitted_at ?? '')
    );
  }
  get activity(): IEvent[] {
    return this._activity;
  }
  get isDisposed(): boolean {
    return this._disposed;
  }

  getJob(id: string): IJob | undefined {
    return this._jobs.get(id);
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
      this._changed.emit();
    }
    this._recovering = true;
    this._scheduleRetry();
  }

  /** Handle one message from `serviceManager.events.stream`. */
  handleEvent(emission: { schema_id?: string; [key: string]: any }): void {
    const schema = emission.schema_id;
    if (this._disposed || !schema || !schema.startsWith(EVENT_PREFIX)) {
      return;
    }
    if (this._fetching) {
      // Replayed once the snapshot is in, so nothing newer is overwritten.
      this._queue.push(emission);
      return;
    }
    this._apply(emission);
    this._changed.emit();
  }

  /** Apply a Job returned by an action (e.g. cancel). */
  updateJob(job: IJob): void {
    if (job && job.id) {
      this._jobs.set(job.id, { ...this._jobs.get(job.id), ...job });
      this._changed.emit();
    }
  }

  dispose(): void {
    this._disposed = true;
    this._clearTimer();
    this._catchUp.forEach(t => window.clearTimeout(t));
    Signal.clearData(this);
  }

  private async _doFetch(): Promise<void> {
    if (this._status !== 'ready') {
      this._status = 'loading';
      this._changed.emit();
    }
    let state: IState;
    try {
      state = await fetchState(this._settings);
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
      this._changed.emit();
      return;
    }
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
    this._status = 'ready';
    this._error = null;
    this._connected = true;
    this._changed.emit();
  }

  private _loadState(state: IState): void {
    this._sites = new Map((state.sites ?? []).map(s => [s.name, s]));
    this._jobs = new Map((state.jobs ?? []).map(j => [j.id, j]));
    this._activity = (state.events ?? [])
      .slice()
      .sort((a, b) => (b.seq ?? 0) - (a.seq ?? 0))
      .slice(0, MAX_ACTIVITY);
    this._lastSeq = typeof state.last_seq === 'number' ? state.last_seq : 0;
    this._snapshotSeq = this._lastSeq;
    this._jobSeq.clear();
  }

  private _apply(emission: { schema_id?: string; [key: string]: any }): void {
    const { schema_id, ...data } = emission;
    const kind = schema_id!.slice(EVENT_PREFIX.length).split('/')[0];
    const seq = typeof data.seq === 'number' ? data.seq : null;
    if (seq !== null) {
      // Already part of the snapshot (or of this job's newer state): skip.
      const jobId: string | undefined = data.job_id;
      const jobSeq = jobId ? (this._jobSeq.get(jobId) ?? 0) : 0;
      if (seq <= this._snapshotSeq || seq <= jobSeq) {
        return;
      }
      if (seq > this._lastSeq + 1) {
        this._gapResync(); // events were missed (or arrive out of order)
      }
      this._lastSeq = Math.max(this._lastSeq, seq);
      if (jobId) {
        this._jobSeq.set(jobId, seq);
      }
    }
    if (kind === 'site-snapshot') {
      if (data.name) {
        this._sites.set(data.name, { ...this._sites.get(data.name), ...data } as ISiteRow);
      }
      return;
    }
    if (kind === 'job-state') {
      this._applyJobState(data);
    }
    this._pushActivity({
      seq,
      kind,
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
    for (const key of JOB_FIELDS) {
      if (data[key] !== undefined) {
        (job as any)[key] = data[key];
      }
    }
    const previous: string | null = data.previous ?? old?.state ?? null;
    if (TERMINAL_STATES.has(job.state) && !job.ended_at && data.at) {
      job.ended_at = data.at;
    }
    if (job.state === 'RUNNING' && !job.started_at && data.at) {
      job.started_at = data.at;
    }
    this._jobs.set(id, job);
    const wasTerminal = old ? TERMINAL_STATES.has(old.state) : false;
    if (TERMINAL_STATES.has(job.state) && !wasTerminal) {
      this._jobEnded.emit({ job, previous });
    }
  }

  private _pushActivity(ev: IEvent): void {
    this._activity = [ev, ...this._activity].slice(0, MAX_ACTIVITY);
  }

  private _gapResync(): void {
    const now = Date.now();
    if (now - this._lastGapResync < GAP_RESYNC_MS) {
      return;
    }
    this._lastGapResync = now;
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
  private _status: Status = 'loading';
  private _error: string | null = null;
  private _connected = false;
  private _sites = new Map<string, ISiteRow>();
  private _jobs = new Map<string, IJob>();
  private _activity: IEvent[] = [];
  private _lastSeq = 0;
  private _snapshotSeq = 0;
  private _jobSeq = new Map<string, number>();
  private _lastGapResync = 0;
  private _backoff = MIN_BACKOFF_MS;
  private _timer: number | null = null;
  private _fetching: Promise<void> | null = null;
  private _queue: { schema_id?: string; [key: string]: any }[] = [];
  private _recovering = false;
  private _catchUp: number[] = [];
  private _disposed = false;
}

export namespace DiamondModel {
  export interface IOptions {
    serverSettings?: ServerConnection.ISettings;
  }
}
