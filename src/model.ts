import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { DiamondApiError, fetchState, requestAPI } from './api';
import { FrameCoalescer, RefreshScheduler } from './schedule';
import { DiamondStats } from './stats';
import { DiamondStore, IJobEnded } from './store';
import { Emission, EVENT_PREFIX, IEvent, IJob, ISiteRow, IState, IStep, ITask } from './types';

export type { IJobEnded } from './store';

export type Status = 'loading' | 'ready' | 'unavailable' | 'error';

/** Jobs taken from /state; older ones page in through GET /jobs. */
export const STATE_JOBS = 500;
/** While the page is visible: replay the store's events since the last seen (a cheap
 * GET), which also notices a server that went away or came back. */
export const HEARTBEAT_MS = 5_000;
/** Every this many heartbeats the site rows are read again (snapshots at most 15 s old):
 * reachability and queue counts change without any event of ours. */
const SITES_EVERY = 3;

interface IReplay {
  emissions?: Emission[];
  last_seq: number;
  more: boolean;
}

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
    this._store = new DiamondStore(this.stats, {
      jobEnded: ended => this._jobEnded.emit(ended),
      approvalNeeded: task => this._approvalNeeded.emit(task),
      gap: () => this._schedule.gap()
    });
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
  /** The server's note that its sites file changed since it read it (null: it has not). */
  get sitesFileChanged(): string | null {
    return this._store.sitesFileChanged;
  }
  get connected(): boolean {
    return this._connected;
  }
  get lastSeq(): number {
    return this._store.lastSeq;
  }
  get settings(): ServerConnection.ISettings {
    return this._settings;
  }
  /** Site rows; "my jobs" counted live from the jobs held when all of them are. */
  get sites(): ISiteRow[] {
    return this._store.sites.map(row => {
      const mine = this._store.unfinishedAt(row.name);
      return mine === null || mine === row.my_jobs ? row : { ...row, my_jobs: mine };
    });
  }
  /** Unfinished jobs per site, from the jobs the model holds (live, unlike a site row's
   * my_jobs which is as old as its snapshot); null when older jobs are not loaded. */
  unfinishedAt(site: string): number | null {
    return this._store.unfinishedAt(site);
  }
  /** The loaded jobs, newest first (the latest STATE_JOBS plus live ones). */
  get jobs(): IJob[] {
    return this._store.jobs;
  }
  /** All jobs in the store (at least the loaded ones). */
  get jobsTotal(): number {
    return this._store.jobsTotal;
  }
  get tasks(): ITask[] {
    return this._store.tasks;
  }
  steps(taskId: string): IStep[] {
    return this._store.steps(taskId);
  }
  get activity(): IEvent[] {
    return this._store.activity;
  }
  /** Changes with every workflow event. */
  get workflowSeq(): number {
    return this._store.workflowSeq;
  }
  /** The job whose card should be revealed (from a notification). */
  get focusedJob(): string | null {
    return this._focused;
  }
  get isDisposed(): boolean {
    return this._disposed;
  }

  getJob(id: string): IJob | undefined {
    return this._store.getJob(id);
  }

  getTask(id: string): ITask | undefined {
    return this._store.getTask(id);
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
    this._schedule.clearRetry();
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
    this._schedule.retry();
  }

  /** Whether the event socket is open: while it is not, what is shown may be stale. */
  get streaming(): boolean {
    return this._streaming;
  }

  /** The event socket closed: events reach the page only through the heartbeat now. */
  onStreamClosed(): void {
    if (this._streaming && !this._disposed) {
      this._streaming = false;
      this._notify();
    }
  }

  /** The event socket (re)opened: catch up on the events stored while it was closed. */
  onStreamOpened(): void {
    if (this._streaming || this._disposed) {
      return;
    }
    this._streaming = true;
    this._notify();
    if (this._status === 'ready' && !this._fetching && this._catchUp === null) {
      // Live events that come before the replay is in wait for it: applied first, one
      // newer than the last seen would look like a gap (a reload of /state) and the
      // missed events' activity lines would be lost.
      this._catchUp = [];
      this._replay()
        .catch(() => void this.refresh())
        .finally(() => this._endCatchUp());
    }
  }

  /** The replay after a reconnect is in (or failed): deliver the live events it held, in
   * sequence order; the store drops the ones the replay already applied (same seq). */
  private _endCatchUp(): void {
    const held = this._catchUp ?? [];
    this._catchUp = null;
    held.sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
    for (const emission of held) {
      this._deliver(emission);
    }
  }

  /** Handle one message from the event stream. */
  handleEvent(emission: Emission): void {
    const schema = emission.schema_id;
    if (this._disposed || !schema || !schema.startsWith(EVENT_PREFIX)) {
      return;
    }
    this.stats.received++;
    if (typeof emission.seq === 'number') {
      this.stats.noteSeq(emission.seq);
    }
    if (this._catchUp !== null) {
      this._catchUp.push(emission);
      return;
    }
    this._deliver(emission);
  }

  /** Apply one live emission, or queue it while /state is being fetched. */
  private _deliver(emission: Emission): void {
    if (this._disposed) {
      return;
    }
    if (this._fetching) {
      // Replayed once the snapshot is in, so nothing newer is overwritten.
      this._queue.push(emission);
      return;
    }
    this._store.apply(emission);
    this._notify();
  }

  /** Make sure the model knows job `id` (a notebook card may show an old one). */
  async ensureJob(id: string): Promise<void> {
    if (this._store.getJob(id) || this._asked.has(id) || this._disposed) {
      return;
    }
    this._asked.add(id);
    try {
      const job = await requestAPI<IJob>(`jobs/${encodeURIComponent(id)}`, {}, this._settings);
      if (job && job.id) {
        this._store.addJobs([job]);
        this._store.alias(id, job.id); // a provisional id resolves to the job found
        this._notify();
      }
    } catch {
      this._asked.delete(id); // unknown here (or the server is away): asked again later
    }
  }

  /** Apply a Job returned by an action (e.g. cancel). */
  updateJob(job: IJob): void {
    if (job && job.id) {
      this._store.updateJob(job);
      this._notify();
    }
  }

  /** Add older jobs paged in from GET /jobs (live events keep them current). */
  addJobs(jobs: IJob[]): void {
    this._store.addJobs(jobs);
    this._notify();
  }

  /** Record the decision on a task locally (the server's events follow). */
  updateTask(id: string, patch: Partial<ITask>): void {
    if (this._store.updateTask(id, patch)) {
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

  /** Start the heartbeat (the plugin does; tests of the store alone do not). */
  startHeartbeat(): void {
    if (this._beat === 0 && !this._disposed) {
      this._beat = window.setInterval(() => void this._heartbeat(), HEARTBEAT_MS);
      document.addEventListener('visibilitychange', this._onWake);
    }
  }

  private async _heartbeat(): Promise<void> {
    if (this._disposed || this._fetching || this._beating || document.hidden ||
        this._status === 'unavailable') {
      return;
    }
    if (!this._connected) {
      return this.refresh(); // the server was away: try now rather than after the backoff
    }
    this._beating = true;
    try {
      if (!(await this._replay())) {
        return;
      }
      if (++this._beats % SITES_EVERY === 0) {
        const state = await fetchState(this._settings, 1, 15);
        this._store.setSites(state.sites ?? [], state.sites_file_changed);
        this._notify();
      }
    } catch (err) {
      if ((err as DiamondApiError).status === 0) {
        this.onDisconnect(); // network error: the server is away
      }
    } finally {
      this._beating = false;
    }
  }

  /** Apply the stored events since the last seen (GET events); false when too far behind,
   * and /state is fetched again instead. */
  private async _replay(): Promise<boolean> {
    const since = this._store.lastSeq;
    const r = await requestAPI<IReplay>(
      `events?since=${since}&limit=500&emissions=1`,
      {},
      this._settings
    );
    this.stats.heartbeats++;
    if (r.more || r.last_seq < since) {
      // far behind, or a different store (the server restarted on another database)
      void this.refresh();
      return false;
    }
    let replayed = 0;
    for (const emission of r.emissions ?? []) {
      if (typeof emission.seq === 'number' && emission.seq > this._store.lastSeq) {
        this._store.apply(emission);
        replayed++;
      }
    }
    if (replayed) {
      this.stats.replayed += replayed;
      this._notify();
    }
    return true;
  }

  /** The tab is shown again (a hidden tab skips its heartbeats, and its socket may have
   * died unseen while the machine slept): catch up now, not at the next beat. */
  private _onWake = (): void => {
    if (!document.hidden) {
      void this._heartbeat();
    }
  };

  dispose(): void {
    window.clearInterval(this._beat);
    document.removeEventListener('visibilitychange', this._onWake);
    this._disposed = true;
    this._schedule.dispose();
    Signal.clearData(this);
  }

  private _notify(): void {
    if (!this._disposed) {
      this._frames.schedule();
    }
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
        this._schedule.retry();
      }
      this._notify();
      return;
    }
    this._fetchStart = t0;
    this._store.load(state);
    const queued = this._queue;
    this._queue = [];
    for (const emission of queued) {
      this._store.apply(emission);
    }
    this._schedule.resetBackoff();
    if (this._recovering) {
      this._recovering = false;
      this._schedule.catchUp();
    }
    this._status = state.error ? 'error' : 'ready';
    this._error = state.error ? `Diamond is not configured: ${state.error}` : null;
    this._connected = true;
    this._notify();
  }

  private _settings: ServerConnection.ISettings;
  private _changed = new Signal<this, void>(this);
  private _jobEnded = new Signal<this, IJobEnded>(this);
  private _approvalNeeded = new Signal<this, ITask>(this);
  private _status: Status = 'loading';
  private _error: string | null = null;
  private _connected = false;
  private _streaming = true;
  private _store: DiamondStore;
  private _focused: string | null = null;
  private _schedule = new RefreshScheduler(
    () => void this.refresh(),
    () => this.stats.resyncs++
  );
  private _frames = new FrameCoalescer(() => {
    this.stats.renders++;
    this._changed.emit();
  });
  private _fetching: Promise<void> | null = null;
  private _fetchStart: number | null = null;
  private _queue: Emission[] = [];
  /** Live events held while the replay after a reconnect runs; null when none runs. */
  private _catchUp: Emission[] | null = null;
  private _recovering = false;
  private _disposed = false;
  private _asked = new Set<string>();
  private _beat = 0;
  private _beats = 0;
  private _beating = false;
}

export namespace DiamondModel {
  export interface IOptions {
    serverSettings?: ServerConnection.ISettings;
  }
}
