import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { DiamondApiError } from '../api';
import { fetchDashboard } from './api';
import { IDashboard } from './types';

/** While the dashboard is shown, its queues are read again this often (the server answers
 * from the snapshots it keeps; nothing extra runs on the login nodes). */
export const DASHBOARD_POLL_MS = 15_000;

/** Timings of the dashboard, `window.__diamondDashboard` for the UI tests and benchmark. */
export interface IDashboardStats {
  fetches: number;
  /** ms of the last GET /dashboard (request to parsed JSON). */
  fetchMs: number | null;
  /** ms from the first GET /dashboard request to the queue tables painted. */
  firstPaintMs: number | null;
  lastPaintMs: number | null;
  /** ms from the last answer parsed to its tables rendered (React's commit). */
  commitMs: number | null;
  /** Queue rows in the last answer, over all sites. */
  rows: number;
}

/** The dashboard's queues: GET /dashboard on show, then every DASHBOARD_POLL_MS while
 * shown (never while the page is hidden). */
export class DashboardModel {
  readonly stats: IDashboardStats = {
    fetches: 0,
    fetchMs: null,
    firstPaintMs: null,
    lastPaintMs: null,
    commitMs: null,
    rows: 0
  };

  constructor(readonly settings: ServerConnection.ISettings) {
    (window as unknown as { __diamondDashboard: IDashboardStats }).__diamondDashboard =
      this.stats;
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }
  get data(): IDashboard | null {
    return this._data;
  }
  get error(): string | null {
    return this._error;
  }
  get loading(): boolean {
    return this._fetching !== null;
  }

  async refresh(): Promise<void> {
    if (this._fetching) {
      return this._fetching;
    }
    this._fetching = this._fetch().finally(() => {
      this._fetching = null;
      this._changed.emit();
    });
    this._changed.emit();
    return this._fetching;
  }

  /** Poll while shown; the first call also fetches now. */
  start(): void {
    if (this._timer === 0) {
      void this.refresh();
      this._timer = window.setInterval(() => {
        if (!document.hidden) {
          void this.refresh();
        }
      }, DASHBOARD_POLL_MS);
    }
  }

  stop(): void {
    window.clearInterval(this._timer);
    this._timer = 0;
  }

  /** The tables of the last answer were rendered (before the browser paints them). */
  noteCommitted(): void {
    if (this._parsed !== null) {
      this.stats.commitMs = performance.now() - this._parsed;
      this._parsed = null;
    }
  }

  /** The tables of the answer fetched at `_t0` were painted. */
  notePainted(): void {
    if (this._t0 === null) {
      return;
    }
    const ms = performance.now() - this._t0;
    this._t0 = null;
    this.stats.lastPaintMs = ms;
    if (this.stats.firstPaintMs === null) {
      this.stats.firstPaintMs = ms;
      performance.mark('diamond-dashboard-first-paint');
    }
  }

  dispose(): void {
    this.stop();
    Signal.clearData(this);
  }

  private async _fetch(): Promise<void> {
    const t0 = performance.now();
    this.stats.fetches++;
    try {
      const data = await fetchDashboard(this.settings);
      this._parsed = performance.now();
      this.stats.fetchMs = this._parsed - t0;
      this.stats.rows = data.sites.reduce((n, s) => n + s.queue.length, 0);
      this._data = data;
      this._error = null;
      this._t0 = t0;
    } catch (err) {
      const e = err as DiamondApiError;
      this._error = e.notInstalled
        ? 'This server has no dashboard route (GET /diamond/api/dashboard returned 404).'
        : `Could not load the queues: ${e.message}`;
    }
  }

  private _changed = new Signal<this, void>(this);
  private _data: IDashboard | null = null;
  private _error: string | null = null;
  private _fetching: Promise<void> | null = null;
  private _timer = 0;
  private _t0: number | null = null;
  private _parsed: number | null = null;
}
